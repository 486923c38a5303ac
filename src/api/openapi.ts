/** GET /openapi.json: an OpenAPI 3.1 document generated from the route table and its zod schemas. */
import { z } from 'zod';
import type { ZodType } from 'zod';
import type { Route } from '../http/server.js';
import { ErrorResponse } from './responses.js';

function toOpenApiPath(pattern: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = pattern.replace(/:([A-Za-z_]+)/g, (_m, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path, params };
}

/** The path parameters that are context ids (V2 spells it contextId, V1 context_id); the others are message ids. */
const CONTEXT_ID_PARAMS = new Set(['contextId', 'context_id']);

/** A stable name for client generators: the method and the path's words, e.g. postV2EmotionsContextIdAnalysis. */
function operationId(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean).flatMap((w) => w.split('_'));
  return method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

const outputSchema = (schema: ZodType) => z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' });

/** What a 200 carries: JSON, except Prometheus text and, for chat with `stream: true`, server-sent events. */
function successContent(r: Route): Record<string, unknown> {
  if (r.pattern === '/metrics') return { 'text/plain': { schema: { type: 'string' } } };
  const json = { 'application/json': { schema: r.responseSchema ? outputSchema(r.responseSchema) : { type: 'object' } } };
  if (!r.streamSchema) return json;
  // OpenAPI 3.1 cannot type the events of a stream: the schema of each `data:` line is given beside it.
  const events = {
    schema: { type: 'string' },
    'x-sentio-event-schema': outputSchema(r.streamSchema),
  };
  return { ...json, 'text/event-stream': events };
}

/** The byte limits of ids and keys this server enforces (SENTIO_MAX_*_BYTES): the document states this server's, not the defaults. */
export interface IdLimits {
  contextIdBytes: number;
  externalIdBytes: number;
  idempotencyKeyBytes: number;
}

const idempotencyKey = (max: number) => ({
  name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: max, pattern: '^[!-~]+$' },
  description: `Visible ASCII, at most ${max} bytes (SENTIO_MAX_IDEMPOTENCY_KEY_BYTES): a retry with the same key and body is answered from the first response (docs/security.md)`,
});

/** Response headers (docs/api.md, Transport; docs/security.md): each defined once, referenced by the responses that carry it. */
const HEADERS = {
  'x-request-id': { description: 'The id in error bodies and in the request\'s log line', schema: { type: 'string' } },
  'x-inference-time': { description: 'Milliseconds the request waited for the engine (queue and inference), on any reply that used it (errors included); absent on idempotent replays and streams', schema: { type: 'string' } },
  'ratelimit-limit': { description: 'The key\'s quota: tokens per minute, the size of its bucket (IETF RateLimit headers; docs/security.md)', schema: { type: 'integer' } },
  'ratelimit-remaining': { description: 'Tokens left in the key\'s bucket; a request costs one, a chat turn two, a batch one per 64 texts begun', schema: { type: 'integer' } },
  'ratelimit-reset': { description: 'Seconds until the key\'s bucket is full again (on a 429, Retry-After says when one more request fits)', schema: { type: 'integer' } },
  'idempotent-replayed': { description: '"true" when the response is the stored answer to an earlier request with the same Idempotency-Key', schema: { type: 'string' } },
  'www-authenticate': { description: '"Bearer", on every 401 (RFC 9110): the scheme the API takes (x-api-key works too)', schema: { type: 'string' } },
  'allow': { description: 'The methods the path takes, on 405 method_not_allowed', schema: { type: 'string' } },
  'accept-encoding': { description: '"identity", on the 415 for a compressed body (Content-Encoding other than identity)', schema: { type: 'string' } },
  'cache-control': { description: '"no-cache", on a text/event-stream reply', schema: { type: 'string' } },
  'retry-after': { description: 'Seconds to wait before retrying: on 429 rate_limit_exceeded and upstream_rate_limited, 503 overloaded and service_unavailable, 409 idempotency_key_in_use, and a 502 upstream_error that passes on the upstream\'s (docs/errors.md)', schema: { type: 'integer' } },
} as const;
type HeaderName = keyof typeof HEADERS;
/** A response's headers: references, except where `required` must be said (a reference takes no sibling fields). */
const ref = (names: readonly HeaderName[], required: readonly HeaderName[] = []) =>
  Object.fromEntries(names.map((n) => [n, required.includes(n) ? { ...HEADERS[n], required: true } : { $ref: `#/components/headers/${n}` }]));

/** Headers of a route's 200: every reply has a request id; a keyed request the rate limit's; a POST with a key may be a replay. */
function successHeaders(r: Route): Record<string, unknown> {
  const names: HeaderName[] = ['x-request-id'];
  if (r.auth) names.push('ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset');
  if (r.auth && r.method === 'post') names.push('x-inference-time', 'idempotent-replayed');
  if (r.streamSchema) names.push('cache-control');
  return ref(names, names.filter((n) => n === 'x-request-id' || n.startsWith('ratelimit-')));
}

/** Headers an error status always carries besides x-request-id (docs/errors.md), and those it may. */
const ERROR_HEADERS: Record<string, { always: readonly HeaderName[]; may?: readonly HeaderName[] }> = {
  '401': { always: ['www-authenticate'] },
  '409': { always: ['retry-after'] },
  '415': { always: [], may: ['accept-encoding'] },
  '429': { always: ['retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'] },
};

