// Sentio's WordPiece tokenizer (algorithm "sentio-wordpiece-1"), a C++ twin of
// models/train/tokenizer.py. All Unicode knowledge comes from the tables in tokenizer.json (char_map
// and classes), so the ids cannot drift with a Unicode library version. Thread-safe after
// construction: Encode is const and keeps its scratch space on the caller's stack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace sentio {

// The tables as the TypeScript loader (tokenizerTables() in src/engine/model-files.ts) flattens them.
struct TokenizerTables {
  std::vector<std::u32string> vocab;  // id = index
  std::vector<uint32_t> char_map;     // repeated [code point, n, r1 .. rn]
  std::vector<uint32_t> classes;      // repeated [first, last, class]
  std::u32string continuation_prefix;
  int32_t max_length = 0;             // [CLS] included
  int32_t max_word_chars = 0;
  int32_t pad_id = 0, unk_id = 0, cls_id = 0;
};

// The vocabulary's pieces, found without building a string: an open-addressing table keyed by a hash
// of the piece's code points (FNV-1a over code points, so the hashes of every prefix of a span come from
// one pass), each hit checked against the stored code points.
class PieceTable {
 public:
  static constexpr uint64_t kSeed = 0xcbf29ce484222325ULL;
  static uint64_t Step(uint64_t hash, char32_t c) { return (hash ^ c) * 0x100000001b3ULL; }
  static uint64_t Hash(const char32_t* s, size_t n);

  // Sizes the table for `count` pieces; call before Insert.
  void Reserve(size_t count);
  // A piece inserted twice keeps the later id, as the reference's {token: index} dict does.
  void Insert(const char32_t* s, size_t n, int32_t id);
  // The id of s[0, n) whose Hash is `hash`, or -1.
  int32_t Find(const char32_t* s, size_t n, uint64_t hash) const;

 private:
  struct Slot {
    uint32_t tag;    // upper half of the hash
    uint32_t entry;  // 1 + index into entries_; 0 = empty
  };
  struct Entry {
    uint32_t offset;  // into pool_
    uint32_t length;
    int32_t id;
  };
  size_t SlotOf(uint64_t hash) const { return static_cast<size_t>((hash * 0x9E3779B97F4A7C15ULL) >> shift_); }

  std::vector<Slot> slots_;
  std::vector<Entry> entries_;
  std::u32string pool_;
  unsigned shift_ = 64;
};

class Tokenizer {
 public:
  // Validates the tables; throws NativeError(NATIVE_INVALID_ARGUMENT) when they are malformed.
  explicit Tokenizer(const TokenizerTables& tables);

  // Appends the ids of `text` (UTF-16 as JS holds it; a lone surrogate reads as U+FFFD) to `out`:
  // [CLS] then word pieces, at most max_length ids. Returns how many were appended.
  size_t Encode(const char16_t* text, size_t length, std::vector<int32_t>& out) const;

  int32_t max_length() const { return max_length_; }
  int32_t pad_id() const { return pad_id_; }
  int32_t cls_id() const { return cls_id_; }
  int32_t unk_id() const { return unk_id_; }
  size_t vocab_size() const { return vocab_size_; }

 private:
  enum CharClass : uint8_t { kDrop = 0, kSpace = 1, kIsolated = 2, kWord = 3 };
  struct Mapping {
    uint32_t offset;
    uint32_t count;
  };
  // Where char_map sends `cp`: a pointer into map_values_ and a count (identity: cp itself).
  const uint32_t* Map(uint32_t cp, uint32_t& single, size_t& count) const;
  // Greedy longest-match-first WordPiece for one pre-token; an unmatched position or an overlong
  // word gives a single [UNK].
  // `hashes` is scratch space for the prefix hashes of the span being matched.
  void AppendPieces(const std::u32string& word, size_t chars, std::vector<uint64_t>& hashes,
                    std::vector<int32_t>& out) const;

  std::vector<uint8_t> class_;              // one byte per code point 0..0x10FFFF
  std::vector<uint16_t> bmp_map_;           // BMP code point -> 1 + index into mappings_, 0 = none
  std::unordered_map<uint32_t, uint32_t> astral_map_;  // code point -> index into mappings_
  std::vector<Mapping> mappings_;
  std::vector<uint32_t> map_values_;
  PieceTable word_start_;     // whole vocabulary, keyed by the token itself
  PieceTable continuation_;   // tokens that start with the prefix, keyed without it
  size_t longest_start_ = 0, longest_continuation_ = 0;  // in code points; bounds the search
  size_t vocab_size_ = 0;
  int32_t max_length_, max_word_chars_, pad_id_, unk_id_, cls_id_;
};

}  // namespace sentio
