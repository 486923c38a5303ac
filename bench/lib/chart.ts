/** A small SVG line chart: latency (p50, p99) against offered load, drawn from a load results file. No dependencies. */

export interface Series {
  name: string;
  color: string;
  points: Array<[number, number]>;
}

/** A horizontal reference line (a bar's limit). */
export interface Rule {
  y: number;
  label: string;
  color: string;
}

/** A single point drawn apart from the series (the step a bar was judged on). */
export interface Mark {
  x: number;
  y: number;
  label: string;
  color: string;
}

export function lineChartSvg(title: string, xLabel: string, yLabel: string, series: Series[], rules: Rule[] = [], marks: Mark[] = []): string {
  const W = 640, H = 400, L = 70, R = 20, T = 40, B = 55;
  const all = [...series.flatMap((s) => s.points), ...marks.map((m): [number, number] => [m.x, m.y])];
  const xMax = Math.max(1, ...all.map((p) => p[0])) * 1.05;
  const yMax = Math.max(1, ...all.map((p) => p[1]), ...rules.map((r) => r.y)) * 1.1;
  const x = (v: number) => L + (v / xMax) * (W - L - R);
  const y = (v: number) => H - B - (v / yMax) * (H - T - B);
  const ticks = (max: number) => Array.from({ length: 6 }, (_, i) => (max * i) / 5);
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15">${esc(title)}</text>`,
    `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="black"/>`,
    `<line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="black"/>`,
    `<text x="${(L + W - R) / 2}" y="${H - 15}" text-anchor="middle">${esc(xLabel)}</text>`,
    `<text x="18" y="${(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 18 ${(T + H - B) / 2})">${esc(yLabel)}</text>`,
  ];
  for (const t of ticks(xMax)) parts.push(`<text x="${x(t)}" y="${H - B + 16}" text-anchor="middle">${Math.round(t)}</text>`);
  for (const t of ticks(yMax)) {
    parts.push(`<line x1="${L}" y1="${y(t)}" x2="${W - R}" y2="${y(t)}" stroke="#ddd"/>`);
    parts.push(`<text x="${L - 6}" y="${y(t) + 4}" text-anchor="end">${t.toFixed(t < 10 ? 1 : 0)}</text>`);
  }
  series.forEach((s, i) => {
    const pts = [...s.points].sort((a, b) => a[0] - b[0]);
    parts.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${pts.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' ')}"/>`);
    for (const p of pts) parts.push(`<circle cx="${x(p[0]).toFixed(1)}" cy="${y(p[1]).toFixed(1)}" r="3" fill="${s.color}"/>`);
    parts.push(`<rect x="${L + 12}" y="${T + 8 + i * 18}" width="12" height="4" fill="${s.color}"/>`);
    parts.push(`<text x="${L + 30}" y="${T + 13 + i * 18}">${esc(s.name)}</text>`);
  });
  for (const r of rules) {
    parts.push(`<line x1="${L}" y1="${y(r.y).toFixed(1)}" x2="${W - R}" y2="${y(r.y).toFixed(1)}" stroke="${r.color}" stroke-dasharray="6 4"/>`);
    parts.push(`<text x="${W - R - 4}" y="${(y(r.y) - 5).toFixed(1)}" text-anchor="end" fill="${r.color}">${esc(r.label)}</text>`);
  }
  for (const m of marks) {
    parts.push(`<rect x="${(x(m.x) - 5).toFixed(1)}" y="${(y(m.y) - 5).toFixed(1)}" width="10" height="10" fill="none" stroke="${m.color}" stroke-width="2"/>`);
    const right = x(m.x) > W / 2; // the label on the side with room
    parts.push(`<text x="${(x(m.x) + (right ? -9 : 9)).toFixed(1)}" y="${(y(m.y) + 4).toFixed(1)}" text-anchor="${right ? 'end' : 'start'}" fill="${m.color}">${esc(m.label)}</text>`);
  }
  parts.push('</svg>');
  return parts.join('\n');
}

/** What loadChartSvg reads of a results file (bench/load.ts writes it). */
export interface LoadResultsFile {
  results: Array<{ name: string; offeredRps: number | null; latencyMs: { p50: number; p99: number } }>;
  summary: { p99_ms_at_70pct: number; offered_rps_at_70pct?: number; p99_at_70pct_judged?: boolean };
}

/** The latency-against-load chart of a load results file: the sweep's p50 and p99, the bar, the judged 70% step. */
export function loadChartSvg(file: LoadResultsFile): string {
  const sweep = file.results.filter((r) => /^sentio v2 at \d+% \(/.test(r.name) && r.offeredRps !== null);
  const { summary } = file;
  const marks: Mark[] = summary.offered_rps_at_70pct !== undefined
    ? [{ x: summary.offered_rps_at_70pct, y: summary.p99_ms_at_70pct, label: summary.p99_at_70pct_judged === false ? 'p99 at 70% (not judged)' : 'p99 at 70%, judged', color: '#2ca02c' }]
    : [];
  return lineChartSvg(
    'Sentio V2 single-message analysis: latency against offered load', 'offered load (requests/s)', 'latency (ms)',
    [
      { name: 'p50', color: '#1f77b4', points: sweep.map((r) => [r.offeredRps!, r.latencyMs.p50]) },
      { name: 'p99', color: '#d62728', points: sweep.map((r) => [r.offeredRps!, r.latencyMs.p99]) },
    ],
    [{ y: 50, label: 'bar: p99 50 ms at 70%', color: '#888' }],
    marks,
  );
}
