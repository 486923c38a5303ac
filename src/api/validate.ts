/** zod results → AppError: the first issue decides the code, `param` names the field as a path. */
import type { z } from 'zod';
import { AppError, paramPath } from '../errors.js';
import type { ErrorCode } from '../errors.js';

export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const { code, path, message } = describe(r.error.issues[0]!, value);
  // A field named "" is still a field: its param is "" (the root, an empty path, has none)
  throw new AppError(code, message, { param: path.length > 0 ? paramPath(path) : undefined });
}

function describe(issue: z.core.$ZodIssue, value: unknown): { code: ErrorCode; path: PropertyKey[]; message: string } {
  const path = [...issue.path];
  if (issue.code === 'unrecognized_keys') {
    const field = [...path, issue.keys[0] ?? ''];
    return { code: 'unknown_field', path: field, message: `unknown field ${paramPath(field) || '""'}` };
  }
  if (issue.code === 'invalid_type') {
    const actual = valueAt(value, issue.path);
    const missing = actual === undefined;
    // JSON.parse reads 1e400 as Infinity: a number, out of any range.
    const infinite = typeof actual === 'number' && !Number.isFinite(actual);
    const code = missing ? 'missing_field' : infinite ? 'invalid_value' : 'invalid_type';
    return { code, path, message: missing ? `${paramPath(path)} is required` : infinite ? `${paramPath(path)}: out of range` : `${paramPath(path)}: expected ${issue.expected}` };
  }
  if (wrongKindOfValue(issue, valueAt(value, issue.path))) {
    // A discriminator (a chat message's role) or an enum member: absent is missing, another JSON type
    // is a type error; only a value of the right type that is not allowed stays invalid_value.
    const actual = valueAt(value, issue.path);
    return actual === undefined
      ? { code: 'missing_field', path, message: `${paramPath(path)} is required` }
      : { code: 'invalid_type', path, message: `${paramPath(path)}: expected string` };
  }
  if (issue.code === 'invalid_union' && !('discriminator' in issue && issue.discriminator !== undefined)) {
    // A value of none of the alternatives' types is a type error; one that has the type of exactly one
    // alternative is judged by that alternative (params.thresholds: a number, or a map of numbers;
    // tool_choice: a word, or an object naming a function).
    const actual = valueAt(value, issue.path);
    const typed = issue.errors.filter((branch) => expectedType(branch[0], actual) === undefined);
    if (typed.length === 0) {
      const expected = issue.errors.map((branch) => expectedType(branch[0], actual)).join(' or ');
      return { code: 'invalid_type', path, message: `${paramPath(path)}: expected ${expected}` };
    }
    if (typed.length === 1) {
      const inner = typed[0]![0]!;
      return describe({ ...inner, path: [...path, ...inner.path] } as z.core.$ZodIssue, value);
    }
  }
  return { code: 'invalid_value', path, message: `${paramPath(path)}: ${issue.message}` };
}

/** The type a union's alternative wanted, where its first issue says the value is not of it at all. */
function expectedType(first: z.core.$ZodIssue | undefined, actual: unknown): string | undefined {
  if (!first || first.path.length > 0) return undefined;
  if (first.code === 'invalid_type') return first.expected;
  // An enum of words refuses another JSON type as a value it does not list: it is a type error.
  if (wordEnum(first) && typeof actual !== 'string') return 'string';
  return undefined;
}

/** An enum of words refusing a value (zod says invalid_value whatever the value's type). */
const wordEnum = (issue: z.core.$ZodIssue) => issue.code === 'invalid_value' && issue.values.every((v) => typeof v === 'string');

function wrongKindOfValue(issue: z.core.$ZodIssue, actual: unknown): boolean {
  const discriminator = issue.code === 'invalid_union' && 'discriminator' in issue && issue.discriminator !== undefined;
  return (discriminator || wordEnum(issue)) && typeof actual !== 'string';
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, seg as string)) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}
