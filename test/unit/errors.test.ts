import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError, ERRORS, toErrorBody } from '../../src/errors.js';

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
});
