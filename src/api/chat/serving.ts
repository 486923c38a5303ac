/**
 * POST /v1/chat/completions and /v2/chat/completions: one chat turn.
 *
 *   parse → score the latest user message ‖ read the context → conversation mode → (guidance) →
 *   upstream LLM → score the reply → append the turn to the context → respond
 *
 * With guidance off, the upstream call starts at once and the user's analysis runs beside it. A streamed
 * reply is forwarded chunk by chunk as the upstream produces it; the reply's emotions, usage and the mode
 * come on its finishing chunk (or, with include_usage, in a chunk of their own) before [DONE]. The dialect
 * (protocol.ts) holds what differs between versions.
 */
import type { Logger } from 'pino';
import { AppError, ERRORS, toErrorBody } from '../../errors.js';
import type { Config } from '../../config.js';
import { blend } from '../../core/emotion-service.js';
import type { EmotionService } from '../../core/emotion-service.js';
import { computeEq } from '../../core/eq.js';
import { aggregateState, discoveryBaseline, scoresOf, trendOf } from '../../core/trajectory.js';
import type { Trend } from '../../core/trajectory.js';
import { CRISIS_LOOKBACK, crisisNeedsAffect, decideMode } from '../../core/conversation-mode.js';
import type { ConversationMode, EarlierMessage } from '../../core/conversation-mode.js';
import { guidanceText, withGuidance } from '../../core/guidance.js';
import type { TextReader } from '../../core/text-reader.js';
import type { StoredMessage } from '../../store/context-store.js';
import type { RequestContext, Route, Reply } from '../../http/server.js';
import { mapLowerError } from '../error-mapping.js';
import type { SseStream } from '../../http/sse.js';
import { LlmClient, UpstreamAbortedError, isObject } from '../../llm/client.js';
import { UpstreamError } from '../../llm/errors.js';
import type { Metrics } from '../../metrics.js';
import type { UpstreamStream } from '../../llm/client.js';
import type { UpstreamChunk, UpstreamMessage, UpstreamUsage } from '../../llm/types.js';
import { bytesToTokens, estimatePromptTokens } from '../../llm/tokens.js';
import { assistantEntry } from './entries.js';
import { truncateUtf8 } from '../utf8.js';
import { entryFor, trendOut } from '../entries.js';
import type { Scored } from './entries.js';
import { parseChatRequest, v1Chat, v2Chat } from './protocol.js';
import { ModelList, chatResponses } from '../responses.js';
import type { ChatDialect, ChatMessage, ChatRequest } from './protocol.js';

export interface ChatDeps {
  service: EmotionService;
  config: Config;
  logger: Logger;
  /** Upstream latency and failures, and the modes chosen, for /metrics. */
  metrics?: Pick<Metrics, 'llmLatency' | 'llmErrors' | 'conversationModes' | 'crisisSignals'>;
  /** Reads the messages' words (crisis rules and signal, cues) off the event loop. */
  reader: TextReader;
}

/** The user's side of the turn, ready before (guidance on) or beside (guidance off) the LLM call. */
interface UserAnalysis {
  /** As reported (smoothed towards the context's state when asked). */
  reported: Scored;
  /** As stored in the context (the message's own scores). */
  stored: Scored;
  mode: ConversationMode;
  /** The user's trajectory before this turn, when the context has enough of it. */
  trend: Trend | undefined;
  /** Model input tokens of earlier user messages scored for the crisis rules (they count in usage). */
  historyTokens: number;
  /** The context gets the user's message: new, or a continuation's that the context lacks as its latest. */
  storeUser: boolean;
}

/**
 * The chat routes, and close() for the upstream's pooled connections: at shutdown, after the drain, when a
 * stream still waiting for an upstream chunk has already been cut (its forwarding then ends quietly).
 */
