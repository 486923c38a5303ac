import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, checkStartup, loadConfig } from '../../src/config.js';
import { startTestServer, TEST_KEY } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';

const dir = mkdtempSync(path.join(tmpdir(), 'sentio-tls-'));
const cert = path.join(dir, 'cert.pem');
const key = path.join(dir, 'key.pem');

let s: TestServer;
beforeAll(async () => {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
  s = await startTestServer({ SENTIO_TLS_CERT: cert, SENTIO_TLS_KEY: key });
});
afterAll(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true }); // private keys: not left in /tmp
});

function httpsPost(port: number, pathName: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1', port, path: pathName, method: 'POST', ca: readFileSync(cert),
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY, 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      let data = '';
      res.on('data', (d: Buffer) => (data += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('TLS', () => {
  it('serves HTTPS with the given certificate', async () => {
    const r = await httpsPost(s.sentio.port, '/v2/emotions/analysis', JSON.stringify({ messages: [{ content: { text: 'secure and happy' } }] }));
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).object).toBe('emotions.analysis');
  });

  // OpenSSL's default list offered static-RSA suites on TLS 1.2: no forward secrecy (security review).
  it('offers TLS 1.2 only forward-secret suites', async () => {
    const handshake = (ciphers: string) => new Promise<string>((resolve) => {
      const sock = tls.connect({ host: '127.0.0.1', port: s.sentio.port, ca: readFileSync(cert), maxVersion: 'TLSv1.2', ciphers }, () => {
        resolve(sock.getCipher().name);
        sock.destroy();
      });
      sock.on('error', () => resolve('refused'));
    });
    expect(await handshake('AES128-SHA:AES256-GCM-SHA384:AES128-GCM-SHA256')).toBe('refused');
    expect(await handshake('ECDHE-RSA-AES128-GCM-SHA256')).toBe('ECDHE-RSA-AES128-GCM-SHA256');
  });

  it('does not speak plain HTTP on the TLS port', async () => {
    const r = await fetch(`http://127.0.0.1:${s.sentio.port}/healthz`).then((x) => x.status, () => 'refused');
    expect(r).toBe('refused');
  });
});

describe('start-up rules', () => {
  const base = { SENTIO_API_KEYS: 'k' };
  it('without TLS: loopback only, unless SENTIO_ALLOW_INSECURE_HTTP=1; warns either way', () => {
    expect(checkStartup(loadConfig({ ...base, SENTIO_HOST: '127.0.0.1' }))[0]).toMatch(/plain HTTP on loopback/);
    expect(checkStartup(loadConfig({ ...base, SENTIO_HOST: '::1' }))[0]).toMatch(/plain HTTP on loopback/);
    expect(() => checkStartup(loadConfig({ ...base, SENTIO_HOST: '0.0.0.0' }))).toThrow(ConfigError);
    expect(checkStartup(loadConfig({ ...base, SENTIO_HOST: '0.0.0.0', SENTIO_ALLOW_INSECURE_HTTP: '1' }))[0]).toMatch(/TLS-terminating proxy/);
    expect(checkStartup(loadConfig({ ...base, SENTIO_HOST: '0.0.0.0', SENTIO_TLS_CERT: cert, SENTIO_TLS_KEY: key }))[0]).toMatch(/HTTPS only/);
  });

  it('refuses to start without keys, and says how to create one', () => {
    expect(() => checkStartup(loadConfig({}))).toThrow(/sentio keys create/);
  });

  it('rejects half a TLS configuration and bad values, naming the variable', () => {
    expect(() => loadConfig({ ...base, SENTIO_TLS_CERT: cert })).toThrow(/SENTIO_TLS_CERT and SENTIO_TLS_KEY/);
    expect(() => loadConfig({ ...base, SENTIO_PORT: 'eighty' })).toThrow(/SENTIO_PORT/);
    expect(() => loadConfig({ ...base, SENTIO_EXECUTION_PROVIDER: 'tpu' })).toThrow(/SENTIO_EXECUTION_PROVIDER/);
  });

  it('refuses TLS files that are missing or do not match, naming the variable, before anything loads', () => {
    const other = path.join(dir, 'other-key.pem');
    execFileSync('openssl', ['genrsa', '-out', other, '2048'], { stdio: 'ignore' });
    const tlsEnv = (c: string, k: string) => loadConfig({ ...base, SENTIO_TLS_CERT: c, SENTIO_TLS_KEY: k });
    expect(() => checkStartup(tlsEnv(path.join(dir, 'missing.pem'), key))).toThrow(/SENTIO_TLS_CERT: cannot read .*ENOENT/);
    expect(() => checkStartup(tlsEnv(cert, path.join(dir, 'missing.pem')))).toThrow(/SENTIO_TLS_KEY: cannot read/);
    expect(() => checkStartup(tlsEnv(cert, other))).toThrow(/SENTIO_TLS_CERT\/SENTIO_TLS_KEY: not a usable PEM/);
    expect(() => checkStartup(tlsEnv(key, cert))).toThrow(ConfigError);
  });

  it('an empty value means unset; numbers are decimal; timers fit setTimeout; the LLM URL is http(s)', () => {
    const d = loadConfig(base);
    const blank = loadConfig({ ...base, SENTIO_PORT: '', SENTIO_BATCHING: ' ', SENTIO_STEER_WAKEUPS: '', SENTIO_BATCH_STREAM_CHUNK: '', SENTIO_HEAP_GROWTH_PERCENT: '' });
    expect([blank.port, blank.engine.batching, blank.engine.steerWakeups, blank.engine.streamChunk, blank.heapGrowthPercent])
      .toEqual([d.port, d.engine.batching, d.engine.steerWakeups, d.engine.streamChunk, d.heapGrowthPercent]);
    expect(loadConfig({ ...base, SENTIO_PORT: ' 8081 ' }).port).toBe(8081);
    for (const v of ['0x50', '1e3', '80.5', '-1']) expect(() => loadConfig({ ...base, SENTIO_PORT: v }), v).toThrow(/SENTIO_PORT/);
    expect(loadConfig({ ...base, SENTIO_BATCH_MAX_WAIT_MS: '0.5' }).engine.maxWaitMs).toBe(0.5);
    for (const v of ['0x10', '1e2']) expect(() => loadConfig({ ...base, SENTIO_BATCH_MAX_WAIT_MS: v }), v).toThrow(/SENTIO_BATCH_MAX_WAIT_MS/);
    expect(loadConfig({ ...base, SENTIO_LLM_TIMEOUT_MS: '2147483647' }).llm.timeoutMs).toBe(2_147_483_647);
    expect(() => loadConfig({ ...base, SENTIO_LLM_TIMEOUT_MS: '2147483648' })).toThrow(/SENTIO_LLM_TIMEOUT_MS/);
    expect(() => loadConfig({ ...base, SENTIO_REQUEST_TIMEOUT_MS: '3000000000' })).toThrow(/SENTIO_REQUEST_TIMEOUT_MS/);
    expect(() => loadConfig({ ...base, SENTIO_LLM_BASE_URL: 'ftp://llm.example/v1' })).toThrow(/SENTIO_LLM_BASE_URL/);
  });
});
