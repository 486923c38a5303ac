/** The engine the HTTP tests run against: the real model. */
import type { AnalysisEngine } from '../../src/app.js';
import { OrtJsScorer } from '../../bench/peer/ort-scorer.js';

// TEMPORARY until the native engine lands: the JS runtime on the same model.
export async function testEngine(): Promise<AnalysisEngine> {
  const scorer = await OrtJsScorer.load('models/emotion', 1);
  return {
    labels: scorer.labels,
    analyze: (texts) => scorer.analyze(texts),
    describe: () => ({ provider: 'cpu' }),
    close: () => scorer.close(),
  };
}
