/** Configuration bounds: a value the config accepts is one the server can run with. */
import { describe, expect, it } from 'vitest';
import { checkStartup, loadConfig, unknownSettings } from '../../src/config.js';
import { resolveEngineOptions } from '../../src/engine/options.js';

const KEY = 'sk_config_test_key_0123456789';

describe('config bounds', () => {
  // Past the engine's own bounds, the start failed after the model had loaded, naming `maxQueue` instead
  // of SENTIO_QUEUE_MAX.
  it('the largest value of each engine setting is one the engine takes; one more names the variable', () => {
    const largest: Record<string, number> = {
      SENTIO_QUEUE_MAX: 2 ** 30, SENTIO_BATCH_MAX_TOKENS: 2 ** 30, SENTIO_BATCH_MAX_SIZE: 4_096, SENTIO_BATCH_STREAM_CHUNK: 4_096,
      SENTIO_INFERENCE_THREADS: 256, SENTIO_INTRA_OP_THREADS: 1_024, SENTIO_INTER_OP_THREADS: 1_024, SENTIO_THREAD_NICE: 19,
      SENTIO_BATCH_MAX_WAIT_MS: 1_000, SENTIO_RUN_MAX_TOKENS: 2 ** 24, SENTIO_HYBRID_MIN_TEXTS: 2 ** 30,
    };
    for (const [name, max] of Object.entries(largest)) {
      const config = loadConfig({ SENTIO_API_KEYS: KEY, [name]: String(max) });
      expect(() => resolveEngineOptions(config.engine), name).not.toThrow();
      expect(() => loadConfig({ SENTIO_API_KEYS: KEY, [name]: String(max + 1) }), name).toThrow(new RegExp(name));
    }
  });

  it('maps SENTIO_BATCH_LANE, SENTIO_RUN_MAX_TOKENS, SENTIO_BATCH_MAX_TOKENS and SENTIO_FUSED_POOLING onto the engine options', () => {
    expect(loadConfig({ SENTIO_API_KEYS: KEY }).engine).toMatchObject({ priorityLane: true, maxRunTokens: 1024, maxBatchTokens: 0, fusedPooling: true });
    expect(loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_BATCH_LANE: '0', SENTIO_RUN_MAX_TOKENS: '0', SENTIO_BATCH_MAX_TOKENS: '4096', SENTIO_FUSED_POOLING: '0' }).engine)
      .toMatchObject({ priorityLane: false, maxRunTokens: 0, maxBatchTokens: 4096, fusedPooling: false });
  });

  it('maps SENTIO_EXECUTION_PROVIDER=hybrid and SENTIO_HYBRID_MIN_TEXTS onto the engine options', () => {
    expect(loadConfig({ SENTIO_API_KEYS: KEY }).engine).toMatchObject({ executionProvider: 'auto', hybridMinTexts: 32 });
    expect(loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_EXECUTION_PROVIDER: 'hybrid', SENTIO_HYBRID_MIN_TEXTS: '64' }).engine)
      .toMatchObject({ executionProvider: 'hybrid', hybridMinTexts: 64 });
    expect(() => loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_HYBRID_MIN_TEXTS: '0' })).toThrow(/SENTIO_HYBRID_MIN_TEXTS/);
  });

  it('SENTIO_CONTEXT_MAX_MB must hold one full context', () => {
    expect(loadConfig({ SENTIO_API_KEYS: KEY }).contextMaxBytes).toBe(512 * 1_048_576);
    // 1,000 messages of 8 KiB and their overhead: about 9 MiB
    expect(() => loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_CONTEXT_MAX_MB: '8' })).toThrow(/SENTIO_CONTEXT_MAX_MB: .*at least 9/);
    expect(loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_CONTEXT_MAX_MB: '9' }).contextMaxBytes).toBe(9 * 1_048_576);
    expect(loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_CONTEXT_MAX_MB: '1', SENTIO_CONTEXT_MAX_MESSAGES: '100' }).contextMaxBytes).toBe(1_048_576);
    // With Redis the in-process bound applies to nothing, and is not checked.
    expect(() => loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_CONTEXT_MAX_MB: '1', SENTIO_REDIS_URL: 'redis://127.0.0.1:6379' })).not.toThrow();
  });

  // Found by an operator review (2026-11-26): each started, and misbehaved.
  it('contradictions are refused, naming the variable: a body smaller than a message, a model named twice, no model', () => {
    expect(() => loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_MAX_BODY_BYTES: '60' })).toThrow(/^SENTIO_MAX_BODY_BYTES: must be at least SENTIO_MAX_MESSAGE_BYTES \(8192\)/);
    expect(loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_MAX_BODY_BYTES: '60', SENTIO_MAX_MESSAGE_BYTES: '60' }).limits.bodyBytes).toBe(60);
    expect(() => loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_LLM_MODELS: 'm=a,m=b' })).toThrow(/^SENTIO_LLM_MODELS: the public name "m" is given twice/);
    expect(() => loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_LLM_MODELS: ' , ' })).toThrow(/^SENTIO_LLM_MODELS: no public=upstream pair/);
    expect([...loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_LLM_MODELS: 'm=a, n=a' }).llm.models]).toEqual([['m', 'a'], ['n', 'a']]);
  });

  it('an IPv6 host written with brackets, as in a URL, is bound without them', () => {
    expect(loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_HOST: '[::1]' }).host).toBe('::1');
  });

  // Found by an operator review (2026-11-27): the long spellings of loopback were refused as public.
  it('plain HTTP is allowed on loopback in any spelling, and refused elsewhere', () => {
    for (const host of ['127.0.0.1', '127.3.2.1', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'LOCALHOST']) {
      expect(checkStartup(loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_HOST: host }))[0], host).toMatch(/^plain HTTP on loopback/);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '::ffff:10.0.0.1', 'example.com']) {
      expect(() => checkStartup(loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_HOST: host })), host).toThrow(/refusing plain HTTP on non-loopback/);
    }
  });

  it('plaintext keys beside a key file are named in a warning', () => {
    expect(checkStartup(loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_API_KEYS_FILE: '/tmp/keys.json' }))[0]).toMatch(/^SENTIO_API_KEYS and SENTIO_API_KEYS_FILE are both set/);
    expect(checkStartup(loadConfig({ SENTIO_API_KEYS: KEY }))).toHaveLength(1);
  });

  it('a Redis URL node cannot read names its variable', () => {
    const cases: Array<[string, RegExp]> = [
      ['redis://localhost:99999', /not a URL this server can read/], // said to be the wrong scheme until 2026-11-28
      ['not a url', /not a URL this server can read/],
      ['http://localhost:6379', /expected a redis:\/\/ or rediss:\/\/ URL/],
      ['redis://localhost:6379/abc', /database number/],
    ];
    for (const [url, why] of cases) {
      expect(() => loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_REDIS_URL: url }), url).toThrow(/^SENTIO_REDIS_URL: /);
      expect(() => loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_REDIS_URL: url }), url).toThrow(why);
    }
    expect(loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_REDIS_URL: 'rediss://:pw@h.example:6380/2' }).redisUrl).toBe('rediss://:pw@h.example:6380/2');
  });

  // With a limit of 3, three quarters rounded up let one key hold every slot.
  it('the default share of one key always leaves another key a slot', () => {
    const share = (limit: number) => loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_MAX_IN_FLIGHT: String(limit) }).maxInFlightPerKey;
    expect([1, 2, 3, 4, 8, 512].map(share)).toEqual([1, 1, 2, 3, 6, 384]);
  });

  // The LRU sets aside its index for every slot at start: 200 million slots failed after 8 s and 1.7 GB.
  it('SENTIO_CONTEXT_MAX is bounded at ten million contexts', () => {
    expect(loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_CONTEXT_MAX: '10000000' }).contextMax).toBe(10_000_000);
    expect(() => loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_CONTEXT_MAX: '10000001' })).toThrow(/SENTIO_CONTEXT_MAX/);
    expect(() => loadConfig({ SENTIO_API_KEYS: KEY, SENTIO_CONTEXT_MAX: '9007199254740991' })).toThrow(/SENTIO_CONTEXT_MAX/);
  });
});

describe('unknown settings', () => {
  it('a SENTIO_ variable no setting reads is named in a warning, with the nearest setting', () => {
    expect(unknownSettings({ SENTIO_MAX_INFLIGHT: '4', SENTIO_PORT: '1', SENTIO_TEST_STORE: 'redis', PATH: '/bin' })).toEqual([
      'SENTIO_MAX_INFLIGHT is not a Sentio setting and is ignored; did you mean SENTIO_MAX_IN_FLIGHT?',
    ]);
    expect(unknownSettings({ SENTIO_COLOUR: 'blue' })).toEqual(['SENTIO_COLOUR is not a Sentio setting and is ignored']);
    expect(unknownSettings({ SENTIO_NATIVE_ADDON: '/x.node', SENTIO_LOG_LEVEL: 'info', SENTIO_PACKED_GRU_ISA: 'base' })).toEqual([]); // read by the addon
  });
});
