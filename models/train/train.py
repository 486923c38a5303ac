"""Train Sentio's emotion model and write models/emotion/{model.onnx, manifest.json}.

    /usr/bin/python3 models/train/train.py            # full recipe
    /usr/bin/python3 models/train/train.py --no-dair  # variant without the research-only dair-ai data
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import corpora  # noqa: E402
import data  # noqa: E402
import export  # noqa: E402
import metrics  # noqa: E402
from model import EmotionNet  # noqa: E402
from tokenizer import Tokenizer  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "models", "emotion")
T0 = time.time()


def log(msg: str) -> None:
    print(f"[{time.time() - T0:7.1f}s] {msg}", flush=True)


def seed_all(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


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
    T = max(len(s) for s in seqs)
    ids = torch.zeros(len(seqs), T, dtype=torch.int64)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s, dtype=torch.int64)
    return ids, (ids != 0).to(torch.int64)


def batches(examples: list[data.Example], enc: Encoder, bs: int, rng: random.Random):
    """Shuffled batches of similar length (sorted within chunks of 50 batches) to limit padding."""
    idx = list(range(len(examples)))
    rng.shuffle(idx)
    chunk = bs * 50
    out = []
    for c in range(0, len(idx), chunk):
        part = sorted(idx[c: c + chunk], key=lambda i: len(enc(examples[i].text)))
        out += [part[b: b + bs] for b in range(0, len(part), bs)]
    rng.shuffle(out)
    for b in out:
        yield [examples[i] for i in b]


def collate(exs: list[data.Example], enc: Encoder):
    ids, mask = pad([enc(e.text) for e in exs])
    z6, z28, z2 = [0.0] * 6, [0.0] * 28, [0.0] * 2
    t = lambda rows: torch.tensor(rows, dtype=torch.float32)  # noqa: E731
    return (ids, mask,
            t([e.six or z6 for e in exs]), t([e.six_w for e in exs]),
            t([e.sub or z28 for e in exs]), t([e.sub_w for e in exs]),
            t([e.va or z2 for e in exs]), t([e.va_w for e in exs]))


VA_SD = torch.tensor([0.175, 0.065])  # EmoBank sd of V and A after rescaling: the VA loss is on z-scores


def loss_fn(model: EmotionNet, batch) -> torch.Tensor:
    ids, mask, six_t, six_w, sub_t, sub_w, va_t, va_w = batch
    six, sub, va = model.logits(ids, mask)
    l_six = -(six_t * torch.log_softmax(six, dim=1)).sum(1)
    l_sub = torch.nn.functional.binary_cross_entropy_with_logits(sub, sub_t, reduction="none").mean(1)
    va_pred = torch.cat([torch.tanh(va[:, :1]), torch.sigmoid(va[:, 1:])], dim=1)
    l_va = (((va_pred - va_t) / VA_SD) ** 2).mean(1)
    total = (l_six * six_w).sum() + (l_sub * sub_w).sum() * 10.0 + (l_va * va_w).sum() * 0.5
    return total / len(ids)


@torch.no_grad()
def predict(model: EmotionNet, texts: list[str], enc: Encoder, bs: int = 256):
    model.eval()
    order = sorted(range(len(texts)), key=lambda i: len(enc(texts[i])))
    six = np.zeros((len(texts), 6), np.float32)
    sub = np.zeros((len(texts), 28), np.float32)
    va = np.zeros((len(texts), 2), np.float32)
    for b in range(0, len(order), bs):
        ii = order[b: b + bs]
        ids, mask = pad([enc(texts[i]) for i in ii])
        p6, p28, p2 = model(ids, mask)
        six[ii], sub[ii], va[ii] = p6.numpy(), p28.numpy(), p2.numpy()
    return six, sub, va


def build_epoch(base: list[data.Example], dair_rows, rng: random.Random, args) -> list[data.Example]:
    exs = list(base)
    for text, label in dair_rows:
        t = data.chatify(text, rng, label, p_emoji=0.15) if rng.random() < args.p_chat else text
        exs.append(data.Example(text=t, six=data.one_hot(label, args.smooth), six_w=1.0, source="dair"))
    exs += data.synthetic(rng, args.n_emoji, args.n_neg, args.n_int)
    return exs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-dair", action="store_true", help="train without the research-only dair-ai data")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--bs", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--smooth", type=float, default=0.1)
    ap.add_argument("--p-chat", type=float, default=0.4)
    ap.add_argument("--go-six-w", type=float, default=0.3)
    ap.add_argument("--n-emoji", type=int, default=600)
    ap.add_argument("--n-neg", type=int, default=600)
    ap.add_argument("--n-int", type=int, default=600)
    ap.add_argument("--version", default="0.1.0")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args()
    torch.set_num_threads(2)
    seed_all(args.seed)
    data.check_mapping()

    tok = Tokenizer.load(os.path.join(OUT, "tokenizer.json"))
    enc = Encoder(tok)
    names = data.load_go_names()
    dair_train, dair_dev = data.dair_splits(args.seed) if not args.no_dair else ([], [])
    go_train, go_hold = data.go_splits(args.seed)
    base: list[data.Example] = []
    for text, labels in go_train:
        six = data.go_six_target(labels, names)
        base.append(data.Example(text=text, six=six, six_w=args.go_six_w if six else 0.0,
                                 sub=data.multi_hot(labels), sub_w=1.0, source="go"))
    for text, v, a in corpora.emobank("train"):
        base.append(data.Example(text=text, va=data.va_target(v, a), va_w=1.0, source="emobank"))
    log(f"dair train {len(dair_train)} dev {len(dair_dev)}; go train {len(go_train)} hold {len(go_hold)}; "
        f"emobank train {len(corpora.emobank('train'))}")

    model = EmotionNet(len(tok.vocab))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    rng = random.Random(args.seed)
    steps_per_epoch = (len(base) + len(dair_train) + args.n_emoji + args.n_neg + args.n_int) // args.bs + 1
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps_per_epoch * args.epochs + 10,
                                                pct_start=0.1)
    for epoch in range(args.epochs):
        model.train()
        exs = build_epoch(base, dair_train, rng, args)
        total, n = 0.0, 0
        for exb in batches(exs, enc, args.bs, rng):
            loss = loss_fn(model, collate(exb, enc))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item()
            n += 1
        msg = f"epoch {epoch + 1}/{args.epochs} loss {total / n:.4f}"
        if dair_dev:
            six, _, _ = predict(model, [t for t, _ in dair_dev], enc)
            m = metrics.six_way([data.SIX_INDEX[l] for _, l in dair_dev], six.argmax(1))
            msg += f" | dair dev acc {m['accuracy']:.4f} f1 {m['macro_f1']:.4f}"
        log(msg)

    final = evaluate(model, enc, go_hold, names, args)
    export.export_onnx(model, os.path.join(args.out, "model.onnx"))
    export.write_manifest(args.out, args.version, tok.max_length, names, final.pop("thresholds"), final,
                          extra={"training": {"command": " ".join(["/usr/bin/python3", "models/train/train.py"] + sys.argv[1:]),
                                              "seed": args.seed, "no_dair": args.no_dair,
                                              "seconds": round(time.time() - T0)}})
    log(f"wrote {args.out}/model.onnx and manifest.json")


def evaluate(model: EmotionNet, enc: Encoder, go_hold, names, args) -> dict:
    out: dict = {}
    # thresholds on the held-out part of GoEmotions train, then applied to dev
    _, sub, _ = predict(model, [t for t, _ in go_hold], enc)
    thresholds = metrics.pick_thresholds(np.array([data.multi_hot(l) for _, l in go_hold]), sub)
    go_dev = corpora.goemotions("dev")
    _, sub, _ = predict(model, [t for t, _ in go_dev], enc)
    out["goemotions_dev"] = metrics.multilabel(np.array([data.multi_hot(l) for _, l in go_dev]), sub, thresholds, names)
    log(f"goemotions dev macro-F1 {out['goemotions_dev']['macro_f1']:.4f}")
    eb = corpora.emobank("test")
    _, _, va = predict(model, [t for t, _, _ in eb], enc)
    out["emobank_test"] = {"valence_r": float(np.corrcoef(va[:, 0], [v for _, v, _ in eb])[0, 1]),
                           "arousal_r": float(np.corrcoef(va[:, 1], [a for _, _, a in eb])[0, 1])}
    log(f"emobank test {out['emobank_test']}")
    val = corpora.dair("val")
    six, _, _ = predict(model, [t for t, _ in val], enc)
    out["dair_val"] = metrics.six_way([data.SIX_INDEX[l] for _, l in val], six.argmax(1), data.SIX)
    log(f"dair val {json.dumps(out['dair_val'])}")
    out["thresholds"] = {names[i]: round(float(t), 3) for i, t in enumerate(thresholds)}
    return out


if __name__ == "__main__":
    main()
