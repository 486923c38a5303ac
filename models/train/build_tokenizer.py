"""Build models/emotion/tokenizer.json from the training corpora (deterministic).
   /usr/bin/python3 models/train/build_tokenizer.py [--vocab-size N] [--max-length N] [--no-dair] [--out PATH]

train.py --no-dair calls build() itself: a vocabulary learned from dair-ai text is derived from that data
too, so the variant without it gets its own."""
import argparse
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from tokenizer import Tokenizer, build_tables, build_vocab  # noqa: E402
import corpora  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


# Typographic apostrophes (’ as phone keyboards type it, ‘, and the modifier letter ʼ) read as ': kept as
# tokens of their own, "don’t" lost its negation ("I don’t feel happy anymore." read joy). Folded after the
# vocabulary is learned, so that the vocabulary, and the ids the model was trained on, stay as they were.
APOSTROPHES = (0x2018, 0x2019, 0x02BC)


def build(out: str, include_dair: bool = True, vocab_size: int = 30000, max_length: int = 128) -> Tokenizer:
    """Learn the vocabulary from the corpora's training texts and write the tokenizer to `out`."""
    char_map, classes = build_tables()
    texts = corpora.vocab_texts(include_dair=include_dair)
    vocab = build_vocab(texts, char_map, classes, vocab_size, extra_tokens=corpora.EXTRA_TOKENS)
    char_map.update({cp: [ord("'")] for cp in APOSTROPHES})
    tok = Tokenizer(vocab, char_map, classes, max_length)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(tok.to_json(), f, ensure_ascii=False, separators=(",", ":"))
    print(f"vocab {len(vocab)} tokens, char_map {len(char_map)} entries, {len(classes)} class ranges -> {out}")
    return tok


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab-size", type=int, default=30000)
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--no-dair", action="store_true", help="leave the research-only dair-ai data out")
    ap.add_argument("--out", default=os.path.join(ROOT, "models", "emotion", "tokenizer.json"))
    ap.add_argument("--repin", metavar="VERSION",
                    help="also re-pin the tokenizer's checksum in the manifest beside --out, under this model "
                         "version (a tokenizer rebuilt for a model whose weights stay)")
    args = ap.parse_args()
    build(args.out, include_dair=not args.no_dair, vocab_size=args.vocab_size, max_length=args.max_length)
    if args.repin:
        repin(os.path.dirname(os.path.abspath(args.out)), args.repin)


def repin(model_dir: str, version: str) -> None:
    path = os.path.join(model_dir, "manifest.json")
    with open(path, encoding="utf-8") as f:
        manifest = json.load(f)
    manifest["version"] = version
    tok_path = os.path.join(model_dir, "tokenizer.json")
    with open(tok_path, "rb") as f:
        manifest["files"]["tokenizer.json"] = {"sha256": hashlib.sha256(f.read()).hexdigest(), "bytes": os.path.getsize(tok_path)}
    manifest["training"]["tokenizer_command"] = " ".join(["/usr/bin/python3", "models/train/build_tokenizer.py"] + sys.argv[1:])
    with open(path, "w", encoding="utf-8") as f:
        json.dump(manifest, f, ensure_ascii=False, indent=2)
        f.write("\n")
    print(f"re-pinned tokenizer.json in {path} as version {version}")


if __name__ == "__main__":
    main()
