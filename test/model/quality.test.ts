/**
 * Quality guard for the committed model, through onnxruntime-node and the JS tokenizer: dair-ai val
 * accuracy and macro-F1 bars, plus behaviour a chat user would notice (negation, emoji, intensity).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatStyle } from '../../scripts/lib/chat-style.js';
import { readDair } from '../../scripts/lib/datasets.js';
import { OrtEmotionModel, argmaxRow } from '../../scripts/lib/ort-model.js';
import { classification } from '../../scripts/lib/scores.js';

const root = join(import.meta.dirname, '..', '..');
const dairVal = join(root, '..', 'shared', 'data', 'dair-ai-emotion', 'val.txt');
const fixtures = JSON.parse(readFileSync(join(import.meta.dirname, 'behaviour-fixtures.json'), 'utf8')) as {
  top: { text: string; label: string }[];
  notTop: { text: string; label: string }[];
  pairs: { label: string; mild: string; strong: string }[];
};

let model: OrtEmotionModel;
let labels: string[];

beforeAll(async () => {
  model = await OrtEmotionModel.load(join(root, 'models', 'emotion'), 2);
  labels = model.manifest.outputs.emotions.labels;
});
afterAll(async () => {
  await model.dispose();
});

/** Six-way distribution of one text, as a label -> probability map. */
async function dist(text: string): Promise<Record<string, number>> {
  const out = await model.run([text]);
  return Object.fromEntries(labels.map((l, i) => [l, out.emotions[i] ?? 0]));
}

function top(d: Record<string, number>): string {
  return Object.entries(d).reduce((a, b) => (b[1] > a[1] ? b : a))[0];
}

function entropy(d: Record<string, number>): number {
  return -Object.values(d).reduce((s, p) => s + (p > 0 ? p * Math.log(p) : 0), 0);
}

// The bar on dair-ai val (models/emotion/MODEL.md): accuracy >= 0.93, macro-F1 >= 0.90, love F1 >= 0.80,
// surprise F1 >= 0.78. The shipped model must hold it; a retrained model that does not fails here.
const BAR = { accuracy: 0.93, macroF1: 0.9, love: 0.8, surprise: 0.78 };
// Without ../shared/data these bars were skipped and the run stayed green, having checked nothing: the data
// must be there (as for test/native/parity.test.ts), unless a run opts out by name with
// SENTIO_TEST_SKIP_DAIR_VAL=1.
const skipVal = process.env['SENTIO_TEST_SKIP_DAIR_VAL'] === '1';

// Scored once per style: the bar test and the chat-spelling test share the plain pass.
const scored = new Map<string, ReturnType<typeof scoreDairValOnce>>();
function scoreDairVal(style: 'plain' | 'chat' = 'plain') {
  let s = scored.get(style);
  if (!s) scored.set(style, (s = scoreDairValOnce(style)));
  return s;
}

async function scoreDairValOnce(style: 'plain' | 'chat') {
  expect(existsSync(dairVal), `${dairVal} is missing (set SENTIO_TEST_SKIP_DAIR_VAL=1 to skip the dair-ai val bars)`).toBe(true);
  const rows = readDair(dairVal);
  const out = await model.runAll(rows.map((r, i) => (style === 'chat' ? chatStyle(r.text, i) : r.text)), 64);
  const gold = rows.map((r) => labels.indexOf(r.label));
  const pred = rows.map((_, i) => argmaxRow(out.emotions, i, labels.length));
  return classification(gold, pred, labels);
}

describe('emotion model quality (dair-ai val)', () => {
  it.skipIf(skipVal)(`reaches ${BAR.accuracy} accuracy and ${BAR.macroF1} macro-F1, love and surprise F1 ${BAR.love} / ${BAR.surprise}`, async () => {
    const m = await scoreDairVal();
    expect(m.accuracy).toBeGreaterThanOrEqual(BAR.accuracy);
    expect(m.macro_f1).toBeGreaterThanOrEqual(BAR.macroF1);
    expect(m.per_class_f1.love ?? 0).toBeGreaterThanOrEqual(BAR.love);
    expect(m.per_class_f1.surprise ?? 0).toBeGreaterThanOrEqual(BAR.surprise);
  });

  // dair-ai's text is lower-case without punctuation; users write "I'm ... !". The same sentences written
  // that way must score as well (within 3 sentences in 1,000), or training has taught the model to
  // expect dair-ai's spelling.
  it.skipIf(skipVal)('scores the same sentences written as chat (apostrophes, capitals, punctuation) as well', async () => {
    const plain = await scoreDairVal();
    const chat = await scoreDairVal('chat');
    expect(chat.accuracy).toBeGreaterThanOrEqual(plain.accuracy - 0.003);
    expect(chat.macro_f1).toBeGreaterThanOrEqual(plain.macro_f1 - 0.003);
  });
});

describe('emotion model behaviour', () => {
  it.each(fixtures.top)('$text -> $label', async ({ text, label }) => {
    expect(top(await dist(text))).toBe(label);
  });

  it.each(fixtures.notTop)('$text is not $label-dominant', async ({ text, label }) => {
    expect(top(await dist(text))).not.toBe(label);
  });

  it.each(fixtures.pairs)('"$strong" is more extreme than "$mild"', async ({ label, mild, strong }) => {
    const a = await dist(mild);
    const b = await dist(strong);
    expect(b[label] ?? 0).toBeGreaterThan(a[label] ?? 0);
    expect(entropy(b)).toBeLessThan(entropy(a));
  });

  // GoEmotions hardly shows emoji: up to 1.3.0 the sub-emotion branch read them as neutral (😡 alone:
  // 0.998), and intensity, scaled by 1 - neutral, fell to nothing (models/emotion/MODEL.md).
  it.each(fixtures.top.filter((f) => !/\p{L}/u.test(f.text)))('$text is not read as neutral', async ({ text }) => {
    const neutral = model.manifest.outputs.sub_emotions.labels.indexOf('neutral');
    const out = await model.run([text]);
    expect(out.sub[neutral] ?? 1).toBeLessThan(0.5);
  });

  it('gives a text the same outputs alone and in a mixed-length batch', async () => {
    const text = 'I feel a little lost but hopeful 🙂';
    const alone = await model.run([text]);
    const mixed = await model.run(['ok', text, 'a much longer message that pads the batch '.repeat(6)]);
    for (let j = 0; j < 6; j++) expect(Math.abs((alone.emotions[j] ?? 0) - (mixed.emotions[6 + j] ?? 0))).toBeLessThan(1e-5);
    for (let j = 0; j < 28; j++) expect(Math.abs((alone.sub[j] ?? 0) - (mixed.sub[28 + j] ?? 0))).toBeLessThan(1e-5);
    for (let j = 0; j < 2; j++) expect(Math.abs((alone.va[j] ?? 0) - (mixed.va[2 + j] ?? 0))).toBeLessThan(1e-5);
  });

  it('keeps valence and arousal in range and positive texts above negative ones', async () => {
    const out = await model.run(['I am so happy and grateful today!', 'This is the worst day of my life.']);
    // [valence, arousal] per text: valence in [-1, 1], arousal in [0, 1] (the model card's scales)
    for (let i = 0; i < out.va.length; i += 2) {
      expect(Math.abs(out.va[i]!)).toBeLessThanOrEqual(1);
      expect(out.va[i + 1]!).toBeGreaterThanOrEqual(0);
      expect(out.va[i + 1]!).toBeLessThanOrEqual(1);
    }
    expect(out.va[0] ?? 0).toBeGreaterThan(out.va[2] ?? 0);
  });
});
