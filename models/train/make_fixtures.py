"""Write models/emotion/fixtures/tokenizer-golden.json: texts with the exact ids the reference
tokenizer gives. Run after the tokenizer changes: /usr/bin/python3 models/train/make_fixtures.py"""
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))
from tokenizer import Tokenizer  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.environ.get("SENTIO_DATA", os.path.join(ROOT, "..", "shared", "data"))

HAND = [
    "", " ", "   \t\n  ", "\n", "\u00a0\u2003\u3000",
    "I'm not happy at all", "I am NOT happy.", "I don't hate you", "never again!!!", "not bad, not bad at all",
    "I don\u2019t feel happy anymore", "\u2018fine\u2019 she said", "it\u02bcs ok",
    "😭😭😭", "😡", "😂😂😂😂😂", "I love you ❤️❤️", "👍🏽", "👨‍👩‍👧‍👦 family time", "🇫🇷🇩🇪", "😱 what?!",
    "so happy 😀😃😄😁", "🥺🥺 please", "✨🎉🎊", "☹️", "💔 heartbroken", "🙂🙃", "🤬🤬🤬 ugh",
    "Café crème brûlée", "naïve façade", "Ångström über straße", "ÉCOLE ÉTÉ", "İstanbul", "ﬁnally ﬂying",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３", "①②③ ™ ½", "Ⅷ chapters", "µ and μ", "ǅemal",
    "我很高兴见到你", "今日はとても嬉しいです", "기분이 좋아요", "中文English混合", "東京タワー",
    "שלום עולם, אני שמח", "أنا سعيد جدا اليوم", "مرحبا\u200f بالعالم", "Привет, как дела?", "Γειά σου κόσμε",
    "नमस्ते दुनिया", "สวัสดีครับ", "Xin chào thế giới",
    "lone \ud800 high", "lone \udfff low", "\udc00\udc00", "pair 😀 ok", "end \ud83d",
    "ctrl\x00null", "bell\x07 and esc\x1b[31m", "tab\tseparated\tvalues", "cr\r\nlf", "\x7f\x80\x9f",
    "zero\u200bwidth", "soft\u00adhyphen", "bidi \u202eevil\u202c text", "bom\ufeffhere", "\u2028line\u2029para",
    "https://example.com/path?q=1&x=2#frag", "http://sub.domain.org", "mail me: a.b@c.de", "www.site.co.uk/x_y",
    "!!!!!!!!!!", "?!?!?!", "......", "wow!!! really???", "---===---", "$$$ 100% @#&*",
    "I'm", "can't won't shouldn't", "rock'n'roll", "e-mail co-operate", "3pm 10:30am 2024-01-01",
    "1,000,000 dollars", "3.14159", "#blessed #happy", "@user hi", "<b>html</b> &amp; entities",
    "ALL CAPS ANGER", "MiXeD CaSe", "Sooooooo happppyyyyy", "a" * 60, "supercalifragilisticexpialidocious",
    "x" * 49, "y" * 50, "z" * 51, "word " * 200, "😭" * 200, "! " * 300,
    "The meeting is at 3pm", "I'm so proud of her but I'll miss her terribly", "a bit annoyed",
    "absolutely furious", "I want to end it all", "I've been cutting again",
    "i feel like i am still looking at a blank canvas blank pieces of paper",
    "i feel romantic too", "im feeling rather rotten so im not very ambitious right now",
    "\ufffd replacement", "\U0001f9ff nazar", "\U0001faf6 new emoji", "\U000e0067 tag char", "\U0010ffff last",
    "combining e\u0301 acute", "hangul jamo \u1100\u1161", "dotless ı and İ", "Σίσυφος ΣΑΣ", "ﬀ ﬃ",
]


def generated(rng: random.Random) -> list[str]:
    pool = [chr(c) for c in list(range(0x20, 0x7f)) + [0xe9, 0xfc, 0x4e2d, 0x1f600, 0x1f62d, 0x2764,
                                                         0xfe0f, 0x200d, 0x0301, 0x0, 0x9, 0xa0, 0xd800]]
    out = []
    for _ in range(80):
        n = rng.randint(1, 40)
        out.append("".join(rng.choice(pool) for _ in range(n)))
    return out


def sampled(rng: random.Random) -> list[str]:
    texts = []
    try:
        with open(os.path.join(DATA, "dair-ai-emotion", "val.txt"), encoding="utf-8") as f:
            rows = [line.rsplit(";", 1)[0] for line in f if line.strip()]
        texts += rng.sample(rows, 60)
        with open(os.path.join(DATA, "goemotions", "dev.tsv"), encoding="utf-8") as f:
            rows = [line.split("\t")[0] for line in f if line.strip()]
        texts += rng.sample(rows, 60)
    except FileNotFoundError:
        pass
    return texts


def main() -> None:
    tok = Tokenizer.load(os.path.join(ROOT, "models", "emotion", "tokenizer.json"))
    rng = random.Random(1234)
    texts = HAND + generated(rng) + sampled(rng)
    cases = [{"text": t, "ids": tok.encode(t)} for t in texts]
    # about 1 MB, truncated; stored as unit x count to keep the file small
    unit, count = "long 😭 ", 150000
    cases.append({"repeat": {"unit": unit, "count": count}, "ids": tok.encode(unit * count)})
    out_dir = os.path.join(ROOT, "models", "emotion", "fixtures")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "tokenizer-golden.json"), "w", encoding="utf-8") as f:
        # ensure_ascii keeps lone surrogates representable as \\udXXX escapes, as JSON.parse reads them
        json.dump({"max_length": tok.max_length, "cases": cases}, f, ensure_ascii=True, indent=0)
    print(f"wrote {len(cases)} cases")


if __name__ == "__main__":
    main()
