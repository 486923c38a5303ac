/**
 * The learned crisis signal: the server's features and weights give exactly the probabilities the trainer
 * computed (models/crisis/golden.json), the shipped file is the one its manifest names, and it stays quiet on
 * everyday text.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readDair, readGoEmotions } from '../../scripts/lib/datasets.js';
import { CrisisModel, crisisModel } from '../../src/core/crisis-model.js';

const golden = JSON.parse(readFileSync(new URL('../../models/crisis/golden.json', import.meta.url), 'utf8')) as { text: string; p: number }[];
const manifest = JSON.parse(readFileSync(new URL('../../models/crisis/manifest.json', import.meta.url), 'utf8'));
const bin = readFileSync(new URL('../../models/crisis/model.bin', import.meta.url));

describe('crisis model', () => {
  it('reproduces the trainer on every golden text (features, hashing, weights)', () => {
    expect(golden.length).toBeGreaterThan(100);
    const m = crisisModel();
    for (const { text, p } of golden) expect(Math.abs(m.probability(text) - p), text.slice(0, 60)).toBeLessThan(1e-9);
  });

  // Version 1.5.0's threshold (0.35, for the recall everyday chat negatives had cost) flags 22 of the Reddit
  // comments (two of them "I wanna die" and "I dont want to live in this world no more") where 1.4.0 flagged 15.
  it('leaves everyday text alone: at most 0.3% of dair-ai val sentences and 0.45% of GoEmotions dev comments (never trained on)', () => {
    const m = crisisModel();
    const go = readGoEmotions(fileURLToPath(new URL('../../../shared/data/goemotions/dev.tsv', import.meta.url))).map((r) => r.text);
    const dair = readDair(fileURLToPath(new URL('../../../shared/data/dair-ai-emotion/val.txt', import.meta.url))).map((r) => r.text);
    expect([go.length, dair.length]).toEqual([5426, 2000]);
    for (const [texts, ceiling] of [[go, 0.0045], [dair, 0.003]] as const) {
      const flagged = texts.filter((t) => m.probability(t) >= m.threshold).length;
      expect(flagged / texts.length).toBeLessThanOrEqual(ceiling);
    }
  });

  it('refuses a model file that does not match its manifest', () => {
    const tampered = Buffer.from(bin);
    tampered[tampered.length - 1] = tampered[tampered.length - 1]! ^ 0xff;
    expect(() => new CrisisModel(tampered, manifest)).toThrow(/checksum/);
    expect(() => new CrisisModel(bin.subarray(0, 100), { ...manifest, files: { 'model.bin': { sha256: '0' } } })).toThrow();
  });

  it('costs little on the event loop, even for an 8 KB message of one repeated word', () => {
    const m = crisisModel();
    const t0 = performance.now();
    m.probability('pills '.repeat(1365));
    // A guard against work growing with the repeats without bound (seconds), not a speed claim: about 1 ms here.
    expect(performance.now() - t0).toBeLessThan(1_000);
  });
});
