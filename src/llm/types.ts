/** The parts of the OpenAI chat-completions wire format that Sentio reads from an upstream. */

export interface UpstreamUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: unknown;
  completion_tokens_details?: unknown;
}

export interface UpstreamToolCall {
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

export interface UpstreamMessage {
  role?: string;
  content?: string | null;
  tool_calls?: UpstreamToolCall[];
  /** Other fields (reasoning_content, refusal, ...) are passed on untouched. */
  [field: string]: unknown;
}

export interface UpstreamChoice {
  index?: number;
  message?: UpstreamMessage;
  finish_reason?: string | null;
  [field: string]: unknown;
}

export interface UpstreamCompletion {
  id?: string;
  choices: UpstreamChoice[];
  usage?: UpstreamUsage | null;
  [field: string]: unknown;
}

export interface UpstreamDelta {
  role?: string;
  content?: string | null;
  tool_calls?: unknown[];
  [field: string]: unknown;
}

export interface UpstreamChunkChoice {
  index?: number;
  delta?: UpstreamDelta;
  finish_reason?: string | null;
  [field: string]: unknown;
}

export interface UpstreamChunk {
  id?: string;
  choices?: UpstreamChunkChoice[];
  usage?: UpstreamUsage | null;
  [field: string]: unknown;
}
