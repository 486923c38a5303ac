/**
 * How the six-way branch reads statements of crisis and despair, as Sentio serves it (native engine):
 * the crisis sentences of models/crisis/sentences.json, whose positives ("I want to kill myself") are
 * someone in danger. Up to model 1.4.0 many of them read as love or joy, since dair-ai's "i want ..." and
 * "i feel ..." sentences carry those labels (models/emotion/MODEL.md).
 *   npm run eval:distress [-- --model DIR] [--wrong]
 * Prints one JSON line: per set kind (development, held_out) the positives' categories and how many read
 * as a distress emotion (sadness, fear or anger), and the negatives' categories (safe sentences that share
 * the words: "I killed it at the gym"), so that a change which reads every "kill" as sadness shows too.
 * Positives that the six-way training templates can write word for word are counted apart
 * (`template_overlap`), as they measure what was taught, not what was learned.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { EMOTIONS } from '../src/core/emotions.js';
import { printServedReading, repoFile } from './lib/served-reading.js';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: join(process.cwd(), 'models', 'emotion') },
    wrong: { type: 'boolean', default: false },
  },
});

const DISTRESS = new Set(['sadness', 'fear', 'anger']);

interface SentenceSet { name: string; use: string; positives?: string[]; negatives?: string[] }

/** Every sentence a models/train/distress.json pattern can give: each "(a|b|)" group's alternatives in turn. */
function expand(pattern: string): string[] {
  const parts = pattern.split(/(\([^)]*\))/).map((p) => (p.startsWith('(') ? p.slice(1, -1).split('|') : [p]));
  return parts.reduce<string[]>((acc, alts) => acc.flatMap((a) => alts.map((b) => a + b)), ['']);
}

/** Normalised as the templates compare them: lower case, letters, digits and apostrophes. */
const norm = (t: string) => t.toLowerCase().replace(/[’]/g, "'").replace(/[^a-z0-9' ]+/g, ' ').replace(/\s+/g, ' ').trim();

printServedReading(values.model, async (read) => {
  const sets = (JSON.parse(readFileSync(repoFile('models', 'crisis', 'sentences.json'), 'utf8')) as { sets: SentenceSet[] }).sets;
  const patterns = JSON.parse(readFileSync(repoFile('models', 'train', 'distress.json'), 'utf8')) as Record<string, string[]>;
  const templates = new Set(Object.values(patterns).flat().flatMap(expand).map(norm));
  const categories = async (texts: string[]) => (await read(texts)).map((q) => q.category);
  const count = (cats: string[]) => Object.fromEntries(EMOTIONS.map((e) => [e, cats.filter((c) => c === e).length]));
  const result: Record<string, unknown> = {};
  for (const use of ['development', 'held_out', 'everyday']) {
    const chosen = sets.filter((s) => s.use === use);
    const all = chosen.flatMap((s) => s.positives ?? []);
    const positives = all.filter((t) => !templates.has(norm(t)));
    const negatives = chosen.flatMap((s) => s.negatives ?? []);
    const pos = await categories(positives);
    const neg = await categories(negatives);
    const distress = pos.filter((c) => DISTRESS.has(c)).length;
    result[use] = {
      positives: positives.length,
      template_overlap: all.length - positives.length,
      positives_read_as_distress: distress,
      share: positives.length ? Math.round((distress / positives.length) * 1000) / 1000 : null,
      positive_categories: count(pos),
      negatives: negatives.length,
      negative_categories: count(neg),
    };
    if (values.wrong) {
      for (const [k, t] of positives.entries()) if (!DISTRESS.has(pos[k]!)) console.error(`${use}: ${t} -> ${pos[k]}`);
    }
  }
  return result;
});
