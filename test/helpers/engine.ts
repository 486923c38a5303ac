/** The engine the HTTP tests run against: the real native engine on the real model. */
import type { AnalysisEngine } from '../../src/app.js';
import { createEngine } from '../../src/engine/engine.js';

export async function testEngine(overrides: Parameters<typeof createEngine>[0] = {}): Promise<AnalysisEngine> {
  return createEngine({ modelDir: 'models/emotion', executionProvider: 'cpu', ...overrides });
}