export function chatRoutes(deps: ChatDeps): { routes: Route[]; close(): void } {
  const { llm } = deps.config;
  const client = llm.baseUrl ? new LlmClient({ baseUrl: llm.baseUrl, apiKey: llm.apiKey, timeoutMs: llm.timeoutMs }) : undefined;
  const upstream = (): LlmClient => {
    if (!client) throw new AppError('llm_not_configured', 'chat needs an upstream LLM: set SENTIO_LLM_BASE_URL');
    return client;
  };
  const routes = [v1Chat, v2Chat].map((d): Route => ({
    method: 'post',
    pattern: d.path,
    auth: true,
    maxMessages: deps.config.limits.chatMessages,
    requestSchema: d.schema,
    ...chatResponseSchemas(d.version),
    summary: `Chat completion with emotion analysis (${d.version})`,
    handler: (ctx, body) => {
      return new ChatTurn(d, deps, upstream(), ctx, parseChatRequest(d, body!, deps.config.limits, llm.models, deps.config.chat.guidance)).run();
    },
  }));
  // OpenAI clients (chat front ends, SDKs) list the models beside the chat path before they offer one.
  const created = Math.floor(Date.now() / 1000);
  const modelList = { object: 'list', data: [...llm.models.keys()].map((id) => ({ id, object: 'model', created, owned_by: 'sentio' })) };
  for (const d of [v1Chat, v2Chat]) {
    routes.push({
      method: 'get', pattern: d.path.replace('/chat/completions', '/models'), auth: true, responseSchema: ModelList,
      summary: `The chat models, for OpenAI clients that list them (${d.version})`,
      handler: () => {
        upstream(); // no list without an upstream to serve its models
        return { status: 200, body: modelList };
      },
    });
  }
  return { routes, close: () => client?.close() };
}

class ChatTurn {
  /** The completion id carries the request id's random part, so a completion and its log line join. */
  readonly #id: string;
  readonly #created = Math.floor(Date.now() / 1000);
  /** Aborts the upstream call: the client went away, or the turn failed on Sentio's side. */
  readonly #abort = new AbortController();
  readonly #userText: string;
  #analysis: Promise<UserAnalysis> | undefined;
  #llmStarted = 0;

