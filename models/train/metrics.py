"""Scores used during training, computed the same way scripts/eval-model.ts computes them."""
from __future__ import annotations

import numpy as np


def f1(tp: float, fp: float, fn: float) -> float:
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def six_way(gold, pred, labels: list[str] | None = None) -> dict:
    gold, pred = np.asarray(gold), np.asarray(pred)
    per = []
    for c in range(6):
        tp = float(((pred == c) & (gold == c)).sum())
        fp = float(((pred == c) & (gold != c)).sum())
        fn = float(((pred != c) & (gold == c)).sum())
        per.append(f1(tp, fp, fn))
    out = {"accuracy": float((gold == pred).mean()), "macro_f1": float(np.mean(per))}
    if labels:
        out["per_class_f1"] = {labels[c]: round(per[c], 4) for c in range(6)}
    return out


def pick_thresholds(gold: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """Per label, the threshold in 0.05..0.95 that maximises F1 on the given (held-out) rows."""
    grid = np.arange(0.05, 0.951, 0.025)
    best = np.full(gold.shape[1], 0.5)
    for j in range(gold.shape[1]):
        scores = [f1(*_counts(gold[:, j], prob[:, j] >= t)) for t in grid]
        best[j] = grid[int(np.argmax(scores))]
    return best


def _counts(g: np.ndarray, p: np.ndarray) -> tuple[float, float, float]:
    g = g.astype(bool)
    return float((p & g).sum()), float((p & ~g).sum()), float((~p & g).sum())


def multilabel(gold: np.ndarray, prob: np.ndarray, thresholds: np.ndarray, names: list[str]) -> dict:
    per = [f1(*_counts(gold[:, j], prob[:, j] >= thresholds[j])) for j in range(gold.shape[1])]
    return {"macro_f1": float(np.mean(per)), "per_label_f1": {n: round(p, 4) for n, p in zip(names, per)}}
