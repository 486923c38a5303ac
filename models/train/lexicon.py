"""Hand-written lexicons for augmentation: emoji and emoticons per emotion, contractions, negation and
intensity templates. The training corpora barely show emoji and dair-ai has no punctuation, so these
teach the network what chat text adds. Written for this project; not taken from any published list."""
import json
import os
import re

EMOTIONS = ["sadness", "joy", "love", "anger", "fear", "surprise"]

# Emoji whose reading is fairly unambiguous. Variation selectors (U+FE0F) and skin tones are dropped by
# the tokenizer, so the bare code point is enough.
EMOJI: dict[str, str] = {}
for _label, _chars in {
    "joy": "😀😃😄😁😆😂🤣😊🙂☺😇🥳🎉🎊✨👍👏🙌😎🤩😋😛😜😝🤪😸😹😺😌💃🕺🌞☀🌈🎈🎂✌👌💯⭐🌟😅🍾🥂",
    "love": "❤💕💖💗💘💞💓💝💟💌😍🥰😘😗😙😚😻💋🌹💑💏♥♡💜💙💚💛🧡🤍🤗😽",
    "sadness": "😭😢😥😞😔😕🙁☹😣😫😩😿💔🥺😪😓🥀😑😐",
    "anger": "😡🤬😠👿💢😤😾🖕👊🙄😒🤦👎",
    "fear": "😱😨😰😧😬🙀😟👻💀😖🫣",
    "surprise": "😮😲😯🤯😳😦😵‼⁉👀🫢🤭",
}.items():
    for _c in _chars:
        EMOJI[_c] = _label

# ASCII emoticons; the tokenizer splits them into punctuation tokens, so n-gram filters can learn them.
EMOTICONS: dict[str, list[str]] = {
    "joy": [":)", ":-)", ":D", "=)", "^^", "^_^", "xD", ":P", ";)"],
    "love": ["<3", "<33", ":*", "<3 <3"],
    "sadness": [":(", ":-(", ":'(", "T_T", ";_;", ":/"],
    "anger": [">:(", ">:[", "-_-"],
    "fear": ["D:", ":S", "o_o"],
    "surprise": [":o", ":O", "o_O", "O.O", ":0"],
}

# dair-ai stripped apostrophes; real chat keeps them. Restore them at random so both forms are seen.
CONTRACTIONS = {
    "im": "i'm", "ive": "i've", "id": "i'd", "ill": "i'll", "dont": "don't", "didnt": "didn't",
    "doesnt": "doesn't", "cant": "can't", "wont": "won't", "isnt": "isn't", "wasnt": "wasn't",
    "arent": "aren't", "werent": "weren't", "havent": "haven't", "hasnt": "hasn't", "hadnt": "hadn't",
    "couldnt": "couldn't", "wouldnt": "wouldn't", "shouldnt": "shouldn't", "youre": "you're",
    "theyre": "they're", "thats": "that's", "whats": "what's", "its": "it's", "youve": "you've",
    "theres": "there's", "lets": "let's", "hes": "he's", "shes": "she's", "ain": "ain't",
}

# Negation templates: a negated emotion word does not express that emotion.
NEG_SUBJECT = ["i'm", "i am", "im", "i'm really", "honestly i'm", "i feel", "i don't feel", "i'm just",
               "i'm still", "she's", "he is", "we're", "i was", "i am so"]
NEG_CUE = ["not", "not really", "never", "not at all", "no longer", "not even a little", "definitely not"]
NEG_TAIL = ["", " at all", " anymore", " today", " about this", " with my life", " right now", "."]
# word -> label it gets when negated (None: leave such examples out, the reading is unclear)
NEGATABLE = {
    "happy": "sadness", "glad": "sadness", "excited": "sadness", "pleased": "sadness", "okay": "sadness",
    "fine": "sadness", "satisfied": "sadness", "hopeful": "sadness", "proud": "sadness", "joyful": "sadness",
    "cheerful": "sadness", "content": "sadness", "thrilled": "sadness", "good": "sadness", "loved": "sadness",
    "in love": "sadness", "cared for": "sadness", "appreciated": "sadness", "welcome": "sadness",
    "sad": "joy", "upset": "joy", "worried": "joy", "scared": "joy", "afraid": "joy", "lonely": "joy",
    "angry": "joy", "mad": "joy", "depressed": "joy", "nervous": "joy", "unhappy": "joy",
}

# Intensity: hedged wording should give a flatter distribution than emphatic wording.
MILD = ["a bit", "a little", "slightly", "somewhat", "kind of", "kinda", "sort of", "a tad", "mildly",
        "a little bit"]
STRONG = ["absolutely", "extremely", "so", "incredibly", "utterly", "completely", "totally", "really really",
          "beyond", "insanely", "so so"]
