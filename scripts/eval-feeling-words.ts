/**
 * How the six-way branch reads feeling words that dair-ai shows seldom or never, as Sentio serves it
 * (native engine): each word in four short frames ("i feel X", "I'm X", ...).
 *   npm run eval:feeling-words [-- --model DIR] [--wrong]
 * Two lists: the words model 1.4.0 was taught (models/train/feeling-words.json) and the held-out words
 * below, which no training lexicon holds (dair-ai shows each in at most 5 of its 16,000 training sentences,
 * most in none). Up to 1.3.3 most of both
 * read as joy, the commonest class (models/emotion/MODEL.md). Prints one JSON line: texts whose
 * category is the word's emotion, per list and per emotion; --wrong also lists the misses.
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

const HELD_OUT: Record<string, string[]> = {
  anger: ['miffed', 'galled', 'wrathful', 'steamed', 'cheesed off', 'hot under the collar', 'riled up', 'boiling with rage'],
  sadness: ['doleful', 'anguished', 'woeful', 'mournful', 'tearful', 'heavy hearted', 'broken inside', 'in mourning'],
  joy: ['jazzed', 'giddy', 'exhilarated', 'psyched', 'tickled pink', 'in seventh heaven', 'on top of the world', 'grinning from ear to ear'],
  fear: ['aghast', 'daunted', 'jumpy', 'cowering', 'scared witless', 'shaking like a leaf', 'scared out of my wits', 'horror struck'],
  love: ['twitterpated', 'enraptured by her', 'gaga over him', 'falling for you', 'mad about you', 'weak in the knees for you', 'lovey dovey', 'pining for you'],
  surprise: ['nonplussed', 'staggered', 'bewildered', 'bowled over', 'at a loss for words', 'knocked for six', 'open mouthed', 'thrown for a loop'],
};
const FRAMES = ['i feel {}', "I'm {}", 'I am so {} right now', 'honestly i am {}'];

interface Item { emotion: string; text: string }

function itemsOf(words: Record<string, string[]>): Item[] {
  return Object.entries(words).flatMap(([emotion, list]) =>
    list.flatMap((w) => FRAMES.map((f) => ({ emotion, text: f.replace('{}', w) }))));
}

printServedReading(values.model, async (read) => {
  const taught = JSON.parse(readFileSync(repoFile('models', 'train', 'feeling-words.json'), 'utf8')) as Record<string, string[]>;
  const lists = { taught: itemsOf(taught), held_out: itemsOf(HELD_OUT) };
  const result: Record<string, unknown> = {};
  for (const [name, items] of Object.entries(lists)) {
    const category = (await read(items.map((i) => i.text))).map((q) => q.category);
    const perEmotion: Record<string, string> = {};
    for (const emotion of EMOTIONS) {
      const idx = items.flatMap((it, k) => (it.emotion === emotion ? [k] : []));
      perEmotion[emotion] = `${idx.filter((k) => category[k] === emotion).length}/${idx.length}`;
    }
    const right = items.filter((it, k) => category[k] === it.emotion).length;
    result[name] = { right, n: items.length, share: Math.round((right / items.length) * 1000) / 1000, per_emotion: perEmotion };
    if (values.wrong) {
      for (const [k, it] of items.entries()) if (category[k] !== it.emotion) console.error(`${name}: ${it.text} -> ${category[k]} (${it.emotion})`);
    }
  }
  return result;
});
