/** Unauthenticated probes: /healthz (the process answers) and /readyz (the model is loaded). */
import { AppError } from '../errors.js';
import type { Route } from '../http/server.js';
import { HealthResponse, ReadyResponse } from './responses.js';

export interface Readiness {
  ready(): boolean;
  describe(): Record<string, unknown>;
}

export function healthRoutes(readiness: Readiness): Route[] {
  return [
    { method: 'get', pattern: '/healthz', auth: false, responseSchema: HealthResponse, handler: () => ({ status: 200, body: { status: 'ok' } }) },
    {
      method: 'get', pattern: '/readyz', auth: false, responseSchema: ReadyResponse,
      handler: () => {
        if (!readiness.ready()) throw new AppError('not_ready', 'the emotion model is not loaded yet, or the server is shutting down');
        return { status: 200, body: { status: 'ready', ...readiness.describe() } };
      },
    },
  ];
}
