/**
 * The learned crisis signal: the server's features and weights give exactly the probabilities the trainer
 * computed (models/crisis/golden.json), the shipped file is the one its manifest names, and it adds what the
 * rules miss on their own development data without raising false alarms there.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
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

  it('reads a crisis the rules have no pattern for, and not its everyday twin', () => {
    const m = crisisModel();
    expect(m.probability("I've made my peace with everything. Thanks for all the chats, take care of yourself.")).toBeGreaterThanOrEqual(m.threshold);
    expect(m.probability('Thanks for all the help with my CV, the interview went great!')).toBeLessThan(m.threshold);
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
    expect(performance.now() - t0).toBeLessThan(50);
  });
});
