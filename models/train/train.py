"""Train Sentio's emotion model and write models/emotion/{model.onnx, manifest.json}.

    /usr/bin/python3 models/train/train.py            # full recipe
    /usr/bin/python3 models/train/train.py --no-dair --out DIR  # variant without the research-only
                                                                 # dair-ai data, with its own tokenizer

Three parts of one network, trained one after another (they share no weights):
  six  - dair-ai six-way: the average of two independently trained bidirectional GRU members (different
         seeds and augmentation draws), each trained on dair-ai train plus chat-style copies
         (contractions, punctuation, casing, emoji), synthetic emoji-only / negation / intensity /
         chat-phrase rows and GoEmotions mapped to the six as weak labels.
  sub  - GoEmotions 28 labels (sigmoid), plus emoji and strong-feeling-word rows labelled with the six's
         names; thresholds picked on 10% of GoEmotions train held out.
  va   - EmoBank valence/arousal: a small branch trained on EmoBank plus a TF-IDF ridge teacher's labels
         for the other corpora's texts, mixed with a ridge regression over token ids that runs in-graph.
Selection uses splits carved from train (dair-ai dev = 10% of train, GoEmotions 10% of train, EmoBank
dev); dair-ai val, GoEmotions dev and EmoBank test are only reported.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import build_tokenizer  # noqa: E402
import corpora  # noqa: E402
import data  # noqa: E402
import export  # noqa: E402
import metrics  # noqa: E402
import teachers  # noqa: E402
from compact import CompactNet, check as check_compact, net_from_onnx  # noqa: E402
from fit import Encoder, Row, fit, pad, predict  # noqa: E402
from model import Branch, EmotionNet, Ensemble, BRANCH_DEFAULTS, OUT_SIZES, make_branch  # noqa: E402
from tokenizer import Tokenizer  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "models", "emotion")
T0 = time.time()


def log(msg: str) -> None:
    print(f"[{time.time() - T0:7.1f}s] {msg}", flush=True)


def arch(args) -> dict:
    """Branch sizes that differ from model.BRANCH_DEFAULTS."""
    return {"six": {"kind": args.six_kind, "channels": args.six_channels}, "sub": {"channels": args.sub_channels},
            "va": {}}


def new_branch(name: str, vocab: int, seed: int, cfg: dict | None = None) -> torch.nn.Module:
    torch.manual_seed(seed)
    return make_branch(vocab, OUT_SIZES[name], **dict(BRANCH_DEFAULTS[name], **(cfg or {})))


def six_scores(six, rows, enc: Encoder) -> dict:
    p = predict_six(six, [t for t, _ in rows], enc)
    return metrics.six_way([data.SIX_INDEX[l] for _, l in rows], p.argmax(1), data.SIX)


def predict_six(six, texts: list[str], enc: Encoder) -> np.ndarray:
    if isinstance(six, Ensemble):
        return np.mean([predict(m, "softmax", texts, enc) for m in six.members], axis=0)
    return predict(six, "softmax", texts, enc)


# -- six ---------------------------------------------------------------------------------------------
def train_six(args, enc: Encoder, vocab: int, names: list[str]) -> Ensemble:
    dair_train, dair_dev = data.dair_splits(args.seed) if not args.no_dair else ([], [])
    if not args.hold_dev:  # final fit: the recipe was chosen on dev, now dev is training data too
        dair_train, dair_dev = dair_train + dair_dev, []
    val = corpora.dair("val") if not args.no_dair else []

    go_rows: list[Row] = []
    if args.no_dair:  # GoEmotions mapped to the six is then the only six-way signal
        args.go_six_w, args.go_frac = 1.0, 1.0
    if args.go_six_w > 0:
        for text, labels in data.go_splits(args.seed)[0]:
            t = data.go_six_target(labels, names)
            if t is not None:
                go_rows.append((text, t, args.go_six_w))

    def rows_for(member: int, teacher=None):
        def rows_for_epoch(epoch: int) -> list[Row]:
            rng = random.Random(args.seed * 1000 + member * 100 + epoch)
            real: list[Row] = []  # corpus sentences and their chat-styled copies: the teacher may relabel these
            for text, label in dair_train:
                target = data.one_hot(label, args.smooth)
                real.append((text, target, 1.0))
                if rng.random() < args.p_chat:
                    real.append((data.chatify(text, rng, label, p_emoji=0.2), target, 1.0))
            real += [r for r in go_rows if rng.random() < args.go_frac]
            if teacher is not None:
                soft = teacher([t for t, _, _ in real])
                a = args.distill_alpha
                real = [(t, [a * float(s) + (1 - a) * y for s, y in zip(p, target)], w)
                        for (t, target, w), p in zip(real, soft)]
            # synthetic rows keep their designed targets (negation, intensity, emoji): they set behaviour
            synth = [(ex.text, ex.six, 1.0) for ex in data.synthetic(rng, args.n_emoji, args.n_neg, args.n_int,
                                                                       args.n_phrase, args.n_feel,
                                                                       args.n_distress)]
            return real + synth
        return rows_for_epoch

    def train_members(n: int, first: int = 0, teacher=None, role: str = "member") -> list[torch.nn.Module]:
        """Members first .. first+n-1: member k draws seed and augmentation from k."""
        members = []
        dev_sum = np.zeros((len(dair_dev), 6), np.float32)
        for k in range(n):
            seed = args.seed + 1000 * (first + k)
            branch = new_branch("six", vocab, seed, arch(args)["six"])
            report = (lambda _e, b=branch: "dev {accuracy:.4f}/{macro_f1:.4f}".format(**six_scores(b, dair_dev, enc))) \
                if dair_dev else None
            fit(branch, "softmax", rows_for(first + k, teacher), enc, epochs=args.epochs, lr=args.lr, seed=seed,
                wdrop=args.wdrop, report=report, log=log, name=f"six {role} {k + 1}/{n}", swa_from=args.swa_from,
                adv=args.adv)
            members.append(branch)
            if dair_dev:
                dev_sum += predict(branch, "softmax", [t for t, _ in dair_dev], enc)
                m = metrics.six_way([data.SIX_INDEX[l] for _, l in dair_dev], dev_sum.argmax(1))
                log(f"six: {role}s 1..{k + 1} on dair dev {m['accuracy']:.4f}/{m['macro_f1']:.4f}")
        return members

    threads = torch.get_num_threads()
    if args.six_kind == "gru":
        # a GRU step's matrices (64 texts x 64 units) are too small to share out: one thread trained a
        # member about 3x faster than two on the 2-core machine
        torch.set_num_threads(1)
    if not args.teachers:
        members = train_members(args.six_members)
    else:
        # distillation: a larger ensemble labels the students' sentences; the students (as many as the
        # shipped model can afford to run) learn its averaged distribution mixed with the gold label
        teachers_ = Ensemble(train_members(args.teachers, role="teacher"))
        if val:
            log(f"six: teacher ensemble on dair val (reported) {json.dumps(six_scores(teachers_, val, enc))}")
        cache: dict[str, np.ndarray] = {}

        def teacher(texts: list[str]) -> list[np.ndarray]:
            todo = list(dict.fromkeys(t for t in texts if t not in cache))
            if todo:
                for t, p in zip(todo, predict_six(teachers_, todo, enc)):
                    cache[t] = p
            return [cache[t] for t in texts]
        members = train_members(args.six_members, 10, teacher, role="student")
    torch.set_num_threads(threads)
    ens = Ensemble(members)
    if val:
        log(f"six: dair val (reported, not used for selection) {json.dumps(six_scores(ens, val, enc))}")
    return ens


# -- sub ---------------------------------------------------------------------------------------------
def train_sub(args, enc: Encoder, vocab: int, names: list[str]) -> tuple[Branch, dict[str, float], dict]:
    go_train, go_hold = data.go_splits(args.seed)
    rows: list[Row] = [(t, data.multi_hot(l), 1.0) for t, l in go_train]
    hold_gold = np.array([data.multi_hot(l) for _, l in go_hold])
    # GoEmotions hardly shows emoji (😡 in 3 of 43,410 train comments), so up to 1.3.0 this branch read
    # the six-way lexicon's emoji as neutral (😡 alone: 0.998), and intensity, which is scaled by
    # 1 - neutral, fell as emoji were added ("I'm furious 😡😡😡" read minimal). Each epoch therefore
    # adds emoji-only texts labelled with the GoEmotions label of the same name, and copies of comments
    # labelled with one of the six names, with one of its emoji added (their labels unchanged).
    # Nor did it know the six-way lexicon's strong words ("furious" in 9 comments): "I am absolutely
    # furious!!!" read 0.42 neutral and 0.03 anger, and scored less intense than "I am a bit annoyed". So
    # each epoch also adds short statements of those words, labelled with the label of the same name (1.3.2).
    go_index = {n: i for i, n in enumerate(names)}
    six_rows = [(t, data.multi_hot(l), names[i]) for t, l in go_train for i in l[:1] if names[i] in data.SIX_INDEX]

    def report_for(branch: Branch):
        def report(_e: int) -> str:
            p = predict(branch, "bce", [t for t, _ in go_hold], enc)
            th = metrics.pick_thresholds(hold_gold, p)
            return f"hold macro-F1 (tuned) {metrics.multilabel(hold_gold, p, th, names)['macro_f1']:.4f}"
        return report

    def rows_for_epoch(epoch: int) -> list[Row]:
        rng = random.Random(args.seed * 2000 + epoch)
        # punctuation-free, lower-case copies: GoEmotions is chat text already, dair-ai style text is not
        extra = [(t.lower().replace(",", "").replace(".", ""), y, w) for t, y, w in rows if rng.random() < 0.1]
        if args.sub_emoji:
            for _ in range(args.n_emoji):
                label = rng.choice(data.SIX)
                extra.append((data.emoji_only(label, rng), data.multi_hot([go_index[label]]), 1.0))
            extra += [(data.add_emoji(t, label, rng), y, 1.0) for t, y, label in six_rows if rng.random() < 0.2]
        # their own random stream, so the rows above stay those of the recipe without them
        words_rng = random.Random(args.seed * 3000 + epoch)
        for _ in range(args.sub_words):
            label = words_rng.choice(data.SIX)
            extra.append((data.feeling_text(label, words_rng), data.multi_hot([go_index[label]]), 1.0))
        return rows + extra

    branch = new_branch("sub", vocab, args.seed + 7, arch(args)["sub"])
    fit(branch, "bce", rows_for_epoch, enc, epochs=args.sub_epochs, lr=args.lr, seed=args.seed + 7,
        report=report_for(branch), log=log, name="sub")
    p = predict(branch, "bce", [t for t, _ in go_hold], enc)
    th = metrics.pick_thresholds(hold_gold, p)
    go_dev = corpora.goemotions("dev")
    pd = predict(branch, "bce", [t for t, _ in go_dev], enc)
    dev = metrics.multilabel(np.array([data.multi_hot(l) for _, l in go_dev]), pd, th, names)
    log(f"sub: GoEmotions dev macro-F1 {dev['macro_f1']:.4f} with thresholds from the train hold-out")
    return branch, {names[i]: round(float(t), 3) for i, t in enumerate(th)}, dev


# -- va ----------------------------------------------------------------------------------------------
def train_va(args, enc: Encoder, vocab: int, net: EmotionNet) -> dict:
    eb_train, eb_dev, eb_test = corpora.emobank("train"), corpora.emobank("dev"), corpora.emobank("test")
    rows: list[Row] = [(t, data.va_target(v, a), 1.0) for t, v, a in eb_train]
    extra_texts = [t for t, _ in data.go_splits(args.seed)[0]]
    if not args.no_dair:
        extra_texts += [t for t, _ in data.dair_splits(args.seed)[0]]
    pseudo = teachers.ridge_va(eb_train, extra_texts, eb_dev, log)
    pseudo_rows: list[Row] = [(t, list(map(float, y)), args.va_pseudo_w) for t, y in zip(extra_texts, pseudo)]

    def r_of(branch: Branch, split) -> dict:
        p = predict(branch, "va", [t for t, _, _ in split], enc)
        return {"valence_r": float(np.corrcoef(p[:, 0], [v for _, v, _ in split])[0, 1]),
                "arousal_r": float(np.corrcoef(p[:, 1], [a for _, _, a in split])[0, 1])}

    def rows_for_epoch(epoch: int) -> list[Row]:
        rng = random.Random(args.seed * 3000 + epoch)
        return rows + [r for r in pseudo_rows if rng.random() < args.va_pseudo_frac]

    branch = new_branch("va", vocab, args.seed + 11)
    fit(branch, "va", rows_for_epoch, enc, epochs=args.va_epochs, lr=args.lr, seed=args.seed + 11,
        report=lambda _e: "dev r v {valence_r:.3f} a {arousal_r:.3f}".format(**r_of(branch, eb_dev)),
        log=log, name="va")
    log(f"va: branch alone, EmoBank test {json.dumps(r_of(branch, eb_test))}")
    net.branches["va"] = branch
    u, s, b = teachers.token_ridge(eb_train, eb_dev, enc, vocab, log)
    net.va_bag.u.copy_(torch.from_numpy(u))
    net.va_bag.s.copy_(torch.from_numpy(s))
    net.va_bag.b.copy_(torch.from_numpy(b))
    # mix ridge and branch per output, picked on EmoBank dev
    pb = predict(branch, "va", [t for t, _, _ in eb_dev], enc)
    with torch.no_grad():
        ids, mask = pad([enc(t) for t, _, _ in eb_dev])
        pr = net.va_bag(ids, mask.to(torch.float32).unsqueeze(1)).numpy()
    gold = np.array([[v, a] for _, v, a in eb_dev])
    mix = []
    for j in range(2):
        grid = np.linspace(0, 1, 21)
        rs = [np.corrcoef(w * pr[:, j] + (1 - w) * pb[:, j], gold[:, j])[0, 1] for w in grid]
        mix.append(float(grid[int(np.argmax(rs))]))
    net.va_mix.copy_(torch.tensor(mix))
    log(f"va: ridge share (valence, arousal) = {mix}")
    _, _, va = predict_net(net, [t for t, _, _ in eb_test], enc)
    test = {"valence_r": float(np.corrcoef(va[:, 0], [v for _, v, _ in eb_test])[0, 1]),
            "arousal_r": float(np.corrcoef(va[:, 1], [a for _, _, a in eb_test])[0, 1])}
    log(f"va: EmoBank test {json.dumps(test)}")
    return test


@torch.no_grad()
def predict_net(net: EmotionNet, texts: list[str], enc: Encoder, bs: int = 256):
    """The whole network's three outputs, exactly as exported."""
    net.eval()
    outs = [[], [], []]
    for b in range(0, len(texts), bs):
        ids, mask = pad([enc(t) for t in texts[b: b + bs]])
        for o, x in zip(outs, net(ids, mask)):
            o.append(x.numpy())
    return tuple(np.concatenate(o) for o in outs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-dair", action="store_true", help="train without the research-only dair-ai data")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--lr", type=float, default=5e-3)
    ap.add_argument("--epochs", type=int, default=6, help="six-way student epochs")
    ap.add_argument("--six-members", type=int, default=2, help="independently trained six-way members, averaged")
    ap.add_argument("--six-kind", choices=["gru", "cnn"], default="gru",
                    help="six-way encoder: bidirectional GRU, or the width-3 convolution of model 1.2.0 "
                         "(--six-kind cnn --six-channels 256 --six-members 3)")
    ap.add_argument("--teachers", type=int, default=0,
                    help="train this many six-way members first and distil their mean into the students")
    ap.add_argument("--distill-alpha", type=float, default=0.5,
                    help="students' target: this share teacher distribution, the rest gold label")
    ap.add_argument("--six-channels", type=int, default=128,
                    help="six-way encoder width (GRU: both directions together, 64 each)")
    ap.add_argument("--sub-channels", type=int, default=192)
    ap.add_argument("--hold-dev", action="store_true",
                    help="keep 10%% of dair-ai train out as dev and report it (for choosing the recipe); "
                         "the final model trains on all of train")
    ap.add_argument("--swa-from", type=int, default=None, help="average weights from this epoch on")
    ap.add_argument("--adv", type=float, default=1.0,
                    help="six-way members: adversarial training on the embeddings with this step norm (0: off)")
    ap.add_argument("--smooth", type=float, default=0.1)
    ap.add_argument("--wdrop", type=float, default=0.0)
    ap.add_argument("--p-chat", type=float, default=0.3, help="share of dair rows also seen chat-styled")
    ap.add_argument("--go-six-w", type=float, default=0.2,
                    help="weight of GoEmotions' weak six-way labels (1.0 with --no-dair). No measurable effect "
                         "on dair-ai, but they teach the six-way head everyday wording beyond 'i feel ...' "
                         "sentences (without them 'I love my family so much' read as joy)")
    ap.add_argument("--go-frac", type=float, default=0.3, help="share of those rows used per epoch")
    ap.add_argument("--n-emoji", type=int, default=500)
    ap.add_argument("--n-neg", type=int, default=1000)
    ap.add_argument("--n-phrase", type=int, default=400)
    ap.add_argument("--n-int", type=int, default=500)
    ap.add_argument("--n-feel", type=int, default=600,
                    help="statements of seldom-seen feeling words per epoch (lexicon.FEELING_WORDS; 0: 1.3's recipe)")
    ap.add_argument("--n-distress", type=int, default=300,
                    help="statements of despair and crisis per epoch (lexicon.DISTRESS; 0: 1.4's recipe)")
    ap.add_argument("--sub-epochs", type=int, default=5)
    ap.add_argument("--no-sub-emoji", dest="sub_emoji", action="store_false",
                    help="train the sub branch without emoji texts (1.3.0's recipe)")
    ap.add_argument("--sub-words", type=int, default=500,
                    help="sub branch: statements of the six-way lexicon's strong feeling words per epoch")
    ap.add_argument("--va-epochs", type=int, default=6)
    ap.add_argument("--va-pseudo-w", type=float, default=1.0)
    ap.add_argument("--va-pseudo-frac", type=float, default=1.0)
    ap.add_argument("--only", default="six,sub,va", help="comma list of branches to train (others random, or --base's)")
    ap.add_argument("--base", default=None,
                    help="a model directory whose branches not in --only are kept: weights, sub thresholds, metrics")
    ap.add_argument("--version", default="1.3.2")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("SENTIO_TRAIN_THREADS", "2")))
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    data.check_mapping()
    only = set(args.only.split(","))

    os.makedirs(args.out, exist_ok=True)
    to_shipped = os.path.abspath(args.out) == os.path.abspath(OUT)
    if args.no_dair:
        # the shipped vocabulary was learned from dair-ai text as well: the variant learns its own
        if to_shipped:
            sys.exit("--no-dair writes its own tokenizer: give --out a directory other than models/emotion")
        tok = build_tokenizer.build(os.path.join(args.out, "tokenizer.json"), include_dair=False)
    else:
        tok = Tokenizer.load(os.path.join(OUT, "tokenizer.json"))
    enc = Encoder(tok)
    vocab = len(tok.vocab)
    names = data.load_go_names()
    if args.base:
        net = net_from_onnx(os.path.join(args.base, "model.onnx"))
        with open(os.path.join(args.base, "manifest.json"), encoding="utf-8") as f:
            base = json.load(f)
        thresholds = base["outputs"]["sub_emotions"]["thresholds"]
        metrics_out = dict(base["metrics"])
        log(f"kept from {args.base}: {', '.join(sorted({'six', 'sub', 'va'} - only)) or 'nothing'}")
    else:
        net = EmotionNet(vocab, arch(args), six_members=args.six_members)
        thresholds = {n: 0.5 for n in names}
        metrics_out = {}
    if "six" in only:
        net.six = train_six(args, enc, vocab, names)
    if "sub" in only:
        net.branches["sub"], thresholds, metrics_out["goemotions_dev"] = train_sub(args, enc, vocab, names)
    if "va" in only:
        metrics_out["emobank_test"] = train_va(args, enc, vocab, net)
    if not args.no_dair:
        val = corpora.dair("val")
        metrics_out["dair_val"] = six_scores(net.six, val, enc)
        if args.hold_dev:
            metrics_out["dair_dev"] = six_scores(net.six, data.dair_splits(args.seed)[1], enc)
        log(f"dair val {json.dumps(metrics_out['dair_val'])}")
    if not args.no_dair and not to_shipped:
        shutil.copyfile(os.path.join(OUT, "tokenizer.json"), os.path.join(args.out, "tokenizer.json"))
    compact = CompactNet(net).eval()
    check_texts = [t for t, _ in corpora.goemotions("dev")] if args.no_dair else [t for t, _ in corpora.dair("val")]
    worst = check_compact(net, compact, check_texts[:500], enc)
    if worst > 1e-5:
        sys.exit(f"the compact graph differs from the trained network by {worst:.2e}")
    export.export_onnx(compact, os.path.join(args.out, "model.onnx"))
    seconds = round(time.time() - T0)
    export.write_manifest(args.out, args.version, tok.max_length, names, thresholds, metrics_out, extra={
        "training": {"command": " ".join(["/usr/bin/python3", "models/train/train.py"] + sys.argv[1:]),
                     "seed": args.seed, "no_dair": args.no_dair, "seconds": seconds,
                     "architecture": net.config}})
    log(f"wrote {args.out}/model.onnx and manifest.json in {seconds}s")


if __name__ == "__main__":
    main()
