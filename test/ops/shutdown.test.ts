import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeLlm } from '../helpers/fake-llm.js';
import { startServerProcess } from '../helpers/process.js';
import { startTestServer, TEST_KEY } from '../helpers/server.js';
import { parseHead } from '../helpers/raw-http.js';
import { waitFor } from '../helpers/wait.js';

const KEY = 'sentio_test_shutdown_key';

describe('graceful shutdown', () => {
  it('SIGTERM under load: stops accepting, finishes every in-flight request, exits 0', async () => {
    const p = await startServerProcess({ SENTIO_API_KEYS: KEY });
    const body = JSON.stringify({ messages: Array.from({ length: 64 }, (_, i) => ({ content: { text: `message ${i}: I feel a mix of hope and worry about tomorrow` } })) });
    let stop = false;
    const results = { ok: 0, failedInFlight: 0, started: 0 };
    const worker = async () => {
      while (!stop) {
        // Every request issued here was issued before SIGTERM was sent (kill and stop=true run in one tick).
        results.started++;
        try {
          const r = await fetch(`${p.base}/v2/emotions/batch-analysis`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body });
          if (r.status === 200) results.ok++;
          else results.failedInFlight++;
          await r.arrayBuffer();
        } catch {
          results.failedInFlight++;
        }
      }
    };
    const workers = Array.from({ length: 16 }, worker);
    await new Promise((r) => setTimeout(r, 1_500));
    const inFlightAtStop = results.started - results.ok - results.failedInFlight; // sent and not yet answered
    const okBefore = results.ok;
    p.child.kill('SIGTERM');
    stop = true;
    await Promise.all(workers);
    const code = await p.exited;
    expect(code).toBe(0);
    expect(okBefore).toBeGreaterThan(0); // it was serving
    expect(inFlightAtStop).toBeGreaterThan(0); // and had requests in flight when the signal came
    expect(results.failedInFlight).toBe(0);
    expect(results.ok).toBe(results.started); // every one of them answered 200
    expect(p.output.some((l) => l.includes('shutting down'))).toBe(true);
    // Log lines still queued for writing at exit are written too: one access line per answered request.
    expect(p.output.filter((l) => l.includes('"msg":"request"')).length).toBe(results.ok);
    // The port no longer accepts.
    await expect(fetch(`${p.base}/healthz`)).rejects.toThrow();
  }, 90_000);

  // The check after exit cannot tell whether the port stopped accepting when the drain began or only when
  // the process ended; a load balancer needs the former (and /readyz saying so, docs/deployment.md).
  it('while draining: a new connection is refused and /readyz on an open keep-alive connection is 503 not_ready', async () => {
    const llm = await FakeLlm.start();
    const s = await startTestServer({ SENTIO_LLM_BASE_URL: llm.url, SENTIO_LLM_TIMEOUT_MS: '60000' });
    const conn = await keepAlive(s.sentio.port);
    const unmatched = await keepAlive(s.sentio.port);
    let closed: Promise<void> | undefined;
    try {
      const before = await conn.get('/readyz');
      expect(before.status).toBe(200);
      expect(before.headers['connection']).not.toBe('close');
      // A chat the upstream never answers holds the drain open until the grace period ends.
      llm.enqueue({ kind: 'hang' });
      let chatStatus: number | undefined;
      const chat = s.post('/v2/chat/completions', { model: 'llm-k2-thinking-turbo', emotion_model: 'emotion-v2', messages: [{ role: 'user', content: 'hi' }] })
        .then((r) => { chatStatus = r.status; });
      for (const until = Date.now() + 10_000; llm.received.length === 0;) {
        expect(Date.now(), 'the chat never reached the upstream').toBeLessThan(until);
        await new Promise((r) => setTimeout(r, 10));
      }
      closed = s.sentio.close(3_000);
      expect(await connectError(s.sentio.port)).toBe('ECONNREFUSED');
      const during = await conn.get('/readyz');
      expect(during.status).toBe(503);
      expect(JSON.parse(during.body).error.code).toBe('not_ready');
      expect(during.headers['connection']).toBe('close'); // a draining server closes each connection after its reply
      const nowhere = await unmatched.get('/nowhere'); // a request no route takes: answered the same way
      expect(nowhere.status).toBe(404);
      expect(nowhere.headers['connection']).toBe('close');
      expect(chatStatus, 'the drain had already ended').toBeUndefined();
      await closed;
      await chat;
      expect(chatStatus).toBe(503); // cut at the end of the grace period
    } finally {
      conn.destroy();
      unmatched.destroy();
      await (closed ?? s.close());
      await llm.close();
    }
  }, 30_000);

  // Its upstream call stayed open until SENTIO_LLM_TIMEOUT_MS, and its queued texts in the engine. closeAll()
  // alone (the end of the grace period, before the stores and the upstream's pool close) shows the cut.
  it('a request cut at the end of the grace period has its work cancelled: its upstream call closes', async () => {
    const llm = await FakeLlm.start();
    const s = await startTestServer({ SENTIO_LLM_BASE_URL: llm.url, SENTIO_LLM_TIMEOUT_MS: '60000' });
    try {
      llm.enqueue({ kind: 'hang' });
      const chat = s.post('/v2/chat/completions', { model: 'llm-k2-thinking-turbo', emotion_model: 'emotion-v2', messages: [{ role: 'user', content: 'hi' }] });
      await waitFor(() => llm.received.length > 0);
      expect(llm.received).toHaveLength(1);
      s.sentio.server.closeAll();
      expect((await chat).status).toBe(503);
      await waitFor(() => llm.received[0]!.closedEarly, { ms: 5_000 });
      expect(llm.received[0]!.closedEarly).toBe(true);
    } finally {
      await s.close();
      await llm.close();
    }
  });

  it('SENTIO_SHUTDOWN_GRACE_MS bounds the drain; a second signal while draining exits at once', async () => {
    const llm = await FakeLlm.start();
    try {
      const chat = (base: string) => fetch(`${base}/v2/chat/completions`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY },
        body: JSON.stringify({ model: 'llm-k2-thinking-turbo', emotion_model: 'emotion-v2', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const env = { SENTIO_API_KEYS: KEY, SENTIO_LLM_BASE_URL: llm.url, SENTIO_LLM_TIMEOUT_MS: '60000' };
      // The signal goes once the request is upstream: sent before the server took it, it met a closed port.
      const upstream = async (n: number) => {
        await waitFor(() => llm.received.length >= n);
        expect(llm.received).toHaveLength(n);
      };
      // A request the upstream never answers, cut when the 400 ms grace period ends: 503, exit 0.
      let p = await startServerProcess({ ...env, SENTIO_SHUTDOWN_GRACE_MS: '400' });
      llm.enqueue({ kind: 'hang' });
      const pending = chat(p.base);
      await upstream(1);
      let t0 = performance.now();
      p.child.kill('SIGTERM');
      expect((await pending).status).toBe(503);
      expect(await p.exited).toBe(0);
      expect(performance.now() - t0).toBeLessThan(3_000);
      // The same with a long grace period, and a second SIGTERM: no waiting, exit 1, said in the log, the
      // request answered 503. With HTTP workers too (exiting with a worker's uWS handles open aborted it).
      for (const [i, workers] of ['1', '2'].entries()) {
        p = await startServerProcess({ ...env, SENTIO_SHUTDOWN_GRACE_MS: '60000', SENTIO_HTTP_WORKERS: workers });
        llm.enqueue({ kind: 'hang' });
        const cut = chat(p.base).then((r) => r.status, () => 'reset');
        await upstream(2 + i);
        t0 = performance.now();
        p.child.kill('SIGTERM');
        const draining = p.output;
        await waitFor(() => draining.some((l) => l.includes('shutting down: draining')));
        await new Promise((r) => setTimeout(r, 300)); // past the window in which a repeat is the same signal
        p.child.kill('SIGTERM');
        expect(await p.exited, `workers ${workers}`).toBe(1);
        expect(performance.now() - t0).toBeLessThan(3_000);
        expect(await cut).toBe(503);
        expect(p.output.some((l) => l.includes('second signal while draining'))).toBe(true);
        expect(p.output.join('\n')).not.toMatch(/open handles|Aborted/);
      }
    } finally {
      await llm.close();
    }
  }, 90_000);

  // Under `npm start`, a signal to the process group (systemd's default KillMode, Ctrl-C) reached the server
  // twice, directly and forwarded by npm, and the copy cut every request as a second signal (operator review).
  it('the same signal twice within moments is one signal: the drain finishes and the process exits 0', async () => {
    const llm = await FakeLlm.start();
    try {
      // As npm sets it for its scripts: only there does a signal come twice (signals.ts).
      const p = await startServerProcess({ SENTIO_API_KEYS: KEY, SENTIO_LLM_BASE_URL: llm.url, SENTIO_LLM_TIMEOUT_MS: '60000', npm_lifecycle_event: 'start' });
      llm.enqueue({ kind: 'reply', content: 'a reply that takes its time', ttftMs: 600 });
      const pending = fetch(`${p.base}/v2/chat/completions`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY },
        body: JSON.stringify({ model: 'llm-k2-thinking-turbo', emotion_model: 'emotion-v2', messages: [{ role: 'user', content: 'hi' }] }),
      });
      await waitFor(() => llm.received.length === 1);
      p.child.kill('SIGINT');
      // npm's copy comes a moment later (sent at once, the kernel would merge the two into one delivery)
      await new Promise((r) => setTimeout(r, 30));
      p.child.kill('SIGINT');
      const res = await pending;
      expect(res.status).toBe(200);
      expect((await res.json()).choices[0].message.content).toBe('a reply that takes its time');
      expect(await p.exited).toBe(0);
      expect(p.output.some((l) => l.includes('second signal'))).toBe(false);
    } finally {
      await llm.close();
    }
  }, 30_000);

  // With Redis its claim outlived the process: a retry on the next instance got 409 for the 15-minute lease.
  it.skipIf(process.env['SENTIO_TEST_STORE'] !== 'redis')('a request cut at the end of the grace period gives its Idempotency-Key back', async () => {
    const llm = await FakeLlm.start();
    try {
      const env = { SENTIO_API_KEYS: KEY, SENTIO_LLM_BASE_URL: llm.url, SENTIO_LLM_TIMEOUT_MS: '60000', SENTIO_REDIS_PREFIX: `cut${Date.now()}:` };
      const chat = (base: string) => fetch(`${base}/v2/chat/completions`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY, 'idempotency-key': 'cut-by-shutdown' },
        body: JSON.stringify({ model: 'llm-k2-thinking-turbo', emotion_model: 'emotion-v2', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const a = await startServerProcess({ ...env, SENTIO_SHUTDOWN_GRACE_MS: '300' });
      llm.enqueue({ kind: 'hang' });
      const pending = chat(a.base);
      await waitFor(() => llm.received.length > 0);
      expect(llm.received).toHaveLength(1);
      a.child.kill('SIGTERM');
      expect((await pending).status).toBe(503);
      expect(await a.exited).toBe(0);
      const b = await startServerProcess(env);
      try {
        expect((await chat(b.base)).status).toBe(200);
      } finally {
        b.child.kill('SIGTERM');
        await b.exited;
      }
    } finally {
      await llm.close();
    }
  }, 60_000);

  // Node's default for SIGTERM ended a server still loading its model with 143, and no line said why.
  // Under `npm start` the copy of a process group's signal arrived during the start too, and exited 1.
  // Outside npm a second signal is the operator's, however close: while the model loaded, two sent 300-450 ms
  // apart were handled moments apart and taken for npm's copy (overload review, 2026-11-28).
  it('SIGTERM while the server starts ends the start with 0, delivered once, or twice by npm; a second outside npm exits 1', async () => {
    for (const [twice, npm] of [[false, false], [true, true], [true, false]] as const) {
      const child = spawn(process.execPath, [path.resolve('dist/src/main.js')], {
        env: { PATH: process.env['PATH'] ?? '', SENTIO_PORT: '0', SENTIO_EXECUTION_PROVIDER: 'cpu', SENTIO_API_KEYS: KEY, ...(npm ? { npm_lifecycle_event: 'start' } : {}) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      // The first line (the plain-HTTP warning) comes once the configuration is read, before the model loads.
      let err = '';
      child.stderr!.on('data', (b: Buffer) => { err += b.toString(); });
      await Promise.race([
        new Promise<void>((resolve) => child.stdout!.once('data', (b: Buffer) => { out += b.toString(); resolve(); })),
        exited.then((code) => { throw new Error(`exited ${code} before its first line: ${err}`); }),
      ]);
      child.kill('SIGTERM');
      if (twice) {
        await new Promise((r) => setTimeout(r, 30)); // npm's copy, a moment later
        child.kill('SIGTERM');
      }
      child.stdout!.on('data', (b: Buffer) => { out += b.toString(); });
      const second = twice && !npm;
      expect(await exited, `twice: ${twice}, npm: ${npm}`).toBe(second ? 1 : 0);
      if (!second) expect(out).toContain('stopped while starting');
      else expect(err).toContain('a second stop signal (SIGTERM) while starting'); // an ops review found it silent
      expect(out).not.toContain('sentio listening');
    }
  }, 60_000);

  it('SENTIO_EXECUTION_PROVIDER=cuda without CUDA stops the start naming the variable, not the engine option', async () => {
    const started = await startServerProcess({ SENTIO_API_KEYS: KEY, SENTIO_EXECUTION_PROVIDER: 'cuda' }).catch((e: Error) => e);
    if (!(started instanceof Error)) { // a CUDA host: nothing to check here
      started.child.kill('SIGTERM');
      await started.exited;
      return;
    }
    expect(started.message).toMatch(/sentio: failed to start: SENTIO_EXECUTION_PROVIDER=cuda requested but the CUDA execution provider is unavailable/);
    expect(started.message).not.toContain('executionProvider');
  });

  it('SENTIO_EXECUTION_PROVIDER=hybrid starts (without CUDA on the CPUs alone, as auto) and answers single messages and batches', async () => {
    const p = await startServerProcess({ SENTIO_API_KEYS: KEY, SENTIO_EXECUTION_PROVIDER: 'hybrid', SENTIO_HYBRID_MIN_TEXTS: '4' });
    try {
      const ready = (await (await fetch(`${p.base}/readyz`)).json()) as { requestedProvider: string; provider: string; hybrid?: { minTexts: number } };
      expect(ready.requestedProvider).toBe('hybrid');
      if (ready.provider === 'hybrid') expect(ready.hybrid?.minTexts).toBe(4);
      else expect(ready.provider).toBe('cpu');
      const post = (route: string, body: unknown) =>
        fetch(`${p.base}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify(body) });
      // Six texts go to the bulk engine (on a CUDA host, the GPU), one to the CPUs: the same text scores alike.
      const texts = ['I am terrified of the dark', 'I love my family so much', 'This makes me so angry', 'What a wonderful day', 'I miss her', 'Wow, I did not expect that'];
      const batch = await post('/v2/emotions/batch-analysis', { messages: texts.map((text) => ({ content: { text } })) });
      expect(batch.status).toBe(200);
      const entries = ((await batch.json()) as { emotions: { category: string; intensity: number }[] }).emotions;
      expect(entries.map((e) => e.category).slice(0, 4)).toEqual(['fear', 'love', 'anger', 'joy']);
      const single = await post('/v2/emotions/analysis', { messages: [{ content: { text: texts[1] } }] });
      expect(single.status).toBe(200);
      const alone = ((await single.json()) as { emotions: { _default: { intensity: number } } }).emotions._default;
      expect(entries[1]!.intensity).toBeCloseTo(alone.intensity, 3);
    } finally {
      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
    }
  });

  it('refuses to start without keys, explaining how to create one', async () => {
    await expect(startServerProcess({})).rejects.toThrow(/sentio keys create/);
  });
});

/** A fresh connection's fate: 'connected' (then closed at once) or the connect error's code. */
function connectError(port: number): Promise<string> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.once('connect', () => { sock.destroy(); resolve('connected'); });
    sock.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

/** One keep-alive connection, one GET at a time on it: the same socket throughout, never a new one. */
async function keepAlive(port: number): Promise<{ get(path: string): Promise<{ status: number; headers: Record<string, string>; body: string }>; destroy(): void }> {
  const sock = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => { sock.once('connect', resolve); sock.once('error', reject); });
  let data = Buffer.alloc(0);
  let waiter: (() => void) | undefined;
  sock.on('data', (d) => { data = Buffer.concat([data, d]); waiter?.(); });
  sock.on('close', () => waiter?.());
  return {
    async get(path) {
      sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${TEST_KEY}\r\n\r\n`);
      for (;;) {
        const text = data.toString('utf8');
        const headEnd = text.indexOf('\r\n\r\n');
        if (headEnd >= 0) {
          const { status, headers } = parseHead(text.slice(0, headEnd));
          const length = Number(headers['content-length'] ?? 0);
          if (data.length >= headEnd + 4 + length) {
            data = data.subarray(headEnd + 4 + length);
            return { status, headers, body: text.slice(headEnd + 4, headEnd + 4 + length) };
          }
        }
        if (sock.destroyed) throw new Error(`connection closed before a reply to ${path}`);
        await new Promise<void>((resolve) => { waiter = resolve; setTimeout(resolve, 1_000); });
      }
    },
    destroy: () => sock.destroy(),
  };
}
