/**
 * `npm run bench:chat [-- --quick]`: what Sentio adds to a chat request, per request.
 *
 * The same requests go once straight to an OpenAI-compatible upstream and once through Sentio's
 * /v2/chat/completions in front of that upstream; the difference is Sentio's added latency: total time,
 * and for streams the time to the first content token (TTFT). Scenarios: non-streaming and streaming, at
 * 1 and 64 concurrent requests, plus streaming with emotion guidance off (the analysis then runs beside
 * the LLM call instead of before it).
 *
 * The upstream is test/helpers/fake-llm.ts in its own process (profiles below); Sentio runs as
 * `npm start` runs it (own process, default logging, CPU engine); the load generator runs here. All
 * three share this machine. Bars (issue 6): p50 added ≤ 5 ms non-streaming, p50 TTFT added ≤ 3 ms.
 * Last, analysis latency beside chat turns with long messages, against a Sentio that reads their words on
 * its event loop (besideLongMessages). Results: bench/results/chat-<time>.json, then one JSON line on stdout.
 */
import http from 'node:http';
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { freePort, startChild } from './lib/process.js';
import type { Child } from './lib/process.js';
import { benchTexts } from './lib/texts.js';
import { percentile, round } from './lib/stats.js';
import { writeResults } from './lib/results.js';
import { describeMachine } from './lib/machine.js';
import { FakeLlm } from '../test/helpers/fake-llm.js';

/**
 * Two upstream profiles, picked by model name. `fast` (first token after 20 ms, a word every 2 ms) keeps
 * the one-at-a-time runs short; `paced` is an LLM serving 64 streams at 40 tokens/s each (first token
 * after 150 ms, a word every 25 ms). At 64 concurrent requests the fast profile would offer ~2,500
 * requests/s, which measures how many requests two shared cores can score, not what Sentio adds to
 * each one; the paced profile offers what 64 real streams do (~70 requests/s).
 */
const PROFILES = { fast: { ttftMs: 20, tokenMs: 2 }, paced: { ttftMs: 150, tokenMs: 25 } } as const;
type Profile = keyof typeof PROFILES;
const REPLY_WORDS = 24;
const KEY = 'sentio_bench_key';
const quick = process.argv.includes('--quick');
const log = (s: string) => process.stderr.write(`${s}\n`);

interface Sample {
  total: number;
  ttft: number;
  ok: boolean;
}

interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  mean: number;
}

interface Scenario {
  name: string;
  stream: boolean;
  concurrency: number;
  guidance: boolean;
  profile: Profile;
  requests: number;
  direct: { total: Percentiles; ttft: Percentiles; errors: number };
  sentio: { total: Percentiles; ttft: Percentiles; errors: number };
  added: { total: Percentiles; ttft: Percentiles };
  sentioCpuMsPerRequest: number;
}

/** CPU time (user + system) a process has used, in ms, from /proc (Linux). */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}
const CLOCK_TICKS = 100; // USER_HZ on Linux

function percentiles(xs: number[]): Percentiles {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => round(percentile(s, p) ?? NaN, 2);
  return { p50: at(50), p90: at(90), p99: at(99), mean: round(s.reduce((a, b) => a + b, 0) / s.length, 2) };
}

function diff(a: Percentiles, b: Percentiles): Percentiles {
  const r = (x: number) => round(x, 2);
  return { p50: r(a.p50 - b.p50), p90: r(a.p90 - b.p90), p99: r(a.p99 - b.p99), mean: r(a.mean - b.mean) };
}

/** One request; TTFT is when the first non-empty content delta arrives (the whole reply without streaming). */
function once(agent: http.Agent, port: number, path: string, headers: Record<string, string>, body: string, stream: boolean): Promise<Sample> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let ttft: number | undefined;
    let ok = true;
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      ok = res.statusCode === 200;
      res.setEncoding('utf8');
      let tail = '';
      res.on('data', (chunk: string) => {
        if (stream && ttft === undefined && /"content":"[^"]/.test(chunk)) ttft = performance.now() - t0;
        tail = (tail + chunk).slice(-4096);
      });
      res.on('end', () => {
        const total = performance.now() - t0;
        if (stream && (!tail.includes('[DONE]') || tail.includes('"error":{'))) ok = false;
        resolve({ total, ttft: ttft ?? total, ok });
      });
      res.on('error', () => resolve({ total: performance.now() - t0, ttft: NaN, ok: false }));
    });
    req.on('error', () => resolve({ total: performance.now() - t0, ttft: NaN, ok: false }));
    req.end(body);
  });
}

