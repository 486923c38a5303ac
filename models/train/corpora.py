"""Readers for ../shared/data. Nothing here is committed data: the files are read where they lie."""
import csv
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.environ.get("SENTIO_DATA", os.path.join(ROOT, "..", "shared", "data"))

# Emoji that must be whole tokens even if the corpora rarely show them (see emoji lexicon in training).
EXTRA_TOKENS = list("😭😢😥😞😔💔😿😡🤬😠👿💢😤😱😨😰😧😟😬😮😲😯🤯😳🙀❤💕💖💗💘💞💓😍🥰😘😻🤗😀😃😄😁😂🤣😊🙂😆🎉🥳✨👍🙏🤔🥺😐😑🙄😒😩😫")


def dair(split: str) -> list[tuple[str, str]]:
    rows = []
    with open(os.path.join(DATA, "dair-ai-emotion", f"{split}.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                text, label = line.rsplit(";", 1)
                rows.append((text, label))
    return rows


def goemotions(split: str) -> list[tuple[str, list[int]]]:
    rows = []
    with open(os.path.join(DATA, "goemotions", f"{split}.tsv"), encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2:
                rows.append((parts[0], [int(x) for x in parts[1].split(",")]))
    return rows


def goemotions_labels() -> list[str]:
    with open(os.path.join(DATA, "goemotions", "emotions.txt"), encoding="utf-8") as f:
        return [l.strip() for l in f if l.strip()]


def emobank(split: str) -> list[tuple[str, float, float]]:
    rows = []
    with open(os.path.join(DATA, "emobank", "emobank.csv"), encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            if r["split"] == split:
                rows.append((r["text"], float(r["V"]), float(r["A"])))
    return rows


def vocab_texts(include_dair: bool = True) -> list[str]:
    texts = [t for t, _ in goemotions("train")] + [t for t, _, _ in emobank("train")]
    if include_dair:
        texts += [t for t, _ in dair("train")]
    return texts
