/**
 * `npm run bench:chart -- bench/results/load-<time>.json [...]`: draws each load results file's chart of
 * latency against offered load again, next to it (`load-<time>.svg`), as `npm run bench` drew it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadChartSvg } from './lib/chart.js';
import type { LoadResultsFile } from './lib/chart.js';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: npm run bench:chart -- bench/results/load-<time>.json [...]');
  process.exit(2);
}
for (const file of files) {
  const svg = file.replace(/\.json$/, '') + '.svg';
  writeFileSync(svg, loadChartSvg(JSON.parse(readFileSync(file, 'utf8')) as LoadResultsFile));
  console.error(`${file} -> ${svg}`);
}
