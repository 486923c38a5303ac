#include "tokenizer.h"

#include <algorithm>

#include "errors.h"

namespace sentio {
namespace {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;
constexpr uint32_t kReplacement = 0xFFFD;

[[noreturn]] void Invalid(const std::string& what) {
  throw NativeError(code::kInvalidArgument, "invalid tokenizer tables: " + what);
}

}  // namespace

uint64_t PieceTable::Hash(const char32_t* s, size_t n) {
  uint64_t h = kSeed;
  for (size_t i = 0; i < n; ++i) h = Step(h, s[i]);
  return h;
}

void PieceTable::Reserve(size_t count) {
  size_t size = 16;
  shift_ = 60;
  while (size < 2 * count) {  // at most half full: short probe chains
    size *= 2;
    --shift_;
  }
  slots_.assign(size, Slot{0, 0});
  entries_.reserve(count);
}

void PieceTable::Insert(const char32_t* s, size_t n, int32_t id) {
  const uint64_t h = Hash(s, n);
  const uint32_t tag = static_cast<uint32_t>(h >> 32);
  const size_t mask = slots_.size() - 1;
  for (size_t i = SlotOf(h);; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.entry == 0) {
      if (entries_.size() + 1 > slots_.size() / 2) Invalid("more pieces than reserved");
      entries_.push_back({static_cast<uint32_t>(pool_.size()), static_cast<uint32_t>(n), id});
      pool_.append(s, n);
      slot = {tag, static_cast<uint32_t>(entries_.size())};
      return;
    }
    Entry& e = entries_[slot.entry - 1];
    if (slot.tag == tag && e.length == n && pool_.compare(e.offset, n, s, n) == 0) {
      e.id = id;
      return;
    }
  }
}

int32_t PieceTable::Find(const char32_t* s, size_t n, uint64_t hash) const {
  const uint32_t tag = static_cast<uint32_t>(hash >> 32);
  const size_t mask = slots_.size() - 1;
  for (size_t i = SlotOf(hash);; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.entry == 0) return -1;
    if (slot.tag != tag) continue;
    const Entry& e = entries_[slot.entry - 1];
    if (e.length == n && std::char_traits<char32_t>::compare(pool_.data() + e.offset, s, n) == 0) return e.id;
  }
}

Tokenizer::Tokenizer(const TokenizerTables& t)
    : class_(kMaxCodePoint + 1, kDrop),
      bmp_map_(0x10000, 0),
      max_length_(t.max_length),
      max_word_chars_(t.max_word_chars),
      pad_id_(t.pad_id),
      unk_id_(t.unk_id),
      cls_id_(t.cls_id) {
  vocab_size_ = t.vocab.size();
  if (vocab_size_ == 0) Invalid("empty vocabulary");
  if (max_length_ < 1) Invalid("max_length must be at least 1");
  if (max_word_chars_ < 1) Invalid("max_word_chars must be at least 1");
  for (int32_t id : {pad_id_, unk_id_, cls_id_}) {
    if (id < 0 || static_cast<size_t>(id) >= vocab_size_) Invalid("special token id out of range");
  }

  // classes: ranges over 0..0x10FFFF; anything a table leaves out stays "drop", as in the reference.
  if (t.classes.size() % 3 != 0) Invalid("classes must be [first, last, class] triples");
  for (size_t i = 0; i < t.classes.size(); i += 3) {
    uint32_t first = t.classes[i], last = t.classes[i + 1], cls = t.classes[i + 2];
    if (first > last || last > kMaxCodePoint || cls > kWord) Invalid("bad class range");
    std::fill(class_.begin() + first, class_.begin() + last + 1, static_cast<uint8_t>(cls));
  }

  for (size_t i = 0; i < t.char_map.size();) {
    if (i + 2 > t.char_map.size()) Invalid("truncated char_map");
    uint32_t cp = t.char_map[i], n = t.char_map[i + 1];
    if (cp > kMaxCodePoint || i + 2 + n > t.char_map.size()) Invalid("bad char_map entry");
    uint32_t index = static_cast<uint32_t>(mappings_.size());
    mappings_.push_back({static_cast<uint32_t>(map_values_.size()), n});
    for (uint32_t k = 0; k < n; ++k) {
      uint32_t r = t.char_map[i + 2 + k];
      if (r > kMaxCodePoint) Invalid("char_map replacement out of range");
      map_values_.push_back(r);
    }
    if (cp < 0x10000) {
      if (index + 1 > 0xFFFF) Invalid("too many char_map entries");
      bmp_map_[cp] = static_cast<uint16_t>(index + 1);
    } else {
      astral_map_[cp] = index;
    }
    i += 2 + n;
  }

  // Later duplicates win, as with the reference's {token: index} dict.
  const std::u32string& prefix = t.continuation_prefix;
  const auto continues = [&](const std::u32string& token) {
    return !prefix.empty() && token.size() > prefix.size() && token.compare(0, prefix.size(), prefix) == 0;
  };
  word_start_.Reserve(vocab_size_);
  continuation_.Reserve(static_cast<size_t>(std::count_if(t.vocab.begin(), t.vocab.end(), continues)));
  for (size_t id = 0; id < vocab_size_; ++id) {
    const std::u32string& token = t.vocab[id];
    word_start_.Insert(token.data(), token.size(), static_cast<int32_t>(id));
    longest_start_ = std::max(longest_start_, token.size());
    if (continues(token)) {
      continuation_.Insert(token.data() + prefix.size(), token.size() - prefix.size(), static_cast<int32_t>(id));
      longest_continuation_ = std::max(longest_continuation_, token.size() - prefix.size());
    }
  }
}