/**
 * Closed loop: `concurrency` workers, each sending its next request when the last one ends. Worker k
 * starts k·staggerMs late, so the requests are spread over the reply's duration as the streams of real,
 * independent users are, instead of arriving (and being scored) in bursts of 64.
 */
async function run(
  port: number, path: string, headers: Record<string, string>, makeBody: (i: number) => string,
  stream: boolean, concurrency: number, requests: number, staggerMs = 0,
): Promise<Sample[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const samples: Sample[] = [];
  let next = 0;
  const worker = async (k: number) => {
    if (staggerMs) await new Promise((r) => setTimeout(r, k * staggerMs));
    for (;;) {
      const i = next++;
      if (i >= requests) return;
      samples.push(await once(agent, port, path, headers, makeBody(i), stream));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, k) => worker(k)));
  agent.destroy();
  return samples;
}

async function main(): Promise<void> {
  log(`bench chat (${quick ? 'quick' : 'full'}): ${os.cpus().length} × ${os.cpus()[0]?.model}, node ${process.version}, load average ${os.loadavg()[0]!.toFixed(2)}`);
  for (const [name, p] of Object.entries(PROFILES)) log(`upstream ${name}: first token after ${p.ttftMs} ms, then ${REPLY_WORDS} words, one every ${p.tokenMs} ms`);
  const texts = benchTexts();
  const loadAverageAtStart = os.loadavg()[0];
  const upstream = await startChild(process.argv[1]!, ['--upstream'], {}, '"fake llm listening"');
  let sentio: Child | undefined;
  try {
    sentio = await startServer(upstream.port);
    const scenarios: Scenario[] = [];
    const plan: Array<{ stream: boolean; concurrency: number; guidance: boolean; profile: Profile }> = [
      { stream: false, concurrency: 1, guidance: true, profile: 'fast' },
      { stream: true, concurrency: 1, guidance: true, profile: 'fast' },
      { stream: true, concurrency: 1, guidance: false, profile: 'fast' },
      { stream: false, concurrency: 64, guidance: true, profile: 'paced' },
      { stream: true, concurrency: 64, guidance: true, profile: 'paced' },
      { stream: true, concurrency: 64, guidance: false, profile: 'paced' },
      { stream: true, concurrency: 64, guidance: true, profile: 'fast' },
    ];
    for (const p of plan) {
      const requests = p.concurrency === 1 ? (quick ? 60 : 250) : (quick ? 320 : 1_280);
      const warmup = p.concurrency === 1 ? 20 : 128;
      const messages = (i: number) => [{ role: 'user', content: texts[i % texts.length]! }];
      const directBody = (i: number) => JSON.stringify({ model: p.profile, messages: messages(i), stream: p.stream, ...(p.stream ? { stream_options: { include_usage: true } } : {}) });
      const sentioBody = (i: number) => JSON.stringify({
        model: p.profile, emotion_model: 'emotion-v2', messages: messages(i), stream: p.stream,
        ...(p.guidance ? {} : { emotion_guidance: false }),
      });
      const profile = PROFILES[p.profile];
      const stagger = (profile.ttftMs + REPLY_WORDS * profile.tokenMs) / p.concurrency;
      const direct = () => run(upstream.port, '/v1/chat/completions', {}, directBody, p.stream, p.concurrency, requests, stagger);
      const viaSentio = () => run(sentio!.port, '/v2/chat/completions', { 'x-api-key': KEY }, sentioBody, p.stream, p.concurrency, requests, stagger);
      await run(upstream.port, '/v1/chat/completions', {}, directBody, p.stream, p.concurrency, warmup);
      await run(sentio.port, '/v2/chat/completions', { 'x-api-key': KEY }, sentioBody, p.stream, p.concurrency, warmup);
      // Alternate the two halves so drift (thermal, other load) hits both alike.
      let cpu = 0;
      const timedSentio = async () => {
        const before = cpuMs(sentio!.child.pid);
        const r = await viaSentio();
        cpu += cpuMs(sentio!.child.pid) - before;
        return r;
      };
      const d1 = await direct();
      const s1 = await timedSentio();
      const d2 = await direct();
      const s2 = await timedSentio();
      const d = [...d1, ...d2];
      const s = [...s1, ...s2];
      const dTotal = percentiles(d.filter((x) => x.ok).map((x) => x.total));
      const sTotal = percentiles(s.filter((x) => x.ok).map((x) => x.total));
      const dTtft = percentiles(d.filter((x) => x.ok).map((x) => x.ttft));
      const sTtft = percentiles(s.filter((x) => x.ok).map((x) => x.ttft));
      const name = `${p.stream ? 'stream' : 'non-stream'} c=${p.concurrency} ${p.profile}${p.guidance ? '' : ' guidance off'}`;
      const sc: Scenario = {
        name, stream: p.stream, concurrency: p.concurrency, guidance: p.guidance, profile: p.profile, requests: 2 * requests,
        direct: { total: dTotal, ttft: dTtft, errors: d.filter((x) => !x.ok).length },
        sentio: { total: sTotal, ttft: sTtft, errors: s.filter((x) => !x.ok).length },
        added: { total: diff(sTotal, dTotal), ttft: diff(sTtft, dTtft) },
        // Sentio's own CPU per request: a figure that other load on the machine does not inflate.
        sentioCpuMsPerRequest: Math.round((cpu / (2 * requests)) * 100) / 100,
      };
      scenarios.push(sc);
      const f = (x: Percentiles) => `p50 ${x.p50.toFixed(2)} p90 ${x.p90.toFixed(2)} p99 ${x.p99.toFixed(2)}`;
      log(`${name.padEnd(34)} direct total ${f(dTotal)} | sentio total ${f(sTotal)} | added total ${f(sc.added.total)} ms  errors ${sc.direct.errors}/${sc.sentio.errors}  sentio CPU ${sc.sentioCpuMsPerRequest} ms/request`);
      if (p.stream) log(`${''.padEnd(34)} direct TTFT  ${f(dTtft)} | sentio TTFT  ${f(sTtft)} | added TTFT  ${f(sc.added.ttft)} ms`);
    }
    const byName = (n: string) => scenarios.find((s) => s.name === n)!;
    const bars = {
      nonStreamAddedP50Ms: { c1: byName('non-stream c=1 fast').added.total.p50, c64: byName('non-stream c=64 paced').added.total.p50, bar: 5 },
      ttftAddedP50Ms: { c1: byName('stream c=1 fast').added.ttft.p50, c64: byName('stream c=64 paced').added.ttft.p50, bar: 3 },
    };
    const pass = {
      nonStreamC1: bars.nonStreamAddedP50Ms.c1 <= 5, nonStreamC64: bars.nonStreamAddedP50Ms.c64 <= 5,
      ttftC1: bars.ttftAddedP50Ms.c1 <= 3, ttftC64: bars.ttftAddedP50Ms.c64 <= 3,
    };
    log(`bars: non-stream p50 added ${bars.nonStreamAddedP50Ms.c1} ms (c=1), ${bars.nonStreamAddedP50Ms.c64} ms (c=64), bar 5 ms; `
      + `TTFT p50 added ${bars.ttftAddedP50Ms.c1} ms (c=1), ${bars.ttftAddedP50Ms.c64} ms (c=64), bar 3 ms`);
    const sentioRssMb = Math.round(sentio.rssMb());
    const longMessages = await besideLongMessages(upstream.port, sentio, texts);
    const machine = { ...describeMachine(), quick, loadAverageAtStart, loadAverageAtEnd: os.loadavg()[0] };
    const upstreamSpec = { profiles: PROFILES, words: REPLY_WORDS };
    const result = { bench: 'chat', machine, upstream: upstreamSpec, scenarios, bars, pass, sentioRssMb, longMessages };
    writeResults('chat', result);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await sentio?.stop();
    await upstream.stop();
  }
}

