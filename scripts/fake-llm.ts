/**
 * `npm run fake-llm`: the test suite's OpenAI-compatible stand-in for an LLM, to try chat without one. It
 * answers every model name with one fixed, gentle reply (streamed when asked: first word after 20 ms, then
 * one every 30 ms). PORT sets its port (8081).
 */
import { FakeLlm } from '../test/helpers/fake-llm.js';

const port = Number(process.env['PORT'] ?? 8081);
const llm = await FakeLlm.start({ port, defaultBehavior: { kind: 'reply', ttftMs: 20, tokenMs: 30 } });
console.log(`fake OpenAI-compatible LLM on ${llm.url}; start Sentio with SENTIO_LLM_BASE_URL=${llm.url}`);
