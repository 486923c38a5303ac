"""Training examples for the three heads, the splits used for selection, and chat-style augmentation.

Every example carries optional targets for each head plus a weight per head (0 = no target), so one batch
can mix dair-ai, GoEmotions, EmoBank and synthetic rows."""
from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field

import corpora
import lexicon

SIX = lexicon.EMOTIONS  # output order: sadness, joy, love, anger, fear, surprise
SIX_INDEX = {name: i for i, name in enumerate(SIX)}
N_SUB = 28

# GoEmotions -> six. Ekman's mapping, except that GoEmotions' own love (and caring, desire) go to love,
# and disgust goes to anger (the six have no disgust). Neutral has no six-way reading.
GO_TO_SIX = {
    "anger": "anger", "annoyance": "anger", "disapproval": "anger", "disgust": "anger",
    "fear": "fear", "nervousness": "fear",
    "joy": "joy", "amusement": "joy", "approval": "joy", "excitement": "joy", "gratitude": "joy",
    "optimism": "joy", "relief": "joy", "pride": "joy", "admiration": "joy",
    "love": "love", "caring": "love", "desire": "love",
    "sadness": "sadness", "disappointment": "sadness", "embarrassment": "sadness", "grief": "sadness",
    "remorse": "sadness",
    "surprise": "surprise", "realization": "surprise", "confusion": "surprise", "curiosity": "surprise",
}


@dataclass
class Example:
    text: str
    six: list[float] | None = None  # distribution over SIX
    six_w: float = 0.0
    sub: list[float] | None = None  # multi-hot over the 28 GoEmotions labels
    sub_w: float = 0.0
    va: list[float] | None = None  # valence in [-1, 1], arousal in [0, 1]
    va_w: float = 0.0
    source: str = field(default="")


def one_hot(label: str, smooth: float = 0.0) -> list[float]:
    v = [smooth / (len(SIX) - 1)] * len(SIX)
    v[SIX_INDEX[label]] = 1.0 - smooth
    return v


def split_holdout(rows: list, frac: float, seed: int, key=None) -> tuple[list, list]:
    """Deterministic stratified split: (kept, held out)."""
    rng = random.Random(seed)
    groups: dict = {}
    for r in rows:
        groups.setdefault(key(r) if key else 0, []).append(r)
    kept, held = [], []
    for k in sorted(groups, key=str):
        g = groups[k][:]
        rng.shuffle(g)
        n = int(round(len(g) * frac))
        held += g[:n]
        kept += g[n:]
    return kept, held


def dair_splits(seed: int) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """dair-ai train minus a 10% dev split (for model selection; val is only reported)."""
    return split_holdout(corpora.dair("train"), 0.1, seed, key=lambda r: r[1])


def go_splits(seed: int):
    """GoEmotions train minus 10% kept aside to pick the per-label thresholds."""
    return split_holdout(corpora.goemotions("train"), 0.1, seed)


def go_six_target(label_ids: list[int], names: list[str]) -> list[float] | None:
    mapped = [GO_TO_SIX[names[i]] for i in label_ids if names[i] in GO_TO_SIX]
    if not mapped:
        return None
    v = [0.0] * len(SIX)
    for m in mapped:
        v[SIX_INDEX[m]] += 1.0 / len(mapped)
    return v


def multi_hot(label_ids: list[int]) -> list[float]:
    v = [0.0] * N_SUB
    for i in label_ids:
        v[i] = 1.0
    return v


def va_target(v: float, a: float) -> list[float]:
    return [(v - 3.0) / 2.0, (a - 1.0) / 4.0]


# -- chat-style augmentation -----------------------------------------------------------------------
PUNCT_END = [".", "!", "!!", "!!!", "?", "...", " .", "!?", "..."]


def chatify(text: str, rng: random.Random, label: str | None, p_emoji: float) -> str:
    """Turn a lower-case, punctuation-free dair sentence into something a chat user might type."""
    words = text.split()
    if rng.random() < 0.5:
        words = [lexicon.CONTRACTIONS.get(w, w) if rng.random() < 0.8 else w for w in words]
    if rng.random() < 0.3 and len(words) > 4:
        k = rng.randrange(2, len(words) - 1)
        words[k] = words[k] + ","
    out = " ".join(words)
    r = rng.random()
    if r < 0.3:
        out = out[:1].upper() + out[1:]
    elif r < 0.35:
        out = out.upper()
    if rng.random() < 0.5:
        out += rng.choice(PUNCT_END)
    if label is not None and rng.random() < p_emoji:
        out = add_emoji(out, label, rng)
    return out


def emoji_for(label: str, rng: random.Random) -> str:
    if rng.random() < 0.2:
        return rng.choice(lexicon.EMOTICONS[label])
    pool = [e for e, l in lexicon.EMOJI.items() if l == label]
    e = rng.choice(pool)
    return e * rng.choice([1, 1, 2, 3])


def add_emoji(text: str, label: str, rng: random.Random) -> str:
    e = emoji_for(label, rng)
    if rng.random() < 0.8:
        return text + rng.choice([" ", ""]) + e
    return e + " " + text


def statement_of(words: list[str], rng: random.Random, p_strong: float) -> str:
    """A short statement of one of `words` in the intensity frames, with an intensifier at p_strong."""
    word = rng.choice(words)
    if rng.random() < p_strong:
        word = f"{rng.choice(lexicon.STRONG)} {word}"
    return chatify(rng.choice(lexicon.INTENSITY_FRAMES).format(word), rng, None, 0.0)