INTENSITY_WORDS = {
    "anger": (["annoyed", "irritated", "bothered", "grumpy", "cross"],
              ["furious", "enraged", "livid", "outraged", "pissed off", "infuriated"]),
    "sadness": (["down", "blue", "disappointed", "low", "gloomy"],
                ["devastated", "heartbroken", "miserable", "crushed", "depressed", "hopeless"]),
    "joy": (["pleased", "content", "cheerful", "glad", "happy"],
            ["ecstatic", "thrilled", "overjoyed", "elated", "delighted", "happy"]),
    "fear": (["nervous", "uneasy", "anxious", "worried", "apprehensive"],
             ["terrified", "petrified", "panicked", "horrified", "scared"]),
    "love": (["fond of you", "attached", "affectionate"],
             ["in love", "adoring", "smitten", "devoted"]),
    "surprise": (["surprised", "curious", "puzzled"],
                 ["amazed", "stunned", "shocked", "astonished", "speechless"]),
}
# Feeling words that dair-ai shows seldom or never (70 of these 96 in none of its 16,000 training
# sentences, 88 in at most 3; "shaky" the most, in 49), so the six-way branch read most of them by their
# word pieces alone, mostly as joy, the commonest class ("i feel despondent" joy 0.70, "i'm
# flabbergasted" joy 0.53). Statements of them are added to the six-way
# branch's training (1.4.0; data.feeling_word_text). The list is a JSON file, which
# `npm run eval:feeling-words` reads as well; its own list of other such words, never trained on,
# measures how far this generalises.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "feeling-words.json"), encoding="utf-8") as _f:
    FEELING_WORDS: dict[str, list[str]] = json.load(_f)
# Statements of despair and crisis ("i want to kill myself tonight"), as patterns whose "(a|b|)" groups
# each give one alternative. dair-ai's "i want ..." sentences are mostly love and joy, and up to 1.4.0
# the six-way branch read many such statements so ("I want to kill myself tonight": love 0.41). They
# are added to its training as sadness (fear where the writer fears their own acts), with anger and joy
# sentences that share the words ("i could kill him", "i killed my exam") so that "kill" alone decides
# nothing (1.5.0, 1.5.1; data.distress_text). `npm run eval:distress` reads the file too: it measures the
# branch on the crisis sentences of models/crisis, from which no pattern here was copied (25 of their
# held-out positives were read before these were written: models/emotion/MODEL.md says what that means).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "distress.json"), encoding="utf-8") as _f:
    DISTRESS: dict[str, list[str]] = json.load(_f)
# How often each label's patterns are drawn.
DISTRESS_SHARE = {"sadness": 0.6, "fear": 0.15, "anger": 0.12, "joy": 0.13}


def pattern_choice(pattern: str, rng) -> str:
    """One sentence of a distress.json pattern: one alternative of each "(a|b|)" group."""
    out = re.sub(r"\(([^)]*)\)", lambda m: rng.choice(m.group(1).split("|")), pattern)
    return re.sub(r"\s+", " ", out).strip()


INTENSITY_FRAMES = ["i'm {}", "i am {}", "i feel {}", "feeling {}", "i was {}", "honestly i'm {}",
                    "im {} right now", "i feel {} about it", "{}", "i'm {} today", "she is {}"]

# Short chat phrases with a clear reading, for emotions whose everyday wording dair-ai rarely shows
# (there, "love" as a verb is mostly joy, and surprise is mostly "feel amazed/curious").
PHRASES = {
    "love": ["i love you", "love you so much", "i love you so much", "i adore you", "you mean the world to me",
             "i'm so in love with you", "love you babe", "i love you more than anything", "you're my everything",
             "i can't stop thinking about you", "you make my heart melt", "sending you all my love",
             "i cherish you", "love you to the moon and back"],
    "surprise": ["wow", "omg", "no way", "i can't believe it", "what?!", "didn't see that coming",
                 "i did not expect that", "wait, really?", "that's so unexpected", "whoa", "oh my god, seriously?",
                 "i'm shocked", "are you serious", "i never expected this", "what a surprise"],
    "anger": ["i hate this", "i hate mondays", "this is so unfair", "leave me alone", "stop it", "how dare you",
              "this is ridiculous", "i'm sick of this", "so fed up", "what the hell", "i can't stand him"],
    "sadness": ["i miss you", "i miss her so much", "i wish you were here", "it hurts", "i'm so lonely",
                "nobody cares", "i want to cry", "i lost my dog today", "i failed again", "everything feels pointless"],
    "fear": ["i'm scared", "help me", "what if something goes wrong", "i have a bad feeling about this",
             "i can't breathe", "someone is following me", "i'm so anxious about tomorrow", "please don't leave me alone tonight"],
    "joy": ["yay", "we won", "best day ever", "so excited", "this is amazing", "finally done", "i got the job",
            "thank you so much", "haha that's hilarious", "i passed", "life is good"],
}

# Negated positive verbs ("i don't love you anymore"): sadness rather than love/joy.
NEG_VERB_SUBJECT = ["i don't", "i do not", "i dont", "i no longer", "i just don't", "she doesn't", "he doesn't",
                    "i don't think i", "i didn't"]
NEG_VERBS = ["love", "like", "enjoy", "care about", "trust", "want"]
NEG_VERB_OBJECT = ["you", "this", "it", "my job", "him", "her", "them", "my life", "anything", "this place"]
