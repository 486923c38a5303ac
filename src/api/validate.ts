/** zod results → AppError: the first issue decides the code, `param` names the field as a path. */
import type { z } from 'zod';
import { AppError } from '../errors.js';
import type { ErrorCode } from '../errors.js';

export function paramPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out;
}

export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  let path = [...issue.path];
  let code: ErrorCode = 'invalid_value';
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    code = 'unknown_field';
    path = [...path, issue.keys[0] ?? ''];
    message = `unknown field ${paramPath(path)}`;
  } else if (issue.code === 'invalid_type') {
    const actual = valueAt(value, issue.path);
    const missing = actual === undefined;
    // JSON.parse reads 1e400 as Infinity: a number, out of any range.
    const infinite = typeof actual === 'number' && !Number.isFinite(actual);
    code = missing ? 'missing_field' : infinite ? 'invalid_value' : 'invalid_type';
    message = missing ? `${paramPath(path)} is required` : infinite ? `${paramPath(path)}: out of range` : `${paramPath(path)}: expected ${issue.expected}`;
  } else if (wrongKindOfValue(issue, valueAt(value, issue.path))) {
    // A discriminator (a chat message's role) or an enum member: absent is missing, another JSON type
    // is a type error; only a value of the right type that is not allowed stays invalid_value.
    const actual = valueAt(value, issue.path);
    code = actual === undefined ? 'missing_field' : 'invalid_type';
    message = actual === undefined ? `${paramPath(path)} is required` : `${paramPath(path)}: expected a string`;
  } else {
    message = `${paramPath(path)}: ${issue.message}`;
  }
  throw new AppError(code, message, { param: paramPath(path) || undefined });
}

function wrongKindOfValue(issue: z.core.$ZodIssue, actual: unknown): boolean {
  const discriminator = issue.code === 'invalid_union' && 'discriminator' in issue && issue.discriminator !== undefined;
  const stringEnum = issue.code === 'invalid_value' && issue.values.every((v) => typeof v === 'string');
  return (discriminator || stringEnum) && typeof actual !== 'string';
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, seg as string)) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}
