/**
 * How the served V2 intensity reads a short chat word followed by emoji, as Sentio serves it (native
 * engine, then the EQ formula): 20 words that are in no training list, each with one and with three of
 * three emoji for each of the six emotions, 720 texts.
 *   npm run eval:emoji [-- --model DIR]
 * Prints one JSON line: how many texts read minimal or subtle, the mean intensity, and how many get
 * the emoji's emotion as their category. Up to model 1.3.0 the sub-emotion branch read emoji as
 * neutral, and the intensity (scaled by 1 - neutral) of 314 of these texts was minimal
 * (models/emotion/MODEL.md).
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { printServedReading } from './lib/served-reading.js';

const { values } = parseArgs({ options: { model: { type: 'string', default: join(process.cwd(), 'models', 'emotion') } } });

// Chat words with little feeling of their own, none of them in models/train's lexicons.
const WORDS = ['nah', 'bruh', 'welp', 'yikes', 'geez', 'mate', 'sis', 'tbh', 'fr', 'idk', 'gosh', 'yo', 'huh', 'meh',
  'ahh', 'oof', 'omfg', 'wtf', 'lmao', 'smh'];
const EMOJI: Record<string, string[]> = {
  sadness: ['😭', '😢', '💔'], anger: ['😡', '🤬', '😠'], fear: ['😱', '😨', '😰'],
  joy: ['😂', '🎉', '😄'], love: ['😍', '❤️', '🥰'], surprise: ['😮', '😲', '🤯'],
};

printServedReading(values.model, async (read) => {
  const texts: string[] = [];
  const expected: string[] = [];
  for (const word of WORDS) {
    for (const [emotion, emoji] of Object.entries(EMOJI)) {
      for (const e of emoji) {
        for (const n of [1, 3]) {
          texts.push(`${word} ${e.repeat(n)}`);
          expected.push(emotion);
        }
      }
    }
  }
  const eq = await read(texts);
  const count = (level: string) => eq.filter((q) => q.intensityLevel === level).length;
  return {
    n: texts.length,
    minimal: count('minimal'),
    subtle: count('subtle'),
    mean_intensity: Math.round((eq.reduce((a, q) => a + q.intensity, 0) / eq.length) * 1000) / 1000,
    category_right: eq.filter((q, i) => q.category === expected[i]).length,
  };
});