/** An error response: the Error body and the headers an error on this route carries. */
function errorResponse(r: Route, description: string, status?: string): Record<string, unknown> {
  const { always = [], may = [] } = (status && ERROR_HEADERS[status]) || {};
  const names = new Set<HeaderName>(['x-request-id', ...always, ...may, 'retry-after']);
  if (r.auth) for (const n of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'] as const) names.add(n);
  if (r.auth && r.method === 'post') names.add('x-inference-time');
  return {
    description,
    headers: ref([...names], ['x-request-id', ...always]),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
}

/** The 400 codes a route can answer (docs/errors.md): the body's, the Idempotency-Key's, the path's. */
function badRequestCodes(r: Route, hasPathParams: boolean): string[] {
  const chat = r.pattern.endsWith('/chat/completions');
  const codes: string[] = [];
  if (r.method === 'post') {
    codes.push('invalid_json', 'invalid_encoding', 'missing_field', 'invalid_type', 'invalid_value', 'unknown_field', 'invalid_model');
    codes.push(...(chat ? ['invalid_role', 'context_id_too_long', 'upstream_rejected'] : ['external_id_too_long']));
    if (r.auth) codes.push('idempotency_key_invalid');
  }
  if (hasPathParams) codes.push('invalid_path_parameter', 'invalid_value', 'context_id_too_long', ...(r.pattern.includes(':message') ? ['external_id_too_long'] : []));
  return [...new Set(codes)];
}

/** The statuses a route can answer with besides 200, and their codes (docs/errors.md), for client generators. */
function errorStatuses(r: Route, hasPathParams: boolean): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const chat = r.pattern.endsWith('/chat/completions');
  if (r.method === 'post' || hasPathParams) out.push(['400', badRequestCodes(r, hasPathParams).join(', ')]);
  if (r.auth) out.push(['401', 'missing_api_key, invalid_api_key']);
  if (hasPathParams && r.method === 'get') out.push(['404', 'context_not_found, message_not_found']);
  if (chat) out.push(['404', 'model_not_found']);
  if (r.method === 'post' && r.auth) {
    out.push(['409', 'idempotency_key_in_use (Retry-After)']);
    out.push(['413', 'body_too_large, message_too_large, too_many_messages']);
    out.push(['415', 'unsupported_media_type']);
    out.push(['422', 'idempotency_key_reused']);
  }
  if (r.auth) out.push(['429', chat ? 'rate_limit_exceeded, upstream_rate_limited (Retry-After)' : 'rate_limit_exceeded (Retry-After)']);
  if (chat) out.push(['502', 'upstream_error'], ['504', 'upstream_timeout']);
  const llm = chat || r.pattern.endsWith('/models');
  if (r.auth && r.shed !== false) out.push(['503', llm ? 'overloaded, service_unavailable, llm_not_configured' : 'overloaded, service_unavailable']);
  if (r.pattern === '/readyz') out.push(['503', 'not_ready: loading, or shutting down']);
  return out;
}

function buildOpenApi(routes: readonly Route[], limits: IdLimits): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const { path, params } = toOpenApiPath(r.pattern);
    const parameters: Array<Record<string, unknown>> = params.map((name) => ({
      name, in: 'path', required: true, schema: { type: 'string' },
      description: `Percent-decoded; at most ${CONTEXT_ID_PARAMS.has(name) ? limits.contextIdBytes : limits.externalIdBytes} bytes of UTF-8`,
    }));
    if (r.method === 'post' && r.auth) parameters.push(idempotencyKey(limits.idempotencyKeyBytes));
    const statuses = errorStatuses(r, params.length > 0);
    const op: Record<string, unknown> = {
      operationId: operationId(r.method, path),
      summary: r.summary ?? `${r.method.toUpperCase()} ${path}`,
      parameters,
      responses: {
        '200': { description: 'Success', headers: successHeaders(r), content: successContent(r) },
        ...Object.fromEntries(statuses.map(([status, description]) => [status, errorResponse(r, description, status)])),
        default: errorResponse(r, 'Any other error (docs/errors.md)'),
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
    // HEAD is answered on every GET path: the same status and headers, no body (docs/api.md).
    if (r.method === 'get') {
      const bodiless = Object.fromEntries(Object.entries(op['responses'] as Record<string, { description: string; headers: unknown }>)
        .map(([status, { description, headers }]) => [status, { description: `${description}; no body`, headers }]));
      paths[path]!['head'] = {
        ...op, operationId: operationId('head', path), summary: `${op['summary'] as string} (headers only)`, responses: bodiless,
      };
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Sentio', version: '0.1.0',
      description: 'Emotion analysis and emotion-aware chat. The request and response schemas give shapes and types; limits and rules across ' +
        'fields are not in them: model names (emotion-v1, emotion-v2; chat models from SENTIO_LLM_MODELS), byte limits on texts ' +
        'and ids, message counts (413), an assistant message needing content, tool_calls, refusal or function_call, a chat needing a ' +
        'user message, a sampling parameter given both at the top level and in model_params. A method a path does not take ' +
        '(OPTIONS included) is answered 405 method_not_allowed with an Allow header naming those it takes (401 first without a ' +
        'key). A GET on a POST-only analysis path ' +
        '(/v2/emotions/analysis) reads a context of that name. See docs/api.md, docs/chat.md and docs/errors.md.',
    },
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        bearer: { type: 'http', scheme: 'bearer' },
      },
      schemas: {
        Error: outputSchema(ErrorResponse),
      },
      headers: HEADERS,
    },
  };
}

export function openApiRoute(routes: readonly Route[], limits: IdLimits): Route {
  let doc: Record<string, unknown> | undefined;
  return {
    method: 'get', pattern: '/openapi.json', auth: true, summary: 'This document',
    handler: () => {
      doc ??= buildOpenApi(routes, limits);
      return { status: 200, body: doc };
    },
  };
}
