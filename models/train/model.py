"""The network: one graph, three branches over the same token ids, one per output.

Each branch is word-piece embeddings -> a 1-D convolution -> masked max + mean + attention pooling -> a
small MLP. The branches share nothing but the input: in a shared encoder the GoEmotions and EmoBank
losses cost dair-ai accuracy (0.906 vs 0.921 on val in one comparison), and embedding tables are cheap
at inference while convolution width is not, so each task gets its own table and a conv sized to need.

Padding must not change a text's outputs (the engine batches texts of different lengths), so padded
positions are zeroed before the convolution (exactly what 'same' zero padding does at a text's end) and
excluded from every pooling."""
from __future__ import annotations

import torch
from torch import nn

N_SIX, N_SUB = 6, 28


class Branch(nn.Module):
    def __init__(self, vocab_size: int, dim: int, channels: int, kernel: int, heads: int, hidden: int,
                 out: int, dropout: float):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.conv = nn.Conv1d(dim, channels, kernel, padding=kernel // 2)
        self.attn = nn.Conv1d(channels, heads, 1) if heads else None
        self.drop = nn.Dropout(dropout)
        self.mlp = nn.Sequential(nn.Linear(channels * (2 + heads), hidden), nn.GELU(), nn.Dropout(dropout),
                                 nn.Linear(hidden, out))

    def forward(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.embed(input_ids).transpose(1, 2) * mask  # [B, D, T], padding zeroed
        h = torch.relu(self.conv(x)) * mask  # [B, C, T]
        count = mask.sum(dim=2).clamp(min=1.0)
        # ReLU output is >= 0 and padded positions are 0, so a plain max is already mask-correct
        pooled = [h.max(dim=2).values, h.sum(dim=2) / count]
        if self.attn is not None:
            scores = self.attn(h).masked_fill(mask == 0, -1e4)  # [B, heads, T]
            pooled.append(torch.bmm(torch.softmax(scores, dim=2), h.transpose(1, 2)).flatten(1))
        return self.mlp(self.drop(torch.cat(pooled, dim=1)))


BRANCH_DEFAULTS = {
    "six": dict(dim=128, channels=256, kernel=3, heads=2, hidden=256, dropout=0.3),
    "sub": dict(dim=128, channels=192, kernel=3, heads=2, hidden=256, dropout=0.3),
    "va": dict(dim=64, channels=64, kernel=3, heads=1, hidden=64, dropout=0.3),
}
OUT_SIZES = {"six": N_SIX, "sub": N_SUB, "va": 2}


class EmotionNet(nn.Module):
    def __init__(self, vocab_size: int, config: dict | None = None):
        super().__init__()
        cfg = {k: dict(v, **(config or {}).get(k, {})) for k, v in BRANCH_DEFAULTS.items()}
        self.config = {"vocab_size": vocab_size, "branches": cfg}
        self.branches = nn.ModuleDict({k: Branch(vocab_size, out=OUT_SIZES[k], **cfg[k]) for k in cfg})

    def logits(self, name: str, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.branches[name](input_ids, attention_mask.to(torch.float32).unsqueeze(1))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor):
        mask = attention_mask.to(torch.float32).unsqueeze(1)  # [B, 1, T]
        six = self.branches["six"](input_ids, mask)
        sub = self.branches["sub"](input_ids, mask)
        va = self.branches["va"](input_ids, mask)
        valence = torch.tanh(va[:, :1])
        arousal = torch.sigmoid(va[:, 1:])
        return torch.softmax(six, dim=1), torch.sigmoid(sub), torch.cat([valence, arousal], dim=1)
