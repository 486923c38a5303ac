import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError, ERRORS, toErrorBody } from '../../src/errors.js';
import { EngineOverloadedError } from '../../src/engine/errors.js';

describe('error codes', () => {
  it('every code has a status, a type and a row in docs/errors.md', () => {
    const doc = readFileSync('docs/errors.md', 'utf8');
    for (const [code, { status, type }] of Object.entries(ERRORS)) {
      expect(doc, code).toContain(`| \`${code}\` | ${status} | ${type} |`);
    }
  });

  it('the body has the decided shape, param only when given', () => {
    expect(toErrorBody(new AppError('missing_field', 'messages is required', { param: 'messages' }), 'req_1')).toEqual({
      error: { type: 'invalid_request_error', code: 'missing_field', message: 'messages is required', param: 'messages' },
      request_id: 'req_1',
    });
    expect(toErrorBody(new AppError('internal_error', 'x'), 'req_2').error).not.toHaveProperty('param');
  });

  it('refusals capture no stack, keep their cause, and leave every other error its stack', () => {
    const cause = new Error('the store failed');
    const refusals = [new AppError('overloaded', 'busy', { cause }), new EngineOverloadedError('queue full')];
    for (const err of refusals) {
      expect(err.stack?.split('\n')).toHaveLength(1); // "Name: message", no frames
      expect(err).toBeInstanceOf(Error);
    }
    expect(refusals[0]!.cause).toBe(cause);
    expect(refusals[0]!.message).toBe('busy');
    expect(new Error('a fault').stack?.split('\n').length).toBeGreaterThan(1);
  });
});
