"""The graph Sentio ships: EmotionNet's arithmetic, exported as fewer ONNX Runtime kernels.

    /usr/bin/python3 models/train/compact.py [--model models/emotion/model.onnx] [--out PATH]

re-lays an exported model (its weights read back from the ONNX file, in EmotionNet's plain export or in
this layout), checks that every output matches the original within 1e-5 on dair-ai val texts in
mixed-length batches, and updates manifest.json's checksum. train.py exports through CompactNet too.
From the plain 1.1.0 file it writes 1.1.0's shipped file, and a file in this layout (1.2.0, 1.3.0) it
writes again byte for byte. GRU members (1.3.0) become LeanGru: one bidirectional ONNX GRU, see below.

Why: for one text, a run of EmotionNet's own export was mostly kernel launches (204 of them), not
arithmetic, and a chat turn scores two single texts. Per branch, the three window lookups (each a
Gather, Gather, Cast, Mul) become one over all windows, and the zero row that padding reads is one Pad
instead of four shape operators; the packing and window ids are computed once for all branches: 155
kernels for 1.2.0's three convolution members. The outputs are the same to the bit on dair-ai val. Stacking the branches into batched
matrix products (fewer kernels still) was slower: ONNX Runtime prepacks only 2-D constant weights.
A GRU member was first laid out as two one-way GRUs with gathers that reversed each text within its
length (301 kernels for 1.3.0); ONNX's own bidirectional GRU with sequence_lens does that reversal
itself and skips each text's padding: 219 kernels, outputs identical, 12-17% more texts/s natively.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(__file__))
from model import Branch, EmotionNet, GruBranch  # noqa: E402

KERNEL = 3


def quantise_rows(table: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """int8 rows with one float scale per row (a row's largest magnitude maps to 127), so the tables take a
    quarter of the file; outputs move by well under 1e-3, and re-quantising a quantised table gives the
    same bytes. Everything after the lookup stays float32."""
    arr = table.detach().numpy().astype(np.float32)
    scale = np.abs(arr).max(axis=1, keepdims=True) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.round(arr / scale), -127, 127).astype(np.int8)
    return torch.from_numpy(q), torch.from_numpy(scale.astype(np.float32))


class Lean(nn.Module):
    """One branch as few kernels: the three window lookups as one, the zero row for padding as one Pad,
    the branch's own Linear layers (so ONNX Runtime runs them as prepacked Gemm, ReLU fused)."""

    def __init__(self, branch: Branch):
        super().__init__()
        assert branch.kernel == KERNEL
        q, scale = quantise_rows(branch.embed.weight)
        self.register_buffer("q", q)  # [V, D] int8
        self.register_buffer("scale", scale)  # [V, 1]
        self.conv, self.attn, self.mlp = branch.conv, branch.attn, branch.mlp

    def forward(self, win: torch.Tensor, inv: torch.Tensor, b: int, t: int, keep: torch.Tensor,
                count: torch.Tensor) -> torch.Tensor:
        """win [N, 3] window ids of the real tokens; inv [B*T] packed row of each position (N for
        padding); keep [B, T, 1] bool; count [B, 1] real tokens per text."""
        flat = win.reshape(-1)
        e = self.q.index_select(0, flat).to(torch.float32) * self.scale.index_select(0, flat)  # [3N, D]
        rows = torch.relu(self.conv(e.reshape(win.shape[0], -1)))  # [N, C]: each row [E(w0) | E(w1) | E(w2)]
        rows = nn.functional.pad(rows, (0, 0, 0, 1))  # the zero row that padded positions read
        h = rows.index_select(0, inv).reshape(b, t, -1)  # [B, T, C]
        pooled = [h.amax(dim=1), h.sum(dim=1) / count]
        weights = torch.softmax(torch.where(keep, self.attn(h), torch.tensor(-1e4)), dim=1)  # [B, T, heads]
        pooled.append(torch.bmm(weights.transpose(1, 2), h).flatten(1))
        return self.mlp(torch.cat(pooled, dim=1))


def onnx_gates(x: torch.Tensor) -> torch.Tensor:
    """PyTorch's GRU gate blocks (r, z, n) in ONNX's order (z, r, h), along dim 0."""
    r, z, n = x.chunk(3, dim=0)
    return torch.cat([z, r, n], dim=0)


def torch_gates(x: torch.Tensor) -> torch.Tensor:
    """ONNX's GRU gate blocks (z, r, h) in PyTorch's order (r, z, n), along dim 0."""
    z, r, h = x.chunk(3, dim=0)
    return torch.cat([r, z, h], dim=0)


class BiGru(torch.autograd.Function):
    """ONNX's bidirectional GRU with sequence_lens, over time-major x [T, B, D]: the backward direction
    reads each text reversed within its own length, and steps past a text's length output zeros.
    Weights in ONNX's layout: w [2, 3H, D], r [2, 3H, H], b [2, 6H], gates z, r, h, linear_before_reset.
    Exported as that one GRU node; run in PyTorch (the export's trace, check()) step by step."""

    @staticmethod
    def forward(ctx, x, w, r, b, lengths, hidden: int):
        t_len, batch = x.shape[0], x.shape[1]
        live = (torch.arange(t_len).unsqueeze(1) < lengths.to(torch.int64).unsqueeze(0)).unsqueeze(2)  # [T, B, 1]
        y = x.new_zeros(t_len, 2, batch, hidden)
        for d, steps in ((0, range(t_len)), (1, range(t_len - 1, -1, -1))):
            wz, wr, wh = (x @ w[d].T + b[d, :3 * hidden]).split(hidden, dim=2)  # [T, B, H] each
            rz, rr, rh = r[d].split(hidden, dim=0)
            bz, br, bh = b[d, 3 * hidden:].split(hidden)
            h = x.new_zeros(batch, hidden)
            for t in steps:
                z = torch.sigmoid(wz[t] + h @ rz.T + bz)
                g = torch.sigmoid(wr[t] + h @ rr.T + br)
                n = torch.tanh(wh[t] + g * (h @ rh.T + bh))
                # past a text's end the state stays zero, so the backward direction starts at its last token
                h = torch.where(live[t], (1 - z) * n + z * h, torch.zeros_like(h))
                y[t, d] = h
        return y

    @staticmethod
    def symbolic(g, x, w, r, b, lengths, hidden: int):
        y, _ = g.op("GRU", x, w, r, b, lengths, direction_s="bidirectional", hidden_size_i=hidden,
                    linear_before_reset_i=1, outputs=2)
        return y


class LeanGru(nn.Module):
    """A GruBranch without packed sequences (which do not export) as one ONNX GRU node: both directions,
    the backward one within each text's length (BiGru). Embeddings as int8 rows, like Lean, looked up
    time-major so that the GRU reads them without a transpose."""

    def __init__(self, branch: GruBranch):
        super().__init__()
        q, scale = quantise_rows(branch.embed.weight)
        self.register_buffer("q", q)  # [V, D] int8
        self.register_buffer("scale", scale)  # [V, 1]
        rnn = branch.rnn
        self.hidden = rnn.hidden_size
        with torch.no_grad():
            def both(name: str) -> torch.Tensor:
                return torch.stack([onnx_gates(getattr(rnn, name)), onnx_gates(getattr(rnn, name + "_reverse"))])
            self.register_buffer("gru_w", both("weight_ih_l0").clone())  # [2, 3H, D]
            self.register_buffer("gru_r", both("weight_hh_l0").clone())  # [2, 3H, H]
            self.register_buffer("gru_b", torch.cat([both("bias_ih_l0"), both("bias_hh_l0")], dim=1).clone())  # [2, 6H]
        self.attn, self.mlp = branch.attn, branch.mlp

    def forward(self, ids_tm: torch.Tensor, lengths: torch.Tensor, keep: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
        """ids_tm [T, B] with padding read as [PAD]; lengths [B] int32 real tokens per text; keep [B, T, 1]
        bool; count [B, 1] real tokens per text, float."""
        e = self.q[ids_tm].to(torch.float32) * self.scale[ids_tm]  # [T, B, D]
        y = BiGru.apply(e, self.gru_w, self.gru_r, self.gru_b, lengths, self.hidden)  # [T, 2, B, H]
        m = keep.to(torch.float32)
        # [B, T, 2H]: forward | backward, as PyTorch lays them; zeroed past each text here, not left to the
        # GRU (ONNX does not say what it outputs there)
        h = torch.cat([y[:, 0], y[:, 1]], dim=2).transpose(0, 1) * m
        pooled = [(h - 1e4 * (1 - m)).amax(dim=1), h.sum(dim=1) / count]
        weights = torch.softmax(torch.where(keep, self.attn(h), torch.tensor(-1e4)), dim=1)
        pooled.append(torch.bmm(weights.transpose(1, 2), h).flatten(1))
        return self.mlp(torch.cat(pooled, dim=1))


class CompactNet(nn.Module):
    """EmotionNet's outputs from Lean branches, with the packing and window ids computed once."""

    def __init__(self, net: EmotionNet):
        super().__init__()
        self.six = nn.ModuleList(LeanGru(m) if isinstance(m, GruBranch) else Lean(m) for m in net.six.members)
        self.sub = Lean(net.branches["sub"])
        self.va = Lean(net.branches["va"])
        self.va_bag = net.va_bag
        self.register_buffer("va_mix", net.va_mix.clone())

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor):
        b, t = input_ids.shape
        mask = attention_mask.to(torch.float32)  # [B, T]
        live = attention_mask.reshape(-1) > 0
        idx = torch.nonzero(live).reshape(-1)  # real tokens, in order
        inv = torch.where(live, torch.cumsum(live.to(torch.int64), dim=0) - 1, idx.shape[0])
        # window ids: position p (text p // T) sits at p + 2 (p // T) + 1 in the [B, T + 2] zero-padded ids
        padded = nn.functional.pad(input_ids * attention_mask, (1, 1)).reshape(-1)
        base = idx + 2 * torch.div(idx, t, rounding_mode="trunc")
        win = padded.index_select(0, (base.unsqueeze(1) + torch.arange(KERNEL)).reshape(-1)).reshape(-1, KERNEL)
        keep = (attention_mask > 0).unsqueeze(2)  # [B, T, 1]
        count = mask.sum(dim=1, keepdim=True).clamp(min=1.0)  # [B, 1]

        probs = []
        if any(isinstance(m, LeanGru) for m in self.six):
            lengths = attention_mask.sum(dim=1).to(torch.int32)  # [B]
            ids_tm = (input_ids * attention_mask).transpose(0, 1)  # [T, B]
        for m in self.six:
            z = m(ids_tm, lengths, keep, count) if isinstance(m, LeanGru) else m(win, inv, b, t, keep, count)
            probs.append(torch.softmax(z, dim=1))
        six = torch.stack(probs, dim=0).mean(dim=0)
        sub = torch.sigmoid(self.sub(win, inv, b, t, keep, count))
        z = self.va(win, inv, b, t, keep, count)
        net_va = torch.cat([torch.tanh(z[:, :1]), torch.sigmoid(z[:, 1:])], dim=1)
        bag_va = self.va_bag(input_ids, mask.unsqueeze(1))
        va = self.va_mix * bag_va + (1 - self.va_mix) * net_va
        va = torch.cat([va[:, :1].clamp(-1.0, 1.0), va[:, 1:].clamp(0.0, 1.0)], dim=1)
        return six, sub, va


def net_from_onnx(path: str) -> EmotionNet:
    """An EmotionNet holding the weights of an exported model (int8 embeddings dequantised)."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load(path)
    w = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in m.graph.initializer}
    raw = dict(w)  # by the names the graph's nodes use, before the renaming below

    def branch(name: str) -> str:
        """A branch's name in EmotionNet, from EmotionNet's export ("six.members.0", "sub") or CompactNet's
        ("six.0", "sub")."""
        name = re.sub(r"^six\.(\d+)", r"six.members.\1", name)
        return {"sub": "branches.sub", "va": "branches.va"}.get(name, name)

    for key in list(w):  # CompactNet's names: six.0.conv.weight, sub.q and sub.scale (the int8 rows), ...
        named = re.match(r"^(six\.\d+|sub|va)\.(.+)$", key)
        if named:
            prefix, leaf = named.groups()
            leaf = {"q": "embed.weight", "scale": "embed.weight_scale"}.get(leaf, leaf)
            w[f"{branch(prefix)}.{leaf}"] = w.pop(key)
    # attention weights were renamed at export (ONNX MatMul operands); find them by the node that reads them
    for node in m.graph.node:
        if node.op_type == "MatMul" and node.name.endswith("/attn/MatMul"):
            prefix = branch(node.name.strip("/").split("/attn/")[0].replace("/", "."))
            w[f"{prefix}.attn.weight"] = w[node.input[1]].T
        elif node.op_type == "GRU":
            # ONNX keeps gates as z, r, h; PyTorch as r, z, n. A bidirectional node (LeanGru) holds both
            # directions; 1.3.0's first layout had one node per direction, named .../fw/GRU and .../bw/GRU.
            bidirectional = any(a.name == "direction" and a.s == b"bidirectional" for a in node.attribute)
            if bidirectional:
                scope = node.input[1].rsplit(".", 1)[0]  # six.0.gru_w -> six.0
                directions = [("", 0), ("_reverse", 1)]
            else:
                scope, direction = node.name.strip("/").split("/")[:2]
                directions = [("" if direction == "fw" else "_reverse", 0)]
            rnn = f"{branch(scope)}.rnn"
            for suffix, d in directions:
                bias_ih, bias_hh = raw[node.input[3]][d].chunk(2)
                w[f"{rnn}.weight_ih_l0{suffix}"] = torch_gates(raw[node.input[1]][d])
                w[f"{rnn}.weight_hh_l0{suffix}"] = torch_gates(raw[node.input[2]][d])
                w[f"{rnn}.bias_ih_l0{suffix}"] = torch_gates(bias_ih)
                w[f"{rnn}.bias_hh_l0{suffix}"] = torch_gates(bias_hh)
    six = sorted({k.split(".")[2] for k in w if k.startswith("six.members.")})
    vocab = w["va_bag.u"].shape[0]

    def cfg(prefix: str) -> dict:
        if f"{prefix}.rnn.weight_hh_l0" in w:
            return dict(kind="gru", dim=w[f"{prefix}.embed.weight"].shape[1],
                        channels=2 * w[f"{prefix}.rnn.weight_hh_l0"].shape[1], heads=w[f"{prefix}.attn.weight"].shape[0],
                        hidden=w[f"{prefix}.mlp.0.weight"].shape[0])
        return dict(kind="cnn", dim=w[f"{prefix}.embed.weight"].shape[1], channels=w[f"{prefix}.conv.weight"].shape[0],
                    kernel=w[f"{prefix}.conv.weight"].shape[1] // w[f"{prefix}.embed.weight"].shape[1],
                    heads=w[f"{prefix}.attn.weight"].shape[0], hidden=w[f"{prefix}.mlp.0.weight"].shape[0])

    config = {"six": cfg("six.members.0"), "sub": cfg("branches.sub"), "va": cfg("branches.va")}
    net = EmotionNet(vocab, config, six_members=len(six))
    state = {}
    for key in net.state_dict():
        if key.endswith("embed.weight"):
            state[key] = w[key].to(torch.float32) * w[key + "_scale"]
        else:
            state[key] = w[key]
    net.load_state_dict(state)
    return net.eval()


def check(net: EmotionNet, compact: CompactNet, texts: list[str], enc) -> float:
    """Largest absolute difference between the two networks' outputs, over batches of mixed lengths
    (the reference's embeddings rounded to int8 as the compact graph stores them)."""
    import copy

    from fit import pad

    net = copy.deepcopy(net).eval()
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.Embedding):
                q, scale = quantise_rows(m.weight)
                m.weight.copy_(q.to(torch.float32) * scale)
    worst = 0.0
    with torch.no_grad():
        for i in range(0, len(texts), 61):  # an odd batch size, so lengths mix differently in each
            ids, mask = pad([enc(t) for t in texts[i: i + 61]])
            for a, b in zip(net(ids, mask), compact(ids, mask)):
                worst = max(worst, float((a - b).abs().max()))
    return worst


def main() -> None:
    import corpora
    import export
    from fit import Encoder
    from tokenizer import Tokenizer

    here = os.path.join(os.path.dirname(__file__), "..", "emotion")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=os.path.join(here, "model.onnx"))
    ap.add_argument("--out", default=None, help="where to write the compact graph (default: replace --model)")
    args = ap.parse_args()
    net = net_from_onnx(args.model)
    compact = CompactNet(net).eval()
    enc = Encoder(Tokenizer.load(os.path.join(os.path.dirname(args.model), "tokenizer.json")))
    texts = [t for t, _ in corpora.dair("val")] + ["", "😭😭😭", "I'm NOT happy at all!!!", "x " * 300]
    worst = check(net, compact, texts, enc)
    print(f"largest output difference over {len(texts)} texts: {worst:.2e}", flush=True)
    if worst > 1e-5:
        sys.exit("the compact graph does not reproduce the model")
    out = args.out or args.model
    export.export_onnx(compact, out)
    manifest_path = os.path.join(os.path.dirname(out), "manifest.json")
    if os.path.basename(out) == "model.onnx" and os.path.exists(manifest_path):
        with open(manifest_path, encoding="utf-8") as f:
            manifest = json.load(f)
        manifest["files"]["model.onnx"] = export.file_entry(out)
        with open(manifest_path, "w", encoding="utf-8") as f:
            json.dump(manifest, f, ensure_ascii=False, indent=2)
            f.write("\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
