/** A small SVG line chart: latency (p50, p99) against offered load. No dependencies. */

export interface Series {
  name: string;
  color: string;
  points: Array<[number, number]>;
}

export function lineChartSvg(title: string, xLabel: string, yLabel: string, series: Series[]): string {
  const W = 640, H = 400, L = 70, R = 20, T = 40, B = 55;
  const all = series.flatMap((s) => s.points);
  const xMax = Math.max(1, ...all.map((p) => p[0])) * 1.05;
  const yMax = Math.max(1, ...all.map((p) => p[1])) * 1.1;
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
  parts.push('</svg>');
  return parts.join('\n');
}
