/**
 * The copy of a streamed reply that idempotency keeps to replay it. Events are kept as sent up to
 * EXACT_CHARS; past that, consecutive text-only deltas of the OpenAI chunk format are merged, so a long
 * reply (a thinking model's reasoning, 24,000 chunks of 200 characters for 96 KB of text) is kept as its
 * text and replayed in fewer chunks, rather than dropped and run a second time on retry. A record still
 * over MAX_CHARS is dropped: keeping every event of every long stream took 300 MB for 16 streams of 18 MB.
 */

/** Characters kept event for event: most replies (a few thousand chunks) replay exactly as sent. */
export const EXACT_CHARS = 1_048_576;
/** Characters kept at most, merged; past them the record is dropped. */
export const MAX_CHARS = 4 * 1_048_576;

const TEXT_FIELDS = new Set(['content', 'reasoning_content']);
const CHOICE_FIELDS = new Set(['index', 'delta', 'finish_reason', 'logprobs']);

type Chunk = Record<string, unknown> & { choices: [{ delta: Record<string, string> }] };

/** Consecutive text deltas merged into one event; written out when the record is read. */
interface Merged {
  chunk: Chunk;
  /** The chunk without its text, and the text fields it carries: what a mergeable next chunk must match. */
  shape: string;
  parts: Map<string, string[]>;
}

/**
 * The chunk and its shape if it is a text delta and nothing else: one choice, no finish reason, no
 * logprobs, a delta of string `content` or `reasoning_content` only. Anything else (roles, tool calls,
 * finish, usage, emotions, errors, `[DONE]`) is kept as it is, and ends a merge.
 */
function textDelta(event: string): { chunk: Chunk; shape: string } | undefined {
  if (!event.startsWith('{')) return undefined;
  let chunk: unknown;
  try {
    chunk = JSON.parse(event);
  } catch {
    return undefined;
  }
  const choices = (chunk as { choices?: unknown }).choices;
  if (!Array.isArray(choices) || choices.length !== 1) return undefined;
  const choice = choices[0] as Record<string, unknown>;
  if (choice === null || typeof choice !== 'object' || choice['finish_reason'] != null || choice['logprobs'] != null) return undefined;
  if (Object.keys(choice).some((k) => !CHOICE_FIELDS.has(k))) return undefined;
  const delta = choice['delta'] as Record<string, unknown> | undefined;
  if (!delta || typeof delta !== 'object') return undefined;
  const fields = Object.keys(delta);
  if (fields.length === 0 || fields.some((k) => !TEXT_FIELDS.has(k) || typeof delta[k] !== 'string')) return undefined;
  const { choices: _, ...rest } = chunk as Record<string, unknown>;
  return { chunk: chunk as Chunk, shape: `${JSON.stringify(rest)}|${String(choice['index'])}|${fields.join()}` };
}

export class StreamRecord {
  #events: Array<string | Merged> | undefined = [];
  #chars = 0;
  #merging = false;

  /** Add the next event sent. */
  add(event: string): void {
    if (!this.#events) return;
    if (!this.#merging) {
      this.#events.push(event);
      this.#chars += event.length;
      if (this.#chars > EXACT_CHARS) {
        // Once per long stream: at most EXACT_CHARS of events parsed (a few ms).
        this.#merging = true;
        const sent = this.#events as string[];
        this.#events = [];
        this.#chars = 0;
        for (const e of sent) this.#merge(e);
      }
    } else {
      this.#merge(event);
    }
    if (this.#chars > MAX_CHARS) this.#events = undefined;
  }

  /** The events to replay, or undefined if the record was dropped. */
  events(): string[] | undefined {
    return this.#events?.map((e) => {
      if (typeof e === 'string') return e;
      const delta = e.chunk.choices[0].delta;
      for (const [field, parts] of e.parts) delta[field] = parts.join('');
      return JSON.stringify(e.chunk);
    });
  }

  #merge(event: string): void {
    const events = this.#events!;
    const text = textDelta(event);
    const last = events.at(-1);
    if (text && last !== undefined && typeof last !== 'string' && last.shape === text.shape) {
      for (const [field, value] of Object.entries(text.chunk.choices[0].delta)) {
        last.parts.get(field)!.push(value);
        this.#chars += value.length;
      }
      return;
    }
    if (text) {
      const parts = new Map(Object.entries(text.chunk.choices[0].delta).map(([field, value]) => [field, [value]]));
      events.push({ chunk: text.chunk, shape: text.shape, parts });
    } else {
      events.push(event);
    }
    this.#chars += event.length;
  }
}
