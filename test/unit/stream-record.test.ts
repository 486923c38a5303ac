/**
 * The record idempotency keeps of a streamed reply: exact up to EXACT_CHARS, then text deltas merged
 * where chunks differ in their text alone, dropped past MAX_CHARS (src/guard/stream-record.ts).
 */
import { describe, expect, it } from 'vitest';
import { EXACT_CHARS, MERGED_EVENT_CHARS, StreamRecord } from '../../src/guard/stream-record.js';

const event = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', ...extra, choices: [{ index: 0, finish_reason: null, ...choice }] });

function record(events: string[]): string[] | undefined {
  const r = new StreamRecord();
  for (const e of events) r.add(e);
  return r.events();
}

/** Each field's text, and the order in which the fields' runs come. */
function text(events: string[]): { fields: Record<string, string>; runs: string[] } {
  const fields: Record<string, string> = {};
  const runs: string[] = [];
  for (const e of events) {
    if (!e.startsWith('{')) continue;
    for (const c of JSON.parse(e).choices ?? []) {
      for (const f of ['content', 'reasoning_content']) {
        const v = c.delta?.[f];
        if (typeof v !== 'string' || v === '') continue;
        fields[f] = (fields[f] ?? '') + v;
        if (runs.at(-1) !== f) runs.push(f);
      }
    }
  }
  return { fields, runs };
}

const tail = [event({ delta: {}, finish_reason: 'stop' }), JSON.stringify({ id: 'chatcmpl-1', choices: [], usage: { prompt_tokens: 1 } }), '[DONE]'];

describe('StreamRecord', () => {
  it('keeps a stream under the exact bound event for event', () => {
    const events = [event({ delta: { role: 'assistant', content: '' } }), ...Array.from({ length: 100 }, (_, i) => event({ delta: { content: `w${i} ` } })), ...tail];
    expect(record(events)).toEqual(events);
  });

  // Shapes real upstreams send (a review, 2026-11-27): each went unmerged, so the record was dropped.
  const shapes: Array<[string, (i: number) => Record<string, unknown>, Record<string, unknown>?]> = [
    ['text fields only', (i) => ({ delta: i < 10_000 ? { reasoning_content: `step ${i} ` } : { content: 'so "glad" \\ ' } })],
    ['DeepSeek: a null content beside the reasoning', (i) => ({ delta: i < 10_000 ? { content: null, reasoning_content: `step ${i} ` } : { content: 'ok ', reasoning_content: null } })],
    ['DashScope: the role on every delta', (i) => ({ delta: { role: 'assistant', content: `t${i} ` } })],
    ['an extra field on the choice and the chunk', (i) => ({ delta: { content: `t${i} ` }, stop_reason: null }), { system_fingerprint: 'fp' }],
  ];
  for (const [name, choice, extra] of shapes) {
    it(`past the exact bound merges text deltas, the text and its order kept: ${name}`, () => {
      const events = [event({ delta: { role: 'assistant', content: '' } }, extra), ...Array.from({ length: 30_000 }, (_, i) => event(choice(i), extra)), ...tail];
      expect(events.reduce((n, e) => n + e.length, 0)).toBeGreaterThan(4 * EXACT_CHARS);
      const kept = record(events);
      expect(kept).toBeDefined();
      expect(kept!.length).toBeLessThan(100);
      expect(text(kept!)).toEqual(text(events));
      expect(kept!.slice(-3)).toEqual(tail);
      for (const e of kept!.slice(0, -3)) {
        expect(e.length).toBeLessThan(MERGED_EVENT_CHARS + 500);
        expect(JSON.parse(e)).toMatchObject({ id: 'chatcmpl-1', ...extra });
      }
    });
  }

  it('merges only chunks that differ in their text: tool calls, other choices, ids, finishes and logprobs stay apart', () => {
    const filler = Array.from({ length: 8_000 }, (_, i) => event({ delta: { content: `f${i} ` } }));
    const apart = [
      event({ delta: { tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] } }),
      event({ delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] } }),
      event({ index: 1, delta: { content: 'second choice' } }),
      event({ delta: { content: 'other id' } }, { id: 'chatcmpl-2' }),
      event({ delta: { content: 'with logprobs' }, logprobs: { content: [] } }),
      event({ delta: { content: 'last words' }, finish_reason: 'stop' }),
    ];
    const kept = record([...filler, ...apart, '[DONE]'])!;
    expect(kept.slice(-7)).toEqual([...apart, '[DONE]']);
    expect(text(kept.slice(0, -7))).toEqual(text(filler));
  });

  it('counts characters as written in JSON: a text of control characters is dropped at its escaped size', () => {
    const r = new StreamRecord();
    for (let i = 0; i < 8_000; i++) r.add(event({ delta: { content: '\u0001'.repeat(100) } }));
    expect(r.events()).toBeUndefined(); // 800,000 characters of text, 4.8 million escaped
  });

  it('an event that is not JSON, or not a chunk, is kept as sent', () => {
    const odd = ['not json', '{"choices": "no"}', '{"choices": [null]}', '{"choices": [{"delta": null}]}', '{"choices": [{"delta": []}]}'];
    const filler = Array.from({ length: 8_000 }, (_, i) => event({ delta: { content: `f${i} ` } }));
    const kept = record([...filler, ...odd])!;
    expect(kept.slice(-odd.length)).toEqual(odd);
  });
});
