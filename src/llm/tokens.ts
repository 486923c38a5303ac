/**
 * Token estimates for when the upstream reports no usage. Sentio does not have the LLM's tokenizer, so
 * it uses the common rule of thumb of about four bytes of UTF-8 per token (docs/chat.md, "Usage").
 */
const BYTES_PER_TOKEN = 4;
/** Per-message overhead of chat templates (role markers), as OpenAI documents for its models. */
const TOKENS_PER_MESSAGE = 4;

export function estimateTokens(text: string): number {
  return text ? bytesToTokens(Buffer.byteLength(text, 'utf8')) : 0;
}

export function bytesToTokens(bytes: number): number {
  return Math.ceil(bytes / BYTES_PER_TOKEN);
}

export function estimatePromptTokens(messages: ReadonlyArray<{ content?: unknown; tool_calls?: unknown }>, tools?: unknown): number {
  let n = 3; // the reply's priming tokens
  for (const m of messages) {
    n += TOKENS_PER_MESSAGE;
    if (typeof m.content === 'string') n += estimateTokens(m.content);
    if (m.tool_calls !== undefined) n += estimateTokens(JSON.stringify(m.tool_calls));
  }
  if (tools !== undefined) n += estimateTokens(JSON.stringify(tools));
  return n;
}