def feeling_text(label: str, rng: random.Random) -> str:
    """A short statement of one of the label's strong feeling words ("honestly i'm so furious!")."""
    return statement_of(lexicon.INTENSITY_WORDS[label][1], rng, 0.5)


def feeling_word_text(label: str, rng: random.Random) -> str:
    """A short statement of one of the label's seldom-seen feeling words ("i feel so despondent")."""
    return statement_of(lexicon.FEELING_WORDS[label], rng, 0.3)


def distress_text(rng: random.Random) -> tuple[str, str]:
    """A statement of despair or crisis, or one that shares its words ("i killed my exam"), and its label."""
    labels = sorted(lexicon.DISTRESS_SHARE)
    label = rng.choices(labels, weights=[lexicon.DISTRESS_SHARE[l] for l in labels])[0]
    return chatify(lexicon.pattern_choice(rng.choice(lexicon.DISTRESS[label]), rng), rng, None, 0.0), label


def emoji_only(label: str, rng: random.Random) -> str:
    """A text of one to three of the label's emoji or emoticons, as chat users send them alone."""
    parts = [emoji_for(label, rng) for _ in range(rng.choice([1, 1, 2, 3]))]
    return rng.choice([" ", ""]).join(parts)


def synthetic(rng: random.Random, n_emoji: int, n_neg: int, n_int: int, n_phrase: int = 0,
              n_feel: int = 0, n_distress: int = 0) -> list[Example]:
    """Emoji-only texts, negations, hedged/emphatic wording, chat phrases, seldom-seen feeling words and
    statements of despair, with six-way targets."""
    out: list[Example] = []
    labels = sorted(lexicon.PHRASES)
    for _ in range(n_phrase):
        label = rng.choice(labels)
        text = chatify(rng.choice(lexicon.PHRASES[label]), rng, label, p_emoji=0.3)
        out.append(Example(text=text, six=one_hot(label, 0.15), six_w=1.0, source="syn-phrase"))
    for _ in range(n_emoji):
        label = rng.choice(SIX)
        out.append(Example(text=emoji_only(label, rng), six=one_hot(label, 0.05), six_w=1.0, source="syn-emoji"))
    neg_words = sorted(lexicon.NEGATABLE)
    for _ in range(n_neg):
        w = rng.choice(neg_words)
        subj = rng.choice(lexicon.NEG_SUBJECT)
        if subj.startswith("i don't feel"):
            text = f"{subj} {w}{rng.choice(lexicon.NEG_TAIL)}"
        else:
            text = f"{subj} {rng.choice(lexicon.NEG_CUE)} {w}{rng.choice(lexicon.NEG_TAIL)}"
        label = lexicon.NEGATABLE[w]
        # a negated word says less than an asserted one: a softer target
        out.append(Example(text=chatify(text, rng, None, 0.0), six=one_hot(label, 0.25), six_w=1.0,
                           source="syn-neg"))
    for _ in range(n_neg // 3):
        subj = rng.choice(lexicon.NEG_VERB_SUBJECT)
        verb = rng.choice(lexicon.NEG_VERBS)
        text = f"{subj} {verb} {rng.choice(lexicon.NEG_VERB_OBJECT)}{rng.choice(lexicon.NEG_TAIL)}"
        out.append(Example(text=chatify(text, rng, None, 0.0), six=one_hot("sadness", 0.3), six_w=1.0,
                           source="syn-neg-verb"))
    for _ in range(n_int):
        label = rng.choice(SIX)
        mild_words, strong_words = lexicon.INTENSITY_WORDS[label]
        frame = rng.choice(lexicon.INTENSITY_FRAMES)
        if rng.random() < 0.5:
            text, target = frame.format(f"{rng.choice(lexicon.MILD)} {rng.choice(mild_words)}"), one_hot(label, 0.45)
        else:
            text, target = frame.format(f"{rng.choice(lexicon.STRONG)} {rng.choice(strong_words)}"), one_hot(label, 0.02)
        out.append(Example(text=chatify(text, rng, None, 0.0), six=target, six_w=1.0, source="syn-int"))
    # last, so that the rows above draw the same random numbers whatever n_feel is
    for _ in range(n_feel):
        label = rng.choice(SIX)
        out.append(Example(text=feeling_word_text(label, rng), six=one_hot(label, 0.1), six_w=1.0,
                           source="syn-feel"))
    # after those, for the same reason
    for _ in range(n_distress):
        text, label = distress_text(rng)
        out.append(Example(text=text, six=one_hot(label, 0.15), six_w=1.0, source="syn-distress"))
    return out


def load_go_names() -> list[str]:
    return corpora.goemotions_labels()


def ekman_mapping_path() -> str:
    return os.path.join(corpora.DATA, "goemotions", "ekman_mapping.json")


def check_mapping() -> None:
    """Every GoEmotions emotion in the Ekman file is mapped here (guards against a new label set)."""
    with open(ekman_mapping_path(), encoding="utf-8") as f:
        ekman = json.load(f)
    names = {n for group in ekman.values() for n in group}
    missing = names - set(GO_TO_SIX)
    assert not missing, f"unmapped GoEmotions labels: {missing}"
