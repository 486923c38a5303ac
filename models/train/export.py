"""Export a trained EmotionNet to ONNX and write manifest.json with the files' sha256 and sizes."""
from __future__ import annotations

import hashlib
import json
import os

import torch

OPSET = 17
SIX_LABELS = ["sadness", "joy", "love", "anger", "fear", "surprise"]  # output order of `emotions`


def export_onnx(model: torch.nn.Module, path: str) -> None:
    model.eval()
    ids = torch.tensor([[2, 10, 11, 12], [2, 13, 0, 0]], dtype=torch.int64)
    mask = (ids != 0).to(torch.int64)
    torch.onnx.export(
        model, (ids, mask), path, opset_version=OPSET,
        input_names=["input_ids", "attention_mask"],
        output_names=["emotions", "sub_emotions", "valence_arousal"],
        dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                      "emotions": {0: "batch"}, "sub_emotions": {0: "batch"}, "valence_arousal": {0: "batch"}},
        do_constant_folding=True)


def file_entry(path: str) -> dict:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return {"sha256": h.hexdigest(), "bytes": os.path.getsize(path)}


def write_manifest(out_dir: str, version: str, max_length: int, sub_labels: list[str],
                   thresholds: dict[str, float], metrics: dict, extra: dict | None = None) -> dict:
    manifest = {
        "name": "sentio-emotion",
        "version": version,
        "max_length": max_length,
        "inputs": {
            "input_ids": {"dtype": "int64", "shape": ["batch", "seq"],
                          "note": "[CLS] first, pad id 0; seq >= 1"},
            "attention_mask": {"dtype": "int64", "shape": ["batch", "seq"], "note": "1 = token, 0 = padding"},
        },
        "outputs": {
            "emotions": {"dtype": "float32", "shape": ["batch", 6], "activation": "softmax",
                         "labels": SIX_LABELS},
            "sub_emotions": {"dtype": "float32", "shape": ["batch", len(sub_labels)],
                             "activation": "sigmoid (independent)", "labels": sub_labels,
                             "thresholds": thresholds,
                             "thresholds_note": "per label, chosen to maximise F1 on a split held out of "
                                                "GoEmotions train (not dev, not test)"},
            "valence_arousal": {"dtype": "float32", "shape": ["batch", 2], "labels": ["valence", "arousal"],
                                "ranges": {"valence": [-1.0, 1.0], "arousal": [0.0, 1.0]},
                                "note": "EmoBank 1-5 scales: valence (V-3)/2, arousal (A-1)/4"},
        },
        "files": {name: file_entry(os.path.join(out_dir, name)) for name in ("model.onnx", "tokenizer.json")},
        "metrics": metrics,
    }
    if extra:
        manifest.update(extra)
    with open(os.path.join(out_dir, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, ensure_ascii=False, indent=2)
        f.write("\n")
    return manifest
