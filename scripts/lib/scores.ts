/** Scores, computed as models/train/metrics.py computes them. */

export function f1(tp: number, fp: number, fn: number): number {
  return tp === 0 ? 0 : (2 * tp) / (2 * tp + fp + fn);
}

export function classification(gold: number[], pred: number[], labels: string[]) {
  const perClass: Record<string, number> = {};
  let sum = 0;
  labels.forEach((label, c) => {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    gold.forEach((g, i) => {
      const p = pred[i];
      if (p === c && g === c) tp++;
      else if (p === c) fp++;
      else if (g === c) fn++;
    });
    const v = f1(tp, fp, fn);
    perClass[label] = round(v);
    sum += v;
  });
  const correct = gold.filter((g, i) => g === pred[i]).length;
  return { accuracy: round(correct / gold.length), macro_f1: round(sum / labels.length), per_class_f1: perClass };
}

export function pearson(x: ArrayLike<number>, y: ArrayLike<number>): number {
  const n = x.length;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i] ?? 0;
    my += y[i] ?? 0;
  }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (x[i] ?? 0) - mx;
    const dy = (y[i] ?? 0) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return sxy / Math.sqrt(sxx * syy);
}

export function round(v: number): number {
  return Math.round(v * 10000) / 10000;
}
