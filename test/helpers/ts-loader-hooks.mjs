// Module hooks for ts-loader.mjs (they run on Node's loader thread). Transpiled files are cached on disk
// by path, size and mtime, so only the first worker thread of a run pays for loading TypeScript. The cache
// lives in the checkout's node_modules/.cache: one shared folder in /tmp grew with every clone and edit,
// and would belong to whichever user ran the tests first.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CACHE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', '.cache', 'sentio-ts-loader');
let ts;

export async function resolve(specifier, context, next) {
  if (specifier.endsWith('.js') && (specifier.startsWith('.') || specifier.startsWith('file:')) && context.parentURL) {
    const asTs = new URL(specifier.slice(0, -3) + '.ts', context.parentURL);
    if (asTs.protocol === 'file:' && !existsSync(new URL(specifier, context.parentURL)) && existsSync(asTs)) {
      return { url: asTs.href, shortCircuit: true };
    }
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const path = fileURLToPath(url);
  const st = statSync(path);
  const cached = join(CACHE, createHash('sha1').update(`${path}\0${st.size}\0${st.mtimeMs}`).digest('hex') + '.js');
  if (existsSync(cached)) return { format: 'module', source: readFileSync(cached, 'utf8'), shortCircuit: true };
  ts ??= (await import('typescript')).default;
  const out = ts.transpileModule(readFileSync(path, 'utf8'), {
    fileName: path,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false, inlineSourceMap: true },
  });
  mkdirSync(CACHE, { recursive: true });
  const tmp = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, out.outputText); // then rename: a parallel worker never reads half a file
  renameSync(tmp, cached);
  return { format: 'module', source: out.outputText, shortCircuit: true };
}
