/** The load bench's chart, drawn from a results file (bench/lib/chart.ts). */
import { describe, expect, it } from 'vitest';
import { loadChartSvg } from '../../bench/lib/chart.js';

const step = (name: string, offeredRps: number | null, p50: number, p99: number) => ({ name, offeredRps, latencyMs: { p50, p99 } });

describe('loadChartSvg', () => {
  const results = [
    step('sentio v2 single, before the sweep', null, 8, 30),
    step('sentio v2 at 10% (400/s)', 400, 2, 6),
    step('sentio v2 at 70% (2800/s)', 2800, 5, 20),
    step('sentio v2 at 90% (3600/s)', 3600, 9, 140),
    step('sentio v2 at 70% again (3000/s)', 3000, 6, 25),
  ];

  it('plots the sweep steps alone, the 50 ms bar, and the step the bar was judged on', () => {
    const svg = loadChartSvg({ results, summary: { p99_ms_at_70pct: 25, offered_rps_at_70pct: 3000, p99_at_70pct_judged: true } });
    const lines = [...svg.matchAll(/<polyline [^>]*points="([^"]*)"/g)].map((m) => m[1]!.split(' '));
    expect(lines).toHaveLength(2); // p50 and p99, three sweep points each: neither the maximum nor the rerun
    for (const points of lines) expect(points).toHaveLength(3);
    expect(svg).toContain('bar: p99 50 ms at 70%');
    expect(svg).toContain('p99 at 70%, judged');
    expect(svg.trim().endsWith('</svg>')).toBe(true);
  });

  it('says when the 70% step was not judged', () => {
    const svg = loadChartSvg({ results, summary: { p99_ms_at_70pct: 25, offered_rps_at_70pct: 3000, p99_at_70pct_judged: false } });
    expect(svg).toContain('p99 at 70% (not judged)');
  });

  it('draws a results file from before the 70% step was judged, without the mark', () => {
    const svg = loadChartSvg({ results, summary: { p99_ms_at_70pct: 20 } });
    expect(svg).not.toContain('p99 at 70%');
    expect(svg).toContain('<polyline');
  });
});
