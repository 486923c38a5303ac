/**
 * `npm run fake-llm`: the test suite's OpenAI-compatible stand-in for an LLM, to try chat without one. It
 * answers every model name with one fixed, gentle reply (streamed when asked: first word after 20 ms, then
 * one every 30 ms). FAKE_LLM_PORT sets its port (8081).
 */
import { FakeLlm } from '../test/helpers/fake-llm.js';

const setting = process.env['FAKE_LLM_PORT'] || '8081';
const port = Number(setting);
if (!/^\d+$/.test(setting) || port > 65_535) {
  console.error(`fake-llm: FAKE_LLM_PORT must be a port number, not ${JSON.stringify(setting)}`);
  process.exit(1);
}
try {
  const llm = await FakeLlm.start({ port, defaultBehavior: { kind: 'reply', ttftMs: 20, tokenMs: 30 } });
  console.log(`fake OpenAI-compatible LLM on ${llm.url}; start Sentio with SENTIO_LLM_BASE_URL=${llm.url}`);
} catch (err) {
  console.error(`fake-llm: cannot listen on 127.0.0.1:${port}: ${(err as Error).message}`);
  process.exit(1);
}