  constructor(
    private readonly d: ChatDialect,
    private readonly deps: ChatDeps,
    private readonly client: LlmClient,
    private readonly ctx: RequestContext,
    private readonly req: ChatRequest,
  ) {
    this.#id = `chatcmpl-${ctx.requestId.replace(/^req_/, '')}`;
    // As the context stores it (lone surrogates as U+FFFD): the entry echoes it, and a tool continuation
    // finds the stored message by it.
    this.#userText = textOf(req.messages[req.userIndex]!).toWellFormed();
    if (ctx.signal.aborted) this.#abort.abort();
    else ctx.signal.addEventListener('abort', () => this.#abort.abort(), { once: true });
  }

  async run(): Promise<Reply> {
    const analysis = this.#analyseUser();
    this.#analysis = analysis;
    let messages: ReadonlyArray<ChatMessage | { role: 'system'; content: string }> = this.req.messages;
    if (this.req.guidance) {
      const a = await analysis;
      messages = withGuidance(this.req.messages, guidanceText({ eq: a.reported.eq, mode: a.mode, trend: a.trend }));
    } else {
      analysis.catch(() => this.#abort.abort()); // awaited later; a failure must still stop the upstream call
    }
    const body = this.#upstreamBody(messages);
    if (this.req.stream) {
      const upstream = await this.#upstream(() => this.client.stream(body, this.#abort.signal, this.ctx.requestId));
      // Sentio's stream starts with the upstream's first chunk that has a choice to relay: an upstream that
      // fails before it (an error event, a stall, an event that is not JSON, nothing at all) gets an ordinary
      // HTTP error, not a 200. Chunks without choices before it (Azure opens with prompt_filter_results)
      // would relay nothing; the usage one of them carries is kept.
      const first = await this.#upstream(async () => {
        const chunks = upstream[Symbol.asyncIterator]();
        let usage: UpstreamChunk['usage'];
        for (;;) {
          const next = await chunks.next();
          if (next.done) throw new AppError('upstream_error', 'the upstream LLM stream ended before the reply was complete');
          const chunk = next.value;
          if (chunk.choices && chunk.choices.length > 0) return usage && !chunk.usage ? { ...chunk, usage } : chunk;
          if (chunk.usage) usage = chunk.usage;
        }
      });
      return { stream: (sse) => this.#forward(sse, first, upstream, analysis, messages) };
    }
    const completion = await this.#upstream(() => this.client.complete(body, this.#abort.signal, this.ctx.requestId));
    this.#observeLatency();
    const choice = completion.choices[0]!;
    const message: UpstreamMessage = { ...choice.message, role: 'assistant' };
    // A refusal (content null, OpenAI's `refusal` text) is what the assistant said: it is scored as the reply.
    const replyText = typeof message.content === 'string' && message.content !== '' ? message.content
      : typeof message['refusal'] === 'string' ? message['refusal'] : '';
    const usage = completion.usage ?? undefined;
    // Calls, in the current form or the legacy single `function_call`: a turn with nothing to score.
    const toolCalls = (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) || isObject(message['function_call']);
    const tail = await this.#finish(await analysis, replyText, toolCalls, llmUsage(
      usage,
      () => estimatePromptTokens(messages, this.req.tools),
      // As the stream counts it: the reply's and reasoning's bytes together, the tool calls' apart.
      () => bytesToTokens(Buffer.byteLength(replyText, 'utf8') + Buffer.byteLength(reasoningText(choice.message), 'utf8'))
        + bytesToTokens(toolCallBytes(message.tool_calls)),
    ));
    const choices = completion.choices.map((c, i) => ({
      index: c.index ?? i,
      message: i === 0 ? message : { ...c.message, role: 'assistant' },
      logprobs: isObject(c['logprobs']) ? c['logprobs'] : null,
      // The upstream's: one that gave none gets null, not a "stop" that could hide a reply cut short.
      finish_reason: c.finish_reason ?? null,
    }));
    return {
      status: 200,
      body: {
        id: this.#id, object: 'chat.completion', created: this.#created, model: this.req.publicModel, ...runFields(completion),
        emotion_model: this.req.emotionModel, choices, ...tail,
      },
    };
  }

  /**
   * Score the latest user message, read the context and read the words (in parallel), then decide the mode.
   * The words need no scores: the reading thread reads the latest message and the request's earlier user
   * messages while the engine scores the text, and the context's earlier ones as soon as the context is read.
   */
  async #analyseUser(): Promise<UserAnalysis> {
    const { service, reader } = this.deps;
    // With guidance, the LLM call waits on this score: it jumps the engine's queue.
    const scoring = service.score([this.#userText], this.ctx.signal, this.req.guidance);
    const sent = this.#sentEarlier();
    const sentRead = sent.slice(0, CRISIS_LOOKBACK); // the lookback takes these first, then the context's
    const reading = reader.read([this.#userText, ...sentRead]);
    const context = (this.req.contextId === undefined ? Promise.resolve(undefined) : service.history(this.req.contextId)).then((prior) => {
      const priorUser: StoredMessage[] = [];
      for (const m of prior ?? []) if (m.role === 'user') priorUser.push(m);
      // A turn that continues after a tool call carries a user message the context already stored: it is the
      // latest, not an earlier one (counted as both, it took a lookback slot and pushed a crisis out).
      const held = !this.req.userIsNew && priorUser.at(-1)?.text === this.#userText;
      if (held) priorUser.pop();
      const stored = storedEarlier(priorUser, sent, CRISIS_LOOKBACK - sentRead.length);
      const readings = reader.read(stored.map((m) => m.text));
      readings.catch(() => {}); // awaited below, once the score is in
      return { prior, priorUser, stored, readings, held };
    });
    const [[own], { prior, priorUser, stored, readings, held }, [latest, ...sentReadings]] = await Promise.all([scoring, context, reading]);
    const scores = own!;
    const baselineDiscovery = prior ? discoveryBaseline(prior) : undefined;
    const storedEq = computeEq(scores, this.req.eq, baselineDiscovery);
    const storedScored: Scored = { text: this.#userText, scores, eq: storedEq };
    let reported = storedScored;
    const state = this.req.smoothing > 0 && prior ? aggregateState(prior) : undefined;
    if (state) {
      const smoothed = blend(scores, state, this.req.smoothing);
      reported = { text: this.#userText, scores: smoothed, eq: computeEq(smoothed, this.req.eq, baselineDiscovery) };
    }
    const trend = priorUser.length >= 2 ? trendOf(priorUser) : undefined;
    const storedReadings = await readings;
    // The message as it was said, not smoothed towards the context: smoothing is how the scores are
    // shown, and it had moved a crisis message out of the affect gate of the crisis rules' third tier.
    const earlierUser = await this.#earlierUser([
      ...sentRead.map((text, i): EarlierMessage => ({ text, reading: sentReadings[i] })),
      ...stored.map((m, i): EarlierMessage => ({ text: m.text, scores: scoresOf(m), eq: m.eq, reading: storedReadings[i] })),
    ]);
    const mode = decideMode({
      text: this.#userText,
      scores: storedScored.scores,
      eq: storedScored.eq,
      earlierUser: earlierUser.messages,
      trend,
      baselineValence: priorUser.length ? mean(priorUser.map((m) => m.eq.valence)) : undefined,
      reading: latest,
    });
    // Counted now, not with the reply: the engine has done this work even if the turn then fails.
    this.ctx.analysedTokens += scores.tokens + earlierUser.scoredTokens;
    this.deps.metrics?.conversationModes.inc({ mode: mode.mode });
    if (mode.crisis) this.deps.metrics?.crisisSignals.inc({ kind: mode.crisis.kind });
    return { reported, stored: storedScored, mode, trend, historyTokens: earlierUser.scoredTokens, storeUser: !held };
  }

  /** The request's user messages before the latest, most recent first. */
  #sentEarlier(): string[] {
    const sent: string[] = [];
    for (let i = this.req.userIndex - 1; i >= 0; i--) {
      const m = this.req.messages[i]!;
      if (m.role === 'user') sent.push(m.content);
    }
    return sent;
  }

  /**
   * The user's messages before the latest, most recent first (the request's own, then the context's), each
   * with the emotion model's scores where a crisis rule needs them: a stored message has its own; a message
   * of the request's history is scored here, which only a third-tier crisis phrase asks for.
   */
  async #earlierUser(out: EarlierMessage[]): Promise<{ messages: EarlierMessage[]; scoredTokens: number }> {
    const unscored = out.filter((m) => !m.scores && m.reading && crisisNeedsAffect(m.reading));
    let scoredTokens = 0;
    if (unscored.length > 0) {
      const scored = await this.deps.service.score(unscored.map((m) => m.text), this.ctx.signal, this.req.guidance);
      unscored.forEach((m, i) => {
        m.scores = scored[i]!;
        m.eq = computeEq(m.scores, this.req.eq);
        scoredTokens += m.scores.tokens;
      });
    }
    return { messages: out, scoredTokens };
  }

  #upstreamBody(messages: ReadonlyArray<{ role: string }>): Record<string, unknown> {
    const r = this.req;
    const body: Record<string, unknown> = { model: r.upstreamModel, messages, ...r.modelParams };
    if (r.tools !== undefined) body['tools'] = r.tools;
    if (r.toolChoice !== undefined) body['tool_choice'] = r.toolChoice;
    if (r.parallelToolCalls !== undefined) body['parallel_tool_calls'] = r.parallelToolCalls;
    if (r.stream) {
      body['stream'] = true;
      body['stream_options'] = { include_usage: true };
    }
    return body;
  }

  /** Call the upstream; a failure is rethrown as the API error that explains it. */
  async #upstream<T>(call: () => Promise<T>): Promise<T> {
    // From the first call: a stream's second (its first chunk) must not drop the wait for its headers.
    if (this.#llmStarted === 0) this.#llmStarted = performance.now();
    try {
      return await call();
    } catch (err) {
      const explained = await this.#explain(err);
      if (!(err instanceof UpstreamAbortedError)) this.#countFailure(explained); // aborted: Sentio's failure, or the client's
      throw explained;
    }
  }

  /**
   * The upstream call's time, from request to last token (ok) or to its failure (error), goes to /metrics:
   * with only the calls that ended well observed, an upstream timing out looked fast (operator review).
   */
  #observeLatency(outcome: 'ok' | 'error' = 'ok'): void {
    this.deps.metrics?.llmLatency.observe({ model: this.req.publicModel, stream: String(this.req.stream), outcome }, (performance.now() - this.#llmStarted) / 1000);
  }

  /**
   * An upstream failure, for sentio_llm_errors_total and the latency's error outcome: only the upstream's
   * own (not Sentio's, not a client gone, not a request the upstream refused as the caller's fault:
   * upstream_rejected, a 400 to the caller).
   */
  #countFailure(err: AppError): void {
    if (this.ctx.signal.aborted || err.code === 'upstream_rejected') return;
    this.deps.metrics?.llmErrors.inc({ kind: err.code });
    this.#observeLatency('error');
  }

  /**
   * The error to report. The upstream call is also aborted when the user's analysis fails beside it
   * (guidance off); that failure is the one to report then. A client that went away gets nothing, but
   * the edge still wants an AppError so it does not log an "unhandled" error.
   */
  async #explain(err: unknown): Promise<AppError> {
    if (err instanceof UpstreamAbortedError) {
      if (this.ctx.signal.aborted) return new AppError('internal_error', 'request aborted by the client');
      try {
        await this.#analysis;
      } catch (cause) {
        err = cause;
      }
    }
    if (err instanceof UpstreamError) err = mapLowerError(err);
    if (err instanceof AppError) {
      // Sentio's own message (the upstream's status), never an upstream's text, which may quote the prompt
      // (upstream_rejected, a 400, is not logged at all).
      if (ERRORS[err.code].status >= 429) this.deps.logger.warn({ request_id: this.ctx.requestId, code: err.code, reason: err.message }, 'chat turn failed');
      return err;
    }
    const mapped = mapLowerError(err);
    if (mapped) return mapped;
    this.deps.logger.error({ err, request_id: this.ctx.requestId }, 'chat turn failed');
    return new AppError('internal_error', 'internal server error');
  }

  /**
   * Score the reply, append the turn to the context, and build the response's emotions, mode and usage. A reply
   * of tool calls and no text has nothing to score; an empty one without them (a thinking model that spent
   * max_tokens reasoning) is scored as the empty text, as an empty user message is.
   */
  async #finish(user: UserAnalysis, replyText: string, toolCalls: boolean, llmUsage: LlmUsage): Promise<Record<string, unknown>> {
    const { service } = this.deps;
    let reply: Scored | undefined;
    // The reply is kept and scored as its first SENTIO_MAX_MESSAGE_BYTES, the bound every stored text has:
    // a reply may be 32 MiB (128 streamed), and the model reads its first 128 tokens anyway.
    const kept = truncateUtf8(replyText, this.deps.config.limits.messageBytes);
    if (kept || !toolCalls) {
      const [scores] = await service.score([kept], this.ctx.signal);
      reply = { text: kept, scores: scores!, eq: computeEq(scores!, this.req.eq) };
    }
    const analysed = user.stored.scores.tokens + user.historyTokens + (reply?.scores.tokens ?? 0);
    this.ctx.analysedTokens += reply?.scores.tokens ?? 0; // the user's side was counted by #analyseUser

    let trend: Trend | undefined;
    if (this.req.contextId !== undefined) {
      const items = [];
      if (user.storeUser) items.push({ input: { role: 'user' as const, text: this.#userText }, scores: user.stored.scores, eq: user.stored.eq });
      if (reply) items.push({ input: { role: 'assistant' as const, text: reply.text }, scores: reply.scores, eq: reply.eq });
      if (this.ctx.signal.aborted) throw new AppError('internal_error', 'request aborted by the client'); // nothing stored for a gone client
      if (items.length) trend = await service.appendScored(this.req.contextId, items);
    }

    const opts = { includeSubEmotions: this.req.includeSubEmotions };
    const emotions: Record<string, unknown> = { user: entryFor(this.req.shape, user.reported, opts) };
    if (reply) emotions['assistant'] = assistantEntry(this.req.shape, reply, opts);
    const tail: Record<string, unknown> = { emotions };
    if (this.d.conversationMode) {
      const m = user.mode;
      tail['conversationMode'] = { mode: m.mode, confidence: m.confidence, responseStrategy: m.responseStrategy };
      if (trend) tail['trajectory'] = { trend: trendOut(trend) };
    }
    tail['usage'] = { ...llmUsage, analyse_tokens: analysed };
    return tail;
  }

  /**
   * Forward the upstream's chunks as they come (the first already read), the finishing one with Sentio's
   * fields (or, with include_usage, before a chunk of them alone), then [DONE].
   */
  async #forward(
    sse: SseStream, first: UpstreamChunk, upstream: UpstreamStream, analysis: Promise<UserAnalysis>,
    messages: ReadonlyArray<{ content?: unknown; tool_calls?: unknown }>,
  ): Promise<void> {
    // The upstream's fingerprint and tier are the same on all its chunks: read once, from the first.
    const run = runFields(first);
    let runJson = '';
    for (const [k, v] of Object.entries(run)) runJson += `${JSON.stringify(k)}:${JSON.stringify(v)},`;
    const head = `{"id":${JSON.stringify(this.#id)},"object":"chat.completion.chunk","created":${this.#created},"model":${JSON.stringify(this.req.publicModel)},${runJson}"choices":`;
    // Only the reply's beginning is kept (what #finish scores and stores); its size is counted for the estimate.
    const keep = this.deps.config.limits.messageBytes;
    let text = '';
    let textBytes = 0;
    let toolBytes = 0;
    let toolCalls = false;
    let refusal = '';
    let usage: UpstreamUsage | undefined;
    let finished = false;
    // From the finish on, each chunk's choices are kept back until the next comes, so that the last carries
    // Sentio's fields: a stream whose every chunk has a choice is what clients that read choices[0] of each
    // chunk expect unless they asked for usage. The stream holds a copy for a shutdown that cuts it.
    let held: unknown[] | undefined;
    const event = (choices: unknown[]) => `${head}${JSON.stringify(choices)}}`;
    const hold = (choices: unknown[] | undefined) => {
      held = choices;
      sse.heldBack = choices && event(choices);
    };
    const flush = async () => {
      const kept = sse.heldBack; // written once, when held
      hold(undefined);
      if (kept !== undefined) await sse.send(kept);
    };
    /** Relay one chunk; false once the client has gone. */
    const relay = async (chunk: UpstreamChunk): Promise<boolean> => {
      if (chunk.usage) usage = chunk.usage;
      const choices = chunk.choices;
      if (!choices || choices.length === 0) return true; // a usage-only chunk: reported in the last chunk
      for (const c of choices) {
        // As without a stream: a logprobs that is not an object is the client's null, not the upstream's value.
        if (c['logprobs'] != null && !isObject(c['logprobs'])) c['logprobs'] = null;
        // Sentio asks for one choice; an upstream that streams others anyway has them passed on, while the
        // reply scored and stored is choice 0's, as without a stream (they were scored interleaved).
        if ((c.index ?? 0) !== 0) continue;
        const delta = c.delta;
        if (typeof delta?.content === 'string') {
          if (text.length < keep) text += delta.content.slice(0, keep - text.length);
          textBytes += Buffer.byteLength(delta.content, 'utf8');
        }
        if (typeof delta?.['reasoning_content'] === 'string') textBytes += Buffer.byteLength(delta['reasoning_content'], 'utf8');
        if (typeof delta?.['refusal'] === 'string' && refusal.length < keep) refusal += delta['refusal'].slice(0, keep - refusal.length);
        if (isObject(delta?.['function_call'])) toolCalls = true;
        if (delta?.tool_calls) {
          toolBytes += toolCallBytes(delta.tool_calls);
          toolCalls ||= delta.tool_calls.length > 0;
        }
        // Moonshot puts the stream's usage in its last choice rather than beside it.
        if (!chunk.usage && isObject(c['usage'])) usage = c['usage'] as UpstreamUsage;
        if (c.finish_reason) finished = true;
      }
      await flush();
      if (finished && !this.req.usageChunk) hold(choices);
      else await sse.send(event(choices));
      return !sse.closed;
    };
    let upstreamDone = false; // past it, a failure is Sentio's (the analysis, the reply's scoring, the store)
    try {
      let open = await relay(first);
      if (open) {
        for await (const chunk of upstream) {
          open = await relay(chunk);
          if (!open) break;
        }
      }
      if (!open) {
        upstream.abort();
        return;
      }
      if (!finished) throw new AppError('upstream_error', 'the upstream LLM stream ended before the reply was complete');
      upstreamDone = true;
      this.#observeLatency();
      const tail = await this.#finish(await analysis, text || refusal, toolCalls, llmUsage(
        usage,
        () => estimatePromptTokens(messages, this.req.tools),
        () => bytesToTokens(textBytes) + bytesToTokens(toolBytes),
      ));
      const choices = held ?? [];
      hold(undefined);
      const last = {
        id: this.#id, object: 'chat.completion.chunk', created: this.#created, model: this.req.publicModel, ...run,
        emotion_model: this.req.emotionModel, choices, ...tail,
      };
      await sse.send(JSON.stringify(last));
      await sse.send('[DONE]');
      sse.end();
    } catch (err) {
      upstream.abort();
      if (sse.closed || this.ctx.signal.aborted) return;
      await flush(); // the reply's end was generated: the client gets it before the error
      // Once the stream has started, an error goes in-band, in the same body as any other error.
      const explained = await this.#explain(err);
      if (!upstreamDone && !(err instanceof UpstreamAbortedError)) this.#countFailure(explained);
      sse.failedStatus = explained.status;
      await sse.send(JSON.stringify(toErrorBody(explained, this.ctx.requestId)));
      await sse.send('[DONE]');
      sse.end();
    }
  }
}

