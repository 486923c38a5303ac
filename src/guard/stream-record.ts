/**
 * The copy of a streamed reply that idempotency keeps to replay it. Events are kept as sent up to
 * EXACT_CHARS; past that, the whole record is kept with consecutive text deltas of the OpenAI chunk format
 * merged, so a long reply of small chunks (a thinking model's reasoning passes 4 Mi characters of events
 * at about 21,000 chunks) is kept as its text and replayed in fewer chunks, rather than dropped and run a
 * second time on retry. A record still over MAX_CHARS is dropped: keeping every event of every long stream
 * took 300 MB for 16 streams of 18 MB.
 */

/** Characters kept event for event: most replies (a few thousand chunks) replay exactly as sent. */
export const EXACT_CHARS = 1_048_576;
/** Characters kept at most, merged (as written in JSON); past them the record is dropped. */
export const MAX_CHARS = 4 * 1_048_576;
/** Text characters of one merged event at most: SSE readers cap a line (aiohttp at 128 KiB). */
export const MERGED_EVENT_CHARS = 65_536;

const TEXT_FIELDS = ['content', 'reasoning_content'];

type Delta = Record<string, unknown>;

/** Consecutive text deltas merged into one event; written out when the record is read. */
interface Merged {
  /** The first chunk, its text fields blanked until written out. */
  chunk: { choices: [{ delta: Delta }] };
  /** The chunk as JSON with its text blanked: a chunk merges into this one only if its own is the same. */
  shape: string;
  parts: Map<string, string[]>;
  chars: number;
}

/** Characters a string takes inside a JSON string: what the replayed event will hold. */
function jsonChars(s: string): number {
  return JSON.stringify(s).length - 2;
}

/**
 * The chunk, its text and its shape if it is a text delta: one choice, no finish reason, no logprobs, and
 * a delta with string `content` or `reasoning_content`. Everything else in it (a role on every delta, a
 * null `content` beside reasoning, an upstream's extra fields) goes into the shape, so only chunks that
 * differ in their text alone merge. Other events (tool calls, finish, usage, emotions, errors, `[DONE]`)
 * are kept as they are, and end a merge.
 */
function textDelta(event: string): Omit<Merged, 'chars'> | undefined {
  if (!event.startsWith('{')) return undefined;
  let chunk: unknown;
  try {
    chunk = JSON.parse(event);
  } catch {
    return undefined;
  }
  const choices = (chunk as { choices?: unknown }).choices;
  if (!Array.isArray(choices) || choices.length !== 1) return undefined;
  const choice = choices[0] as Record<string, unknown> | null;
  if (choice === null || typeof choice !== 'object' || choice['finish_reason'] != null || choice['logprobs'] != null) return undefined;
  const delta = choice['delta'] as Delta | null | undefined;
  if (delta === null || typeof delta !== 'object' || Array.isArray(delta)) return undefined;
  const parts = new Map<string, string[]>();
  for (const field of TEXT_FIELDS) {
    const value = delta[field];
    if (typeof value !== 'string') continue;
    parts.set(field, [value]);
    delta[field] = '';
  }
  if (parts.size === 0) return undefined;
  return { chunk: chunk as Merged['chunk'], shape: JSON.stringify(chunk), parts };
}

export class StreamRecord {
  #events: Array<string | Merged> | undefined = [];
  #chars = 0;
  #merging = false;

  /** Add the next event sent. Never throws: a record that cannot be kept is dropped, the stream goes on. */
  add(event: string): void {
    if (!this.#events) return;
    try {
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
    } catch {
      this.#events = undefined;
    }
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
    if (!text) {
      events.push(event);
      this.#chars += event.length;
      return;
    }
    let chars = 0;
    for (const [, [value]] of text.parts) chars += jsonChars(value!);
    const last = events.at(-1);
    if (last !== undefined && typeof last !== 'string' && last.shape === text.shape && last.chars + chars <= MERGED_EVENT_CHARS) {
      for (const [field, [value]] of text.parts) last.parts.get(field)!.push(value!);
      last.chars += chars;
      this.#chars += chars;
      return;
    }
    events.push({ ...text, chars });
    this.#chars += text.shape.length + chars;
  }
}