function startServer(upstreamPort: number, env: Record<string, string> = {}): Promise<Child> {
  return freePort().then((port) => startChild('dist/src/main.js', [], {
    SENTIO_PORT: String(port), SENTIO_API_KEYS: KEY, SENTIO_RATE_LIMIT_RPM: '1000000000',
    SENTIO_EXECUTION_PROVIDER: 'cpu', SENTIO_LLM_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
    SENTIO_LLM_MODELS: 'fast=fast,paced=paced', ...env,
  }, '"sentio listening"'));
}

/**
 * What chat turns carrying long messages do to everyone else: single-text analysis requests (4 connections)
 * beside chat turns (4 connections, fast upstream) whose four user messages are about 8 KB each, which the
 * crisis rules read. Sentio as configured (the messages' words read on a thread of their own) against the same
 * build reading them on its event loop (SENTIO_CHAT_READ_THREAD=0), in alternating rounds.
 */
async function besideLongMessages(upstreamPort: number, threaded: Child, texts: readonly string[]) {
  const long = (k: number) => {
    let s = '';
    for (let j = k; Buffer.byteLength(`${s}${texts[j % texts.length]!} `) < 8_000; j++) s += `${texts[j % texts.length]!} `;
    return s.trim();
  };
  const chatBody = (i: number) => JSON.stringify({
    model: 'fast', emotion_model: 'emotion-v2',
    messages: [0, 1, 2, 3].flatMap((m) => [{ role: 'user', content: long(31 * (4 * i + m)) }, ...(m < 3 ? [{ role: 'assistant', content: 'I see.' }] : [])]),
  });
  const analysisBody = (i: number) => JSON.stringify({ messages: [{ role: 'user', content: { text: texts[i % texts.length]! } }] });
  const headers = { 'x-api-key': KEY };
  const chats = quick ? 40 : 120;
  const onLoop = await startServer(upstreamPort, { SENTIO_CHAT_READ_THREAD: '0' });
  try {
    const servers = { thread: threaded, loop: onLoop };
    const samples = { thread: { analysis: [] as Sample[], chat: [] as Sample[] }, loop: { analysis: [] as Sample[], chat: [] as Sample[] } };
    for (const child of Object.values(servers)) await run(child.port, '/v2/chat/completions', headers, chatBody, false, 4, 8);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // the reading thread starts with the first long turn
    for (let round = 0; round < (quick ? 1 : 2); round++) {
      for (const [name, child] of Object.entries(servers) as Array<[keyof typeof servers, Child]>) {
        let chatting = true;
        const chat = run(child.port, '/v2/chat/completions', headers, chatBody, false, 4, chats).finally(() => (chatting = false));
        const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
        const analysis: Sample[] = [];
        let i = 0;
        await Promise.all([0, 1, 2, 3].map(async () => {
          while (chatting) analysis.push(await once(agent, child.port, '/v2/emotions/analysis', headers, analysisBody(i++), false));
        }));
        agent.destroy();
        samples[name].analysis.push(...analysis);
        samples[name].chat.push(...(await chat));
      }
    }
    const summary = (s: { analysis: Sample[]; chat: Sample[] }) => {
      const ok = s.analysis.filter((x) => x.ok).map((x) => x.total);
      return {
        analysis: { ...percentiles(ok), max: round(Math.max(...ok), 2), requests: s.analysis.length, errors: s.analysis.length - ok.length },
        chat: { ...percentiles(s.chat.filter((x) => x.ok).map((x) => x.total)), requests: s.chat.length, errors: s.chat.filter((x) => !x.ok).length },
      };
    };
    const result = { thread: summary(samples.thread), loop: summary(samples.loop), loopVsThreadAnalysisP99: 0 };
    result.loopVsThreadAnalysisP99 = round(result.loop.analysis.p99 / result.thread.analysis.p99, 2);
    for (const name of ['thread', 'loop'] as const) {
      const r = result[name];
      log(`beside long chat turns, words read on the ${name === 'thread' ? 'reading thread' : 'event loop  '}: analysis p50 ${r.analysis.p50.toFixed(2)} p99 ${r.analysis.p99.toFixed(2)} max ${r.analysis.max.toFixed(2)} ms (${r.analysis.requests} requests, errors ${r.analysis.errors}); chat p50 ${r.chat.p50.toFixed(2)} p99 ${r.chat.p99.toFixed(2)} ms (${r.chat.requests}, errors ${r.chat.errors})`);
    }
    log(`beside long chat turns: analysis p99 on the event loop / on the reading thread ${result.loopVsThreadAnalysisP99}`);
    return result;
  } finally {
    await onLoop.stop();
  }
}

/** Role of this process: the load generator (default) or the fake upstream. */
async function serveUpstream(): Promise<void> {
  const reply = Array.from({ length: REPLY_WORDS }, (_, i) => ['I', 'hear', 'you', 'and', 'that', 'sounds', 'hard'][i % 7]).join(' ') + '.';
  const llm = await FakeLlm.start({
    byModel: Object.fromEntries(Object.entries(PROFILES).map(([name, p]) => [name, { kind: 'reply', content: reply, ...p }])),
  });
  // Records are for tests; a long benchmark must not keep every request.
  setInterval(() => llm.reset(), 1_000).unref();
  // A clean exit, so that the bench removes this process's log folder (bench/lib/process.ts).
  process.on('SIGTERM', () => void llm.close().finally(() => process.exit(0)));
  process.stdout.write(`${JSON.stringify({ msg: 'fake llm listening', port: Number(new URL(llm.url).port) })}\n`);
}

// Last, once every declaration above is initialised.
if (process.argv.includes('--upstream')) await serveUpstream();
else await main();