/** The completion's schema and each stream event's, for /openapi.json. */
function chatResponseSchemas(version: 'v1' | 'v2'): Pick<Route, 'responseSchema' | 'streamSchema'> {
  const { completion, event } = chatResponses(version);
  return { responseSchema: completion, streamSchema: event };
}

function textOf(m: ChatMessage): string {
  return typeof m.content === 'string' ? m.content : '';
}

/** The LLM's part of `usage`: its counts (estimated where it gave none), their total, and its details. */
interface LlmUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: object;
  completion_tokens_details?: object;
}

function llmUsage(usage: UpstreamUsage | null | undefined, estimatePrompt: () => number, estimateCompletion: () => number): LlmUsage {
  const prompt = tokenCount(usage?.prompt_tokens) ?? estimatePrompt();
  const completion = tokenCount(usage?.completion_tokens) ?? estimateCompletion();
  const out: LlmUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  // Cached prompt tokens, reasoning tokens and the like: the upstream's own breakdown, passed on as it came.
  for (const k of ['prompt_tokens_details', 'completion_tokens_details'] as const) {
    const d = usage?.[k];
    if (isObject(d)) out[k] = d;
  }
  return out;
}

/** The upstream's fields about the run that OpenAI clients read (`system_fingerprint`, `service_tier`), when it gave them. */
function runFields(from: Record<string, unknown>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const k of ['system_fingerprint', 'service_tier']) {
    const v = from[k];
    if (typeof v === 'string' || v === null) out[k] = v;
  }
  return out;
}

