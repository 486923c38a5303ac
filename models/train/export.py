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
    embeddings_to_int8(path)


def embeddings_to_int8(path: str) -> None:
    """Stores each embedding table as int8 with one float scale per row, and rebuilds the float rows
    after the lookup (Gather int8 -> Cast -> Mul by the gathered row scale). The tables are nearly all of
    the file; this makes it 4x smaller, and the rounding error (under 0.4% of a row's largest value)
    does not change the outputs measurably. Everything after the lookup stays float32."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    m = onnx.load(path)
    inits = {i.name: i for i in m.graph.initializer}
    nodes = []
    converted: set[str] = set()  # a table may be read by several Gathers (one per window offset)
    for node in m.graph.node:
        if node.op_type != "Gather" or node.input[0] not in inits:
            nodes.append(node)
            continue
        name, ids, out = node.input[0], node.input[1], node.output[0]
        if name not in converted:
            arr = numpy_helper.to_array(inits[name])
            # only real embedding tables: float, many rows, wide rows (not the ridge's 1-2 column tables)
            if arr.dtype != np.float32 or arr.ndim != 2 or arr.shape[0] < 1000 or arr.shape[1] < 16:
                nodes.append(node)
                continue
            scale = np.abs(arr).max(axis=1, keepdims=True) / 127.0
            scale[scale == 0] = 1.0
            q = np.clip(np.round(arr / scale), -127, 127).astype(np.int8)
            inits[name].CopyFrom(numpy_helper.from_array(q, name))
            m.graph.initializer.append(numpy_helper.from_array(scale.astype(np.float32), name + "_scale"))
            converted.add(name)
        nodes += [
            helper.make_node("Gather", [name, ids], [out + "_q"], name=node.name + "_q"),
            helper.make_node("Cast", [out + "_q"], [out + "_f"], to=onnx.TensorProto.FLOAT, name=node.name + "_cast"),
            helper.make_node("Gather", [name + "_scale", ids], [out + "_s"], name=node.name + "_scale"),
            helper.make_node("Mul", [out + "_f", out + "_s"], [out], name=node.name + "_dequant"),
        ]
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    # value_info recorded for rewritten outputs could now be wrong; shapes are re-inferred at load
    del m.graph.value_info[:]
    onnx.checker.check_model(m)
    onnx.save(m, path)


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
