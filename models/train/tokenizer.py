"""Sentio's tokenizer: the reference implementation.

The C++ engine (native/tokenizer.cc) and the JS port (src/tokenizer/) must give exactly the ids this
module gives; models/emotion/fixtures/tokenizer-golden.json pins that. The whole algorithm is specified
in models/emotion/TOKENIZER.md. All Unicode knowledge lives in two tables written into tokenizer.json
(char_map and classes), so no implementation depends on its own Unicode database version.
"""
from __future__ import annotations

import json
import unicodedata
from collections import Counter
from typing import Iterable

PAD, UNK, CLS = "[PAD]", "[UNK]", "[CLS]"
SPECIALS = [PAD, UNK, CLS]
MAX_WORD_CHARS = 50
CLASS_DROP, CLASS_SPACE, CLASS_ISOLATED, CLASS_WORD = 0, 1, 2, 3
CLASS_NAMES = {CLASS_DROP: "drop", CLASS_SPACE: "space", CLASS_ISOLATED: "isolated", CLASS_WORD: "word"}

# Scripts written without spaces: one token per character, as BERT does for Han.
_CJK_RANGES = [(0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF),
               (0x20000, 0x2FFFF), (0x30000, 0x3134F)]


def _is_cjk(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


def _class_of(cp: int) -> int:
    if cp in (0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x85):
        return CLASS_SPACE
    cat = unicodedata.category(chr(cp))
    if cat in ("Zs", "Zl", "Zp"):
        return CLASS_SPACE
    if 0x1F3FB <= cp <= 0x1F3FF:  # emoji skin-tone modifiers carry no emotion
        return CLASS_DROP
    if cat in ("Cc", "Cf", "Cs", "Co", "Mn", "Me"):
        return CLASS_DROP
    if _is_cjk(cp):
        return CLASS_ISOLATED
    if cat[0] in ("L", "N") or cat == "Mc":
        return CLASS_WORD
    return CLASS_ISOLATED  # punctuation, symbols, emoji, unassigned code points


def _mapped(cp: int) -> str:
    """Compatibility decomposition, then lowercase; marks are dropped later by the class table."""
    if 0xAC00 <= cp <= 0xD7A3:  # keep Hangul syllables whole
        return chr(cp)
    s = unicodedata.normalize("NFKD", chr(cp)).lower()
    return unicodedata.normalize("NFKD", s)


def build_tables() -> tuple[dict[int, list[int]], list[list[int]]]:
    """char_map: code point -> replacement code points (only where it differs from identity).
    classes: sorted [first, last, class] ranges covering 0..0x10FFFF."""
    char_map: dict[int, list[int]] = {}
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        m = _mapped(cp)
        if m != chr(cp):
            char_map[cp] = [ord(c) for c in m]
    ranges: list[list[int]] = []
    for cp in range(0x110000):
        c = _class_of(cp)
        if ranges and ranges[-1][2] == c and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp, c])
    return char_map, ranges


