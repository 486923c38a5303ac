import os from 'node:os';
import { readFileSync } from 'node:fs';

/** Machine-wide CPU time (ms, summed over CPUs): idle, and in all. */
export function machineTimes(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const c of os.cpus()) {
    idle += c.times.idle;
    total += c.times.user + c.times.nice + c.times.sys + c.times.idle + c.times.irq;
  }
  return { idle, total };
}

/**
 * The CPU's vector width and generation, from /proc/cpuinfo (null elsewhere): this project's VMs have run on
 * hosts with and without AVX-512 under the same model name ("AMD EPYC"), and the engine's kernels, and so
 * every figure, differ between them.
 */
export function cpuFeatures(): { simd: 'avx512' | 'avx2' | 'baseline'; family: number | null; model: number | null } | null {
  let info: string;
  try {
    info = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return null;
  }
  const field = (name: string) => {
    const m = new RegExp(`^${name}\\s*:\\s*(\\d+)`, 'm').exec(info);
    return m ? Number(m[1]) : null;
  };
  const flags = new Set((/^flags\s*:\s*(.*)$/m.exec(info)?.[1] ?? '').split(' '));
  return { simd: flags.has('avx512f') ? 'avx512' : flags.has('avx2') ? 'avx2' : 'baseline', family: field('cpu family'), model: field('model') };
}

/** What every results file records of the machine it was measured on, so that figures are read against it. */
export function describeMachine(): { cpus: number; cpu: string | undefined; cpuFeatures: ReturnType<typeof cpuFeatures>; memGiB: number; node: string; platform: string } {
  return {
    cpus: os.cpus().length, cpu: os.cpus()[0]?.model, cpuFeatures: cpuFeatures(),
    memGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10, node: process.version, platform: `${os.platform()} ${os.release()}`,
  };
}
