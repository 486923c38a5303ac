"""Training and prediction loops for one branch: batching by length, three kinds of loss."""
from __future__ import annotations

import random
import time
from typing import Callable

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from tokenizer import Tokenizer

# An example for one branch: text, target vector, weight.
Row = tuple[str, list[float], float]

VA_SD = torch.tensor([0.175, 0.065])  # EmoBank sd of V and A after rescaling: the VA loss is on z-scores


class Encoder:
    """Caches token ids per text: augmented texts repeat across epochs."""

    def __init__(self, tok: Tokenizer):
        self.tok = tok
        self.cache: dict[str, list[int]] = {}

    def __call__(self, text: str) -> list[int]:
        ids = self.cache.get(text)
        if ids is None:
            ids = self.tok.encode(text)
            if len(self.cache) < 2_000_000:
                self.cache[text] = ids
        return ids


def pad(seqs: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(s) for s in seqs)
    ids = torch.zeros(len(seqs), width, dtype=torch.int64)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s, dtype=torch.int64)
    return ids, (ids != 0).to(torch.int64)


def batches(rows: list[Row], enc: Encoder, bs: int, rng: random.Random):
    """Shuffled batches of similar length (sorted within chunks of 50 batches) to limit padding."""
    idx = list(range(len(rows)))
    rng.shuffle(idx)
    chunk = bs * 50
    out = []
    for c in range(0, len(idx), chunk):
        part = sorted(idx[c: c + chunk], key=lambda i: len(enc(rows[i][0])))
        out += [part[b: b + bs] for b in range(0, len(part), bs)]
    rng.shuffle(out)
    for b in out:
        yield [rows[i] for i in b]


def word_dropout(ids: torch.Tensor, p: float, gen: torch.Generator) -> torch.Tensor:
    """Replaces a fraction p of real tokens (not [CLS], not padding) with [UNK]."""
    if p <= 0:
        return ids
    hit = (torch.rand(ids.shape, generator=gen) < p) & (ids > 2)
    return torch.where(hit, torch.ones_like(ids), ids)


def loss_of(kind: str, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-row loss. softmax: cross-entropy with a target distribution; bce: independent labels;
    va: squared error of tanh(valence) / sigmoid(arousal) in EmoBank standard deviations."""
    if kind == "softmax":
        return -(target * torch.log_softmax(logits, dim=1)).sum(1)
    if kind == "bce":
        return F.binary_cross_entropy_with_logits(logits, target, reduction="none").sum(1)
    pred = torch.cat([torch.tanh(logits[:, :1]), torch.sigmoid(logits[:, 1:])], dim=1)
    return (((pred - target) / VA_SD) ** 2).mean(1)


def fit(branch: nn.Module, kind: str, rows_for_epoch: Callable[[int], list[Row]], enc: Encoder, *, epochs: int,
        lr: float, seed: int, bs: int = 64, wdrop: float = 0.0, weight_decay: float = 0.01,
        report: Callable[[int], str] | None = None, log: Callable[[str], None] = print, name: str = "",
        swa_from: int | None = None, adv: float = 0.0) -> None:
    """Trains `branch` in place (AdamW, one-cycle schedule). With swa_from=k the weights end as the mean
    of those after epochs k..last (stochastic weight averaging): a flatter, steadier solution. With adv > 0
    every step also trains on adversarially perturbed embeddings (see adversarial_step)."""
    torch.manual_seed(seed)
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(branch.parameters(), lr=lr, weight_decay=weight_decay)
    first = rows_for_epoch(0)
    steps = (len(first) // bs + 2) * epochs
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=int(steps * 1.1) + 10, pct_start=0.1)
    t0 = time.time()
    swa: dict[str, torch.Tensor] | None = None
    swa_n = 0
    for epoch in range(epochs):
        rows = first if epoch == 0 else rows_for_epoch(epoch)
        branch.train()
        total, n = 0.0, 0
        for b in batches(rows, enc, bs, rng):
            ids, mask = pad([enc(r[0]) for r in b])
            ids = word_dropout(ids, wdrop, gen)
            target = torch.tensor([r[1] for r in b], dtype=torch.float32)
            weight = torch.tensor([r[2] for r in b], dtype=torch.float32)
            fmask = mask.to(torch.float32).unsqueeze(1)
            loss = (loss_of(kind, branch(ids, fmask), target) * weight).sum() / len(b)
            opt.zero_grad()
            loss.backward()
            if adv > 0:
                adversarial_step(branch, lambda: (loss_of(kind, branch(ids, fmask), target) * weight).sum() / len(b), adv)
            opt.step()
            sched.step()
            total += loss.item()
            n += 1
        if swa_from is not None and epoch + 1 >= swa_from:
            state = {k: v.detach().clone() for k, v in branch.state_dict().items()}
            swa = state if swa is None else {k: swa[k] + state[k] for k in swa}
            swa_n += 1
            if epoch == epochs - 1:
                branch.load_state_dict({k: v / swa_n for k, v in swa.items()})
        msg = f"{name} epoch {epoch + 1}/{epochs} loss {total / max(n, 1):.4f} ({time.time() - t0:.0f}s)"
        if report:
            msg += " | " + report(epoch)
        log(msg)


def adversarial_step(branch: nn.Module, batch_loss: Callable[[], torch.Tensor], eps: float) -> None:
    """Adversarial training on the embeddings (the fast gradient method of Miyato et al., 2017): after the
    clean backward pass, move the embedding table a step of norm eps along its gradient (the direction
    that raises this batch's loss most), add the gradients of the loss there, and step back. Only rows of
    tokens in the batch have a gradient, so only they move. On dair-ai dev it is worth about half a point
    per member: word-piece embeddings trained from scratch on 16k sentences overfit, and this asks the
    network to hold its answer when a word's vector is nudged toward its worst neighbour."""
    table = branch.embed.weight
    grad = table.grad
    norm = grad.norm() if grad is not None else None
    if norm is None or not torch.isfinite(norm) or norm == 0:
        return
    delta = eps * grad / norm
    with torch.no_grad():
        table.add_(delta)
    batch_loss().backward()
    with torch.no_grad():
        table.sub_(delta)


@torch.no_grad()
def predict(branch: nn.Module, kind: str, texts: list[str], enc: Encoder, bs: int = 256) -> np.ndarray:
    """Probabilities (softmax / sigmoid) or (valence, arousal), in the order of `texts`."""
    branch.eval()
    order = sorted(range(len(texts)), key=lambda i: len(enc(texts[i])))
    out: np.ndarray | None = None
    for b in range(0, len(order), bs):
        ii = order[b: b + bs]
        ids, mask = pad([enc(texts[i]) for i in ii])
        z = branch(ids, mask.to(torch.float32).unsqueeze(1))
        if kind == "softmax":
            p = torch.softmax(z, dim=1)
        elif kind == "bce":
            p = torch.sigmoid(z)
        else:
            p = torch.cat([torch.tanh(z[:, :1]), torch.sigmoid(z[:, 1:])], dim=1)
        if out is None:
            out = np.zeros((len(texts), p.shape[1]), np.float32)
        out[ii] = p.numpy()
    assert out is not None
    return out
