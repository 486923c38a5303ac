/**
 * The `sentio` command: `sentio analyze "text" [...]` prints V2 entries without a server;
 * `sentio keys ...` manages the hashed API key file.
 */
import { parseArgs } from 'node:util';
import { createEngine } from '../engine/engine.js';
import { ScoreMapper } from '../core/emotions.js';
import { EmotionService } from '../core/emotion-service.js';
import { MemoryContextStore } from '../store/memory-store.js';
import { v1Entry, v2Entry } from '../api/entries.js';
import { eqParamsOf } from '../api/emotion-protocol.js';
import { EmotionParams } from '../api/schemas.js';
import { KEYS_USAGE, keysCommand } from './keys.js';
import { shippedModelDir } from '../repo-paths.js';

const USAGE = `usage:
  sentio analyze [--model emotion-v2|emotion-v1] [--params JSON] TEXT [TEXT ...]
  sentio keys create|list|revoke|rotate ...   (sentio keys for details)`;

async function analyze(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { model: { type: 'string', default: 'emotion-v2' }, params: { type: 'string' }, 'model-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const misuse = positionals.length === 0 ? 'no TEXT to analyse'
    : !['emotion-v1', 'emotion-v2'].includes(values.model) ? `unknown --model ${values.model} (emotion-v2 or emotion-v1)` : undefined;
  if (misuse) {
    console.error(`sentio: ${misuse}\n${USAGE}`);
    return 2;
  }
  let json: unknown;
  try {
    json = values.params ? JSON.parse(values.params) : {};
  } catch {
    throw new Error('--params is not JSON');
  }
  const parsed = EmotionParams.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`--params: ${issue.path.join('.') || 'the value'}: ${issue.message}`);
  }
  const params = parsed.data;
  const engine = await createEngine({
    modelDir: values['model-dir'] || process.env['SENTIO_MODEL_DIR'] || shippedModelDir(),
    executionProvider: 'cpu',
    warmup: false,
  });
  try {
    const service = new EmotionService(engine, new ScoreMapper(engine.labels), new MemoryContextStore({ ttlSeconds: 1, maxContexts: 1, maxMessagesPerContext: 1 }));
    const results = await service.analyzeBatch(positionals.map((text) => ({ role: 'user', text })), { eq: eqParamsOf(params), smoothing: 0 });
    const opts = { includeSubEmotions: params.includeSubEmotions ?? false };
    for (const a of results) console.log(JSON.stringify(values.model === 'emotion-v1' ? v1Entry(a, opts) : v2Entry(a, opts)));
  } finally {
    await engine.close();
  }
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'analyze':
      return analyze(rest);
    case 'keys':
      return keysCommand(rest);
    case '--help':
    case '-h':
    case 'help':
      console.log(USAGE);
      return 0;
    default:
      console.error(USAGE);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    // parseArgs' misuse errors run on into advice with a quote never closed: the first sentence and the usage.
    if (String((err as NodeJS.ErrnoException).code).startsWith('ERR_PARSE_ARGS')) {
      console.error(`sentio: ${(err as Error).message.split('. ')[0]}\n${process.argv[2] === 'keys' ? KEYS_USAGE : USAGE}`);
      process.exit(2);
    }
    console.error(`sentio: ${(err as Error).message}`);
    process.exit(1);
  },
);
