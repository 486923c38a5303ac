/**
 * What the small eval scripts share: a file of the repository found from the code, and the texts read as
 * Sentio serves them (native engine, then the V2 EQ formula) on a given model, printed as one JSON line.
 */
import { existsSync } from 'node:fs';
import { createEngine } from '../../src/engine/engine.js';
import { ScoreMapper } from '../../src/core/emotions.js';
import { computeEq } from '../../src/core/eq.js';
import type { Eq } from '../../src/core/eq.js';
import { repoPathCandidates } from '../../src/repo-paths.js';

/** The repository's file at `parts`, wherever the script was started from. */
export function repoFile(...parts: string[]): string {
  const file = repoPathCandidates(...parts).find((f) => existsSync(f));
  if (!file) throw new Error(`${parts.join('/')} not found`);
  return file;
}

/** Reads texts as Sentio serves them: each text's EQ reading, in order. */
export type ServedReader = (texts: string[]) => Promise<Eq[]>;

/**
 * Loads the model in `modelDir`, runs `measure` with a reader of it, prints `{ model, ...result }` as one
 * JSON line and closes the engine; any failure is printed and exits 1.
 */
export function printServedReading(modelDir: string, measure: (read: ServedReader) => Promise<Record<string, unknown>>): void {
  const run = async () => {
    const engine = await createEngine({ modelDir });
    try {
      const mapper = new ScoreMapper(engine.labels);
      const read: ServedReader = async (texts) => (await engine.analyze(texts)).map((o) => computeEq(mapper.toScores(o)));
      console.log(JSON.stringify({ model: engine.info.model.version, ...(await measure(read)) }));
    } finally {
      await engine.close();
    }
  };
  run().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
