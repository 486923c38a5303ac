"""Readers for ../shared/data. Nothing here is committed data: the files are read where they lie."""
import csv
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.environ.get("SENTIO_DATA", os.path.join(ROOT, "..", "shared", "data"))

# Emoji that must be whole tokens even if the corpora rarely show them: the augmentation lexicon's emoji,
# then the whole Emoticons block (U+1F600..U+1F64F) so every face has its own id.
from lexicon import EMOJI  # noqa: E402

_LEGACY = "😭😢😥😞😔💔😿😡🤬😠👿💢😤😱😨😰😧😟😬😮😲😯🤯😳🙀❤💕💖💗💘💞💓😍🥰😘😻🤗😀😃😄😁😂🤣😊🙂😆🎉🥳✨👍🙏🤔🥺😐😑🙄😒😩😫"
EXTRA_TOKENS = list(dict.fromkeys(list(_LEGACY) + list(EMOJI) + [chr(c) for c in range(0x1F600, 0x1F650)]))


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
    """Texts with double quotes are CSV-quoted inside the TSV, so read it with a CSV reader."""
    rows = []
    with open(os.path.join(DATA, "goemotions", f"{split}.tsv"), encoding="utf-8", newline="") as f:
        for parts in csv.reader(f, delimiter="\t", quotechar='"'):
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
