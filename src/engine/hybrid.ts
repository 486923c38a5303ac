/**
 * executionProvider 'hybrid': two engines over one model, a call going to one by its number of texts.
 * A GPU run costs about the same for 32 texts as for 256, and the micro-batcher seldom gathers that many
 * single messages, so the host's CPUs serve single messages faster than the GPU while the GPU serves
 * batches faster than the CPUs (docs/gpu.md#hybrid). Each engine keeps its own queue, batcher and limits.
 */
import type { AnalyzeOptions, Engine, EngineInfo, EngineStats, TextScores } from './engine.js';

export class HybridEngine implements Engine {
  readonly info: EngineInfo;
  readonly labels: Engine['labels'];
  readonly #small: Engine;
  readonly #bulk: Engine;
  readonly #minTexts: number;

  /** `bulk` takes calls of at least `minTexts` texts (on a GPU host, the CUDA engine); `small` the rest. */
  constructor(small: Engine, bulk: Engine, minTexts: number) {
    this.#small = small;
    this.#bulk = bulk;
    this.#minTexts = minTexts;
    this.labels = small.labels;
    this.info = Object.freeze({ ...small.info, provider: 'hybrid', requestedProvider: 'hybrid', hybrid: { minTexts, bulk: bulk.info } });
  }

  analyze(texts: readonly string[], opts?: AnalyzeOptions): Promise<TextScores[]> {
    // Not an array: the small engine rejects it with the engine's usual input error.
    const bulk = Array.isArray(texts) && texts.length >= this.#minTexts;
    return (bulk ? this.#bulk : this.#small).analyze(texts, opts);
  }

  /** Both engines' counts added up (queue depth, batches and texts in flight, totals). */
  stats(): EngineStats {
    const a = this.#small.stats();
    const b = this.#bulk.stats();
    const sum = { ...a };
    for (const k of Object.keys(sum) as (keyof EngineStats)[]) {
      if (typeof a[k] === 'number') (sum as Record<string, unknown>)[k] = (a[k] as number) + (b[k] as number);
    }
    sum.closed = a.closed && b.closed;
    return sum;
  }

  describe(): Record<string, unknown> {
    return { ...this.#small.describe(), provider: 'hybrid', requestedProvider: 'hybrid', hybrid: { minTexts: this.#minTexts, bulk: this.#bulk.describe() } };
  }

  async close(opts?: { drain?: boolean }): Promise<void> {
    await Promise.all([this.#small.close(opts), this.#bulk.close(opts)]);
  }
}