/** A thinking model's reasoning (`reasoning_content`): generated, so counted in an estimate of completion tokens. */
function reasoningText(m: UpstreamMessage | undefined): string {
  const r = m?.['reasoning_content'];
  return typeof r === 'string' ? r : '';
}

/** An upstream's token count when it is one (a count in another shape is estimated instead). */
function tokenCount(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/**
 * Bytes of the tool calls' function names and arguments, whole or as stream deltas (whose fragments add
 * up to the same): the JSON text a model generates, not the wrapper (index, id, type) around it.
 */
function toolCallBytes(calls: unknown): number {
  if (!Array.isArray(calls)) return 0;
  let n = 0;
  for (const c of calls) {
    const f = (c as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    if (typeof f?.name === 'string') n += Buffer.byteLength(f.name, 'utf8');
    if (typeof f?.arguments === 'string') n += Buffer.byteLength(f.arguments, 'utf8');
  }
  return n;
}

/**
 * The context's user messages before the latest that the crisis lookback takes, most recent first, `slots` at
 * most. A client that sends its history with a context_id sends the context's latest messages again: its
 * copies (`sent`, most recent first) count, and the stored ones they repeat, matched in order from the most
 * recent, do not. (A match by text alone let every stored "ok" fold into the one the request carried, which
 * kept an old crisis in the lookback while the user kept saying "ok".)
 */
function storedEarlier(priorUser: readonly StoredMessage[], sent: readonly string[], slots: number): StoredMessage[] {
  const out: StoredMessage[] = [];
  let repeated = 0;
  for (let i = priorUser.length - 1; i >= 0 && out.length < slots; i--) {
    const m = priorUser[i]!;
    if (repeated < sent.length && m.text === sent[repeated]) {
      repeated++;
      continue;
    }
    out.push(m);
  }
  return out;
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}
