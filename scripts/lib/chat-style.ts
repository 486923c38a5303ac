/**
 * A dair-ai sentence as a chat user would type it, rewritten deterministically and without its label:
 * contractions get their apostrophes back, the first letter and the pronoun "i" are capitalised, and the
 * sentence ends in ".", "!" or "..." in turn. dair-ai's own text is lower-case and has no punctuation;
 * scoring both versions of val shows whether real-world writing costs the model accuracy.
 * Ambiguous spellings ("ill", "its", "id", "lets", "were") are left alone.
 */
const APOSTROPHES: Readonly<Record<string, string>> = {
  im: "i'm", ive: "i've", dont: "don't", didnt: "didn't", doesnt: "doesn't", cant: "can't", wont: "won't",
  isnt: "isn't", wasnt: "wasn't", arent: "aren't", werent: "weren't", havent: "haven't", hasnt: "hasn't",
  hadnt: "hadn't", couldnt: "couldn't", wouldnt: "wouldn't", shouldnt: "shouldn't", youre: "you're",
  theyre: "they're", thats: "that's", whats: "what's", youve: "you've", theres: "there's",
};
const ENDINGS = ['.', '!', '...'];

export function chatStyle(text: string, index: number): string {
  const words = text.trim().split(/\s+/).map((w) => {
    const restored = APOSTROPHES[w] ?? w;
    return restored === 'i' || restored.startsWith("i'") ? `I${restored.slice(1)}` : restored;
  });
  const sentence = words.join(' ');
  return sentence.charAt(0).toUpperCase() + sentence.slice(1) + ENDINGS[index % ENDINGS.length];
}