const uint32_t* Tokenizer::Map(uint32_t cp, uint32_t& single, size_t& count) const {
  uint32_t index;
  if (cp < 0x10000) {
    uint16_t slot = bmp_map_[cp];
    if (slot == 0) {
      single = cp;
      count = 1;
      return &single;
    }
    index = slot - 1u;
  } else {
    auto it = astral_map_.find(cp);
    if (it == astral_map_.end()) {
      single = cp;
      count = 1;
      return &single;
    }
    index = it->second;
  }
  const Mapping& m = mappings_[index];
  count = m.count;
  return map_values_.data() + m.offset;
}

void Tokenizer::AppendPieces(const std::u32string& word, size_t chars, std::vector<uint64_t>& hashes,
                             std::vector<int32_t>& out) const {
  if (chars > static_cast<size_t>(max_word_chars_)) {
    out.push_back(unk_id_);
    return;
  }
  const size_t mark = out.size();
  const size_t n = word.size();
  size_t start = 0;
  while (start < n) {
    const PieceTable& table = start == 0 ? word_start_ : continuation_;
    const size_t longest = start == 0 ? longest_start_ : longest_continuation_;
    const char32_t* piece = word.data() + start;
    size_t end = std::min(n, start + longest);
    hashes.resize(end - start);
    uint64_t h = PieceTable::kSeed;
    for (size_t k = 0; k < end - start; ++k) hashes[k] = h = PieceTable::Step(h, piece[k]);
    int32_t found = -1;
    for (; end > start; --end) {
      found = table.Find(piece, end - start, hashes[end - start - 1]);
      if (found >= 0) break;
    }
    if (found < 0) {  // one unmatched position makes the whole word unknown
      out.resize(mark);
      out.push_back(unk_id_);
      return;
    }
    out.push_back(found);
    start = end;
  }
}

size_t Tokenizer::Encode(const char16_t* text, size_t length, std::vector<int32_t>& out) const {
  const size_t begin = out.size();
  const size_t limit = begin + static_cast<size_t>(max_length_);
  out.push_back(cls_id_);

  std::u32string word;  // the pre-token being built; stops growing once it is known to be too long
  std::vector<uint64_t> hashes;  // scratch for vocabulary look-ups
  size_t word_chars = 0;
  const size_t keep = static_cast<size_t>(max_word_chars_) + 1;
  auto flush = [&]() {
    if (word_chars == 0) return;
    AppendPieces(word, word_chars, hashes, out);
    word.clear();
    word_chars = 0;
  };

  uint32_t single;
  size_t i = 0;
  while (i < length && out.size() < limit) {
    uint32_t cp = text[i];
    if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < length && text[i + 1] >= 0xDC00 && text[i + 1] <= 0xDFFF) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<uint32_t>(text[i + 1]) - 0xDC00);
      i += 2;
    } else {
      if (cp >= 0xD800 && cp <= 0xDFFF) cp = kReplacement;  // lone surrogate
      i += 1;
    }
    size_t count;
    const uint32_t* mapped = Map(cp, single, count);
    for (size_t k = 0; k < count; ++k) {
      const uint32_t m = mapped[k];
      switch (class_[m]) {
        case kWord:
          if (word_chars < keep) word.push_back(m);
          ++word_chars;
          break;
        case kDrop:
          break;  // dropped characters do not split words
        case kSpace:
          flush();
          break;
        case kIsolated:
          flush();
          word.push_back(m);
          word_chars = 1;
          flush();
          break;
      }
    }
  }
  // The last word counts only when there is still room: the reference stops reading once the id
  // budget is spent, so a word cut off by truncation never reaches it.
  if (out.size() < limit) flush();
  if (out.size() > limit) out.resize(limit);
  return out.size() - begin;
}

}  // namespace sentio
