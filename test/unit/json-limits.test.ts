import { describe, expect, it } from 'vitest';
import { jsonOverLimits, topLevelArrayLength } from '../../src/json-limits.js';

describe('topLevelArrayLength', () => {
  it('counts the elements of the top-level array named, as JSON.parse would read them', () => {
    const cases: Array<[string, number | undefined]> = [
      ['{"messages":[]}', 0],
      ['{"messages":[ ]}', 0],
      ['{"messages":[1]}', 1],
      ['{"messages":[{"a":[1,2,3]},{"b":{"c":[4,5]}}, "x,y]"]}', 3],
      ['{ "messages" : [ [], [[]], {} ,"", 0 ] }', 5],
      // Strings holding brackets, commas, quotes and the key itself are skipped.
      ['{"model":"[\\"messages\\",]","messages":["a\\"],[","\\\\",3]}', 3],
      // An escaped spelling of the key is the key; the last occurrence wins.
      ['{"m\\u0065ssages":[1,2],"other":[1,2,3,4]}', 2],
      ['{"messages":[1],"messages":[1,2,3]}', 3],
      // Nested arrays of that name, a value that is not an array, or none at all.
      ['{"params":{"messages":[1,2]}}', undefined],
      ['{"messages":"[1,2]"}', undefined],
      ['{}', undefined],
      ['{"messages":[1,2', undefined],
    ];
    for (const [text, n] of cases) {
      expect(topLevelArrayLength(text, 'messages'), text).toBe(n);
      if (n !== undefined) expect((JSON.parse(text) as { messages: unknown[] }).messages.length).toBe(n);
    }
  });

  it('reads a body jsonOverLimits refuses for its nodes', () => {
    const text = JSON.stringify({ messages: Array.from({ length: 9_000 }, () => ({ content: { text: '' } })) });
    expect(jsonOverLimits(text, 32_768)).toBe('nodes');
    expect(topLevelArrayLength(text, 'messages')).toBe(9_000);
  });
});
