/** GET /openapi.json: an OpenAPI 3.1 document generated from the route table and its zod schemas. */
import { z } from 'zod';
import { ERRORS } from '../errors.js';
import type { Route } from '../http/server.js';

function toOpenApiPath(pattern: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = pattern.replace(/:([A-Za-z_]+)/g, (_m, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path, params };
}

export function buildOpenApi(routes: readonly Route[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const { path, params } = toOpenApiPath(r.pattern);
    const op: Record<string, unknown> = {
      summary: r.summary ?? `${r.method.toUpperCase()} ${path}`,
      parameters: params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string', maxLength: 128 } })),
      responses: {
        '200': { description: 'Success', content: { 'application/json': { schema: { type: 'object' } } } },
        default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    };
    if (r.auth) op['security'] = [{ apiKey: [] }, { bearer: [] }];
    if (r.requestSchema) {
      op['requestBody'] = {
        required: true,
        content: { 'application/json': { schema: z.toJSONSchema(r.requestSchema, { io: 'input', unrepresentable: 'any' }) } },
      };
    }
    (paths[path] ??= {})[r.method] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Sentio', version: '0.1.0', description: 'Emotion analysis and emotion-aware chat. See docs/ for field definitions.' },
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        bearer: { type: 'http', scheme: 'bearer' },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error', 'request_id'],
          properties: {
            error: {
              type: 'object',
              required: ['type', 'code', 'message'],
              properties: {
                type: { type: 'string', enum: [...new Set(Object.values(ERRORS).map((e) => e.type))] },
                code: { type: 'string', enum: Object.keys(ERRORS) },
                message: { type: 'string' },
                param: { type: 'string' },
              },
            },
            request_id: { type: 'string' },
          },
        },
      },
    },
  };
}

export function openApiRoute(routes: readonly Route[]): Route {
  let doc: Record<string, unknown> | undefined;
  return {
    method: 'get', pattern: '/openapi.json', auth: false, summary: 'This document',
    handler: () => {
      doc ??= buildOpenApi(routes);
      return { status: 200, body: doc };
    },
  };
}
