"""The network: word-piece embeddings, a few 1-D convolutions, masked max+mean pooling, three heads.

Padding must not change a text's outputs (the engine batches texts of different lengths), so padded
positions are zeroed before every convolution (exactly what 'same' zero padding does at a text's end) and
excluded from both poolings."""
from __future__ import annotations

import torch
from torch import nn

N_SIX, N_SUB = 6, 28


class EmotionNet(nn.Module):
    def __init__(self, vocab_size: int, dim: int = 128, channels: int = 256, kernels: tuple[int, ...] = (1, 3, 5),
                 dropout: float = 0.3, hidden: int = 256):
        super().__init__()
        self.config = dict(vocab_size=vocab_size, dim=dim, channels=channels, kernels=list(kernels),
                           dropout=dropout, hidden=hidden)
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=0)
        # one conv per kernel width; odd widths keep 'same' alignment simple
        self.convs = nn.ModuleList(nn.Conv1d(dim, channels, k, padding=k // 2) for k in kernels)
        feat = 2 * channels * len(kernels)
        self.drop = nn.Dropout(dropout)
        self.trunk = nn.Sequential(nn.Linear(feat, hidden), nn.GELU(), nn.Dropout(dropout))
        self.six = nn.Linear(hidden, N_SIX)
        self.sub = nn.Linear(hidden, N_SUB)
        self.va = nn.Linear(hidden, 2)

    def features(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        mask = attention_mask.to(torch.float32).unsqueeze(1)  # [B, 1, T]
        x = self.embed(input_ids).transpose(1, 2) * mask  # [B, D, T]
        x = self.drop(x)
        pooled = []
        count = mask.sum(dim=2).clamp(min=1.0)
        for conv in self.convs:
            h = torch.relu(conv(x)) * mask
            # ReLU output is >= 0 and padded positions are 0, so a plain max is already mask-correct
            pooled.append(h.max(dim=2).values)
            pooled.append(h.sum(dim=2) / count)
        return self.trunk(self.drop(torch.cat(pooled, dim=1)))

    def logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor):
        h = self.features(input_ids, attention_mask)
        return self.six(h), self.sub(h), self.va(h)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor):
        six, sub, va = self.logits(input_ids, attention_mask)
        valence = torch.tanh(va[:, :1])
        arousal = torch.sigmoid(va[:, 1:])
        return torch.softmax(six, dim=1), torch.sigmoid(sub), torch.cat([valence, arousal], dim=1)
