"""Build models/emotion/tokenizer.json from the training corpora (deterministic).
   /usr/bin/python3 models/train/build_tokenizer.py [--vocab-size N] [--max-length N] [--no-dair] [--out PATH]

train.py --no-dair calls build() itself: a vocabulary learned from dair-ai text is derived from that data
too, so the variant without it gets its own."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from tokenizer import Tokenizer, build_tables, build_vocab  # noqa: E402
import corpora  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def build(out: str, include_dair: bool = True, vocab_size: int = 30000, max_length: int = 128) -> Tokenizer:
    """Learn the vocabulary from the corpora's training texts and write the tokenizer to `out`."""
    char_map, classes = build_tables()
    texts = corpora.vocab_texts(include_dair=include_dair)
    vocab = build_vocab(texts, char_map, classes, vocab_size, extra_tokens=corpora.EXTRA_TOKENS)
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
    args = ap.parse_args()
    build(args.out, include_dair=not args.no_dair, vocab_size=args.vocab_size, max_length=args.max_length)


if __name__ == "__main__":
    main()