class Tokenizer:
    def __init__(self, vocab: list[str], char_map: dict[int, list[int]], classes: list[list[int]],
                 max_length: int):
        self.vocab = vocab
        self.ids = {t: i for i, t in enumerate(vocab)}
        self.char_map = char_map
        self.max_length = max_length
        self.unk_id, self.cls_id, self.pad_id = self.ids[UNK], self.ids[CLS], self.ids[PAD]
        self._class = bytearray(0x110000)
        for lo, hi, c in classes:
            self._class[lo:hi + 1] = bytes([c]) * (hi - lo + 1)

    # -- persistence --------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {
            "version": 1,
            "algorithm": "sentio-wordpiece-1",
            "max_length": self.max_length,
            "max_word_chars": MAX_WORD_CHARS,
            "continuation_prefix": "##",
            "special_tokens": {"pad": PAD, "unk": UNK, "cls": CLS},
            "classes_legend": CLASS_NAMES,
            "char_map": [[cp, repl] for cp, repl in sorted(self.char_map.items())],
            "classes": self.classes_ranges(),
            "vocab": self.vocab,
        }

    def classes_ranges(self) -> list[list[int]]:
        out: list[list[int]] = []
        for cp in range(0x110000):
            c = self._class[cp]
            if out and out[-1][2] == c and out[-1][1] == cp - 1:
                out[-1][1] = cp
            else:
                out.append([cp, cp, c])
        return out

    @classmethod
    def from_json(cls, data: dict) -> "Tokenizer":
        char_map = {int(cp): list(repl) for cp, repl in data["char_map"]}
        return cls(data["vocab"], char_map, data["classes"], data["max_length"])

    @classmethod
    def load(cls, path: str) -> "Tokenizer":
        with open(path, encoding="utf-8") as f:
            return cls.from_json(json.load(f))

    # -- algorithm ----------------------------------------------------------------------------
    def pre_tokenize(self, text: str, limit: int | None = None) -> list[str]:
        """Normalize and split into words and isolated characters. `limit` stops early once that many
        pre-tokens are complete (every pre-token yields at least one piece, so truncation is unchanged)."""
        out: list[str] = []
        word: list[str] = []
        for ch in text:
            cp = ord(ch)
            if 0xD800 <= cp <= 0xDFFF:  # lone surrogate
                cp = 0xFFFD
            for m in self.char_map.get(cp, (cp,)):
                c = self._class[m]
                if c == CLASS_WORD:
                    word.append(chr(m))
                elif c == CLASS_DROP:
                    continue
                else:
                    if word:
                        out.append("".join(word))
                        word = []
                    if c == CLASS_ISOLATED:
                        out.append(chr(m))
            if limit is not None and len(out) >= limit:
                return out
        if word:
            out.append("".join(word))
        return out

    def word_pieces(self, word: str) -> list[int]:
        if len(word) > MAX_WORD_CHARS:
            return [self.unk_id]
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while end > start:
                sub = word[start:end] if start == 0 else "##" + word[start:end]
                tid = self.ids.get(sub)
                if tid is not None:
                    found = tid
                    break
                end -= 1
            if found is None:
                return [self.unk_id]
            pieces.append(found)
            start = end
        return pieces

    def encode(self, text: str) -> list[int]:
        """[CLS] followed by word pieces, truncated to max_length ids in all."""
        budget = self.max_length - 1
        ids = [self.cls_id]
        for word in self.pre_tokenize(text, limit=budget):
            ids.extend(self.word_pieces(word))
            if len(ids) - 1 >= budget:
                break
        return ids[: self.max_length]


def build_vocab(texts: Iterable[str], char_map: dict[int, list[int]], classes: list[list[int]],
                size: int, min_word_freq: int = 2, extra_tokens: Iterable[str] = ()) -> list[str]:
    """A small, deterministic WordPiece-style vocabulary: every character seen (as a start and as a
    continuation), every isolated symbol seen, the commonest whole words, then the commonest word
    prefixes and suffixes (by frequency-weighted count) until `size` entries. Ties break by string."""
    probe = Tokenizer(SPECIALS, char_map, classes, 1 << 30)
    words: Counter[str] = Counter()
    isolated: Counter[str] = Counter()
    for t in texts:
        for w in probe.pre_tokenize(t):
            if len(w) == 1 and probe._class[ord(w)] == CLASS_ISOLATED:
                isolated[w] += 1
            else:
                words[w] += 1
    vocab: list[str] = list(SPECIALS)
    seen = set(vocab)

    def add(tok: str) -> None:
        if tok not in seen and len(vocab) < size:
            seen.add(tok)
            vocab.append(tok)

    for tok in extra_tokens:
        add(tok)
    for sym, _ in sorted(isolated.items(), key=lambda kv: (-kv[1], kv[0])):
        add(sym)
    chars: Counter[str] = Counter()
    for w, n in words.items():
        for ch in w:
            chars[ch] += n
    for ch, _ in sorted(chars.items(), key=lambda kv: (-kv[1], kv[0])):
        add(ch)
        add("##" + ch)
    frequent = [(w, n) for w, n in words.items() if n >= min_word_freq and len(w) <= MAX_WORD_CHARS]
    frequent.sort(key=lambda kv: (-kv[1], kv[0]))
    word_budget = len(vocab) + (size - len(vocab)) * 3 // 4
    for w, _ in frequent:
        if len(vocab) >= word_budget:
            break
        add(w)
    pieces: Counter[str] = Counter()
    for w, n in words.items():
        if w in seen:
            continue
        for k in range(2, min(len(w), 9)):
            pieces[w[:k]] += n
            pieces["##" + w[-k:]] += n
    for p, _ in sorted(pieces.items(), key=lambda kv: (-kv[1], kv[0])):
        if len(vocab) >= size:
            break
        add(p)
    return vocab
