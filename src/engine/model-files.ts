/**
 * Reads a model directory (models/emotion by default): manifest.json for labels, output names and
 * checksums; tokenizer.json turned into the flat tables the addon takes; and model.onnx, whose sha256 is
 * checked against the manifest so that a truncated or swapped file fails at load with a clear message
 * instead of producing wrong scores.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { NativeTokenizerTables } from './binding.js';
import { ModelLoadError } from './errors.js';
import type { TokenizerFile } from '../tokenizer/wordpiece.js';

/** The parts of manifest.json the engine reads. */
export interface ModelManifest {
  name: string;
  version: string;
  max_length: number;
  outputs: {
    emotions: { labels: string[] };
    sub_emotions: { labels: string[] };
    valence_arousal: { labels: string[] };
  };
  files?: Record<string, { sha256?: string; bytes?: number }>;
}

export interface ModelFiles {
  modelPath: string;
  manifest: ModelManifest;
  tokenizer: NativeTokenizerTables;
}

export const MODEL_FILE = 'model.onnx';
export const TOKENIZER_FILE = 'tokenizer.json';
export const MANIFEST_FILE = 'manifest.json';

async function readJson<T>(path: string, what: string): Promise<T> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ModelLoadError(`cannot read ${what} ${path}: ${(err as Error).message}`, { cause: err });
  }
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new ModelLoadError(`${what} ${path} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
}

function checkManifest(m: ModelManifest, path: string): void {
  if (typeof m.name !== 'string' || !m.name || typeof m.version !== 'string' || !m.version) {
    throw new ModelLoadError(`${path}: name and version must be non-empty strings`);
  }
  if (!Number.isInteger(m.max_length) || m.max_length < 1) {
    throw new ModelLoadError(`${path}: max_length must be a positive integer`);
  }
  const labels = (o: { labels?: unknown } | undefined): boolean =>
    Array.isArray(o?.labels) && o.labels.every((l) => typeof l === 'string');
  const outs = m.outputs as Partial<ModelManifest['outputs']> | undefined;
  if (!outs || !labels(outs.emotions) || !labels(outs.sub_emotions) || !labels(outs.valence_arousal)) {
    throw new ModelLoadError(`${path}: outputs.emotions/sub_emotions/valence_arousal must each list labels`);
  }
  const va = outs.valence_arousal!.labels;
  if (!va.includes('valence') || !va.includes('arousal')) {
    throw new ModelLoadError(`${path}: outputs.valence_arousal.labels must name valence and arousal`);
  }
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function verifyChecksum(dir: string, file: string, manifest: ModelManifest): Promise<void> {
  const expected = manifest.files?.[file]?.sha256;
  // Unpinned, a swapped or damaged file would serve wrong scores without a word.
  if (typeof expected !== 'string' || !expected) {
    throw new ModelLoadError(`${join(dir, MANIFEST_FILE)} pins no sha256 for ${file} (files["${file}"].sha256); add it, e.g. from \`sha256sum ${file}\``);
  }
  const path = join(dir, file);
  const actual = await sha256File(path);
  if (actual !== expected) {
    throw new ModelLoadError(
      `${path} does not match ${MANIFEST_FILE} (sha256 ${actual}, expected ${expected}): the file is corrupt or from another model version`,
    );
  }
}

/** Flatten tokenizer.json into typed arrays so that the addon needs no JSON parser. */
function tokenizerTables(file: TokenizerFile, path: string): NativeTokenizerTables {
  if (file.algorithm !== 'sentio-wordpiece-1') {
    throw new ModelLoadError(`${path}: unsupported tokenizer algorithm ${JSON.stringify(file.algorithm)}`);
  }
  const bad = !Array.isArray(file.vocab) || !file.vocab.every((t) => typeof t === 'string') ? 'vocab must be an array of strings'
    : !Array.isArray(file.char_map) ? 'char_map must be an array'
    : !Array.isArray(file.classes) ? 'classes must be an array'
    : typeof file.special_tokens !== 'object' || file.special_tokens === null ? 'special_tokens must be an object'
    : undefined; // max_length: readModelFiles checks it against the manifest's
  if (bad) throw new ModelLoadError(`${path}: ${bad}`);
  const ids = new Map<string, number>();
  file.vocab.forEach((token, i) => ids.set(token, i)); // later duplicates win, as in the reference
  const special = (name: 'pad' | 'unk' | 'cls'): number => {
    const id = ids.get(file.special_tokens[name]);
    if (id === undefined) throw new ModelLoadError(`${path}: special token ${name} is not in the vocabulary`);
    return id;
  };
  let size = 0;
  for (const [, repl] of file.char_map) size += 2 + repl.length;
  const charMap = new Uint32Array(size);
  let at = 0;
  for (const [cp, repl] of file.char_map) {
    charMap[at++] = cp;
    charMap[at++] = repl.length;
    for (const r of repl) charMap[at++] = r;
  }
  const classes = new Uint32Array(file.classes.length * 3);
  file.classes.forEach(([first, last, cls], i) => classes.set([first, last, cls], i * 3));
  return {
    vocab: file.vocab,
    charMap,
    classes,
    continuationPrefix: file.continuation_prefix,
    maxLength: file.max_length,
    maxWordChars: file.max_word_chars,
    padId: special('pad'),
    unkId: special('unk'),
    clsId: special('cls'),
  };
}

/** The model's files, read and checked; whatever is wrong with them is a ModelLoadError naming the folder. */
export async function readModelFiles(dir: string, opts: { verifyChecksums: boolean }): Promise<ModelFiles> {
  try {
    return await readChecked(dir, opts);
  } catch (err) {
    if (err instanceof ModelLoadError) throw err;
    // A table entry of the wrong shape (a TypeError), a model path that is a folder (EISDIR), ...
    throw new ModelLoadError(`${dir}: ${(err as Error).message}`, { cause: err });
  }
}

async function readChecked(dir: string, opts: { verifyChecksums: boolean }): Promise<ModelFiles> {
  const modelPath = join(dir, MODEL_FILE);
  try {
    await stat(modelPath);
  } catch {
    throw new ModelLoadError(`model file not found: ${modelPath} (set SENTIO_MODEL_DIR or modelDir to a folder with ${MODEL_FILE}, ${TOKENIZER_FILE} and ${MANIFEST_FILE})`);
  }
  const manifestPath = join(dir, MANIFEST_FILE);
  const manifest = await readJson<ModelManifest>(manifestPath, 'model manifest');
  checkManifest(manifest, manifestPath);
  const tokenizerPath = join(dir, TOKENIZER_FILE);
  const file = await readJson<TokenizerFile>(tokenizerPath, 'tokenizer');
  if (file?.max_length !== manifest.max_length) {
    throw new ModelLoadError(`${tokenizerPath}: max_length ${String(file?.max_length)} differs from the manifest's ${manifest.max_length}: the files are from different models`);
  }
  if (opts.verifyChecksums) {
    await verifyChecksum(dir, MODEL_FILE, manifest);
    await verifyChecksum(dir, TOKENIZER_FILE, manifest);
  }
  return { modelPath, manifest, tokenizer: tokenizerTables(file, tokenizerPath) };
}
