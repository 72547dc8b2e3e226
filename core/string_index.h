// Name tables for large graphs: a hash index whose slots are small ids of strings kept
// elsewhere, and the append-only string store it usually indexes.
//
// Why not absl::flat_hash_map<std::string, int>: its slots are 40 bytes, so the table of a
// 100k-node graph is 5 MB, none of it in the per-core cache, and each insert lands a few slots
// past the one a prefetch fetched, in another cache line, so it waits for memory anyway. Here a
// slot is 8 bytes, an id and 32 bits of its string's hash (1.2 MB at 100k names; a group of
// slots shares two lines), a string is read only when those 32 bits match (growing reads none),
// and the store appends strings in order, which the caches handle well (Note [Linear import],
// graph/graph_def_import.cc).
//
//   PackedStrings names;                                   // id 0, 1, 2... in order added
//   StringIndex<PackedStrings::KeyOf> by_name(names.key_of());
//   by_name.insert("a/b", names.add("a/b"));
//   by_name.find("a/b");                                   // 0; -1 for a name not there
//   PackedStringMap<int> uses;                             // the two together, with values
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "core/huge_page_allocator.h"

namespace tapeflow {

// Strings appended one after another into 64 KiB chunks, each after its length. Id k is the k-th
// added; its view stays valid until clear() (chunks are never moved). 4 bytes per string beside
// the bytes themselves: a string's place, where a string_view would be 16.
class PackedStrings {
 public:
  PackedStrings() = default;
  PackedStrings(const PackedStrings&) = delete;
  PackedStrings& operator=(const PackedStrings&) = delete;

  // Stores a copy of s; returns its id. std::length_error past 2 GiB of strings in chunks.
  uint32_t add(std::string_view s);
  std::string_view operator[](uint32_t id) const {
    const uint32_t place = places_[id];
    if (place & kLarge) return *large_[place & ~kLarge];
    const unsigned char* p = reinterpret_cast<const unsigned char*>(chunks_[place >> kChunkBits].get()) +
                             (place & (kChunkSize - 1));
    return std::string_view(reinterpret_cast<const char*>(p) + 1, *p);
  }
  size_t size() const { return places_.size(); }
  void reserve(size_t n) { places_.reserve(n); }
  // Removes the last string added (its bytes are reused).
  void pop_back();
  void clear();

  // For StringIndex: an id's string.
  struct KeyOf {
    const PackedStrings* strings;
    std::string_view operator()(uint32_t id) const { return (*strings)[id]; }
  };
  KeyOf key_of() const { return KeyOf{this}; }

 private:
  // A place is a chunk's index and an offset in it, or kLarge and an index in large_ for a
  // string of 255 bytes or more (rare in names; they keep their own std::string).
  static constexpr uint32_t kChunkBits = 16, kChunkSize = uint32_t{1} << kChunkBits;
  static constexpr uint32_t kLarge = uint32_t{1} << 31;
  std::vector<std::unique_ptr<char[]>> chunks_;
  uint32_t used_ = kChunkSize;  // bytes used in the last chunk
  std::vector<std::unique_ptr<std::string>> large_;
  std::vector<uint32_t> places_;
};

// A set of ids, looked up by their strings. KeyOf: (uint32_t id) -> std::string_view, valid for
// every id in the index while it is there (read when a lookup's hash matches). Equal strings
// are one entry.
//
// kFoldCase: strings that differ only in ASCII case hash alike, so the index also answers
// "is there an entry equal to this one, ignoring case?" (the *_folded calls, which take the
// string already lowercased). Lookups stay exact. GraphState's by_name_ is one: TensorFlow
// compares names in use without case, and the graph needs no second table for that.
template <typename KeyOf, bool kFoldCase = false>
class StringIndex {
 public:
  explicit StringIndex(KeyOf key_of) : set_(0, Hasher{}, Equal{key_of}) {}

  // The id whose string is `key`; -1 when none.
  int64_t find(std::string_view key) const {
    auto it = set_.find(hashed(key));
    return it == set_.end() ? -1 : static_cast<int64_t>(id_of(*it));
  }
  bool contains(std::string_view key) const { return set_.contains(hashed(key)); }
  // Adds `id`, whose string is `key` (the key is passed so the string is not read back). When an
  // id with an equal string is there already, nothing changes. Returns the id now under `key`
  // and whether it is `id`.
  std::pair<uint32_t, bool> insert(std::string_view key, uint32_t id) { return insert_key(hashed(key), id); }
  // As insert, but `id` replaces an id with an equal string.
  void insert_or_assign(std::string_view key, uint32_t id) {
    if (insert(key, id).second) return;
    erase(key);
    insert(key, id);
  }
  void erase(std::string_view key) {
    auto it = set_.find(hashed(key));
    if (it != set_.end()) set_.erase(it);
  }
  // Fetches the cache lines a later find or insert of `key` reads.
  void prefetch(std::string_view key) const { set_.prefetch(hashed(key)); }

  // ---- kFoldCase only; `lower` is a lowercased string ----
  // Whether some entry's string equals `lower` ignoring case.
  bool contains_folded(std::string_view lower) const
    requires kFoldCase
  {
    return set_.contains(folded(lower));
  }
  // Adds `id`, whose string lowercased is `lower`, unless some entry's string equals it ignoring
  // case. Returns the id now under it and whether it is `id`.
  std::pair<uint32_t, bool> insert_unless_folded(std::string_view lower, uint32_t id)
    requires kFoldCase
  {
    return insert_key(folded(lower), id);
  }
  void prefetch_folded(std::string_view lower) const
    requires kFoldCase
  {
    set_.prefetch(folded(lower));
  }
  void reserve(size_t n) { set_.reserve(n); }
  size_t size() const { return set_.size(); }
  void clear() { set_.clear(); }

 private:
  // A slot is the id and 32 bits of its string's hash: the table grows, and tells most unequal
  // strings apart, without reading the strings (reading one is a cache miss in a large graph).
  using Slot = uint64_t;
  struct Key {
    std::string_view text;
    uint32_t hash;
    bool fold = false;  // compare ignoring case (`text` is lowercase)
  };
  static uint32_t hash_of(std::string_view s) {
    return static_cast<uint32_t>(absl::Hash<absl::string_view>{}(absl::string_view(s.data(), s.size())) >> 32);
  }
  static Key hashed(std::string_view s) {
    if constexpr (kFoldCase) {
      // The hash of the lowercased string: names are short, so a stack copy almost always.
      char small[64];
      std::string large;
      char* lower = small;
      if (s.size() > sizeof small) {
        large.resize(s.size());
        lower = large.data();
      }
      for (size_t i = 0; i < s.size(); ++i) lower[i] = ascii_lower(s[i]);
      return {s, hash_of(std::string_view(lower, s.size()))};
    } else {
      return {s, hash_of(s)};
    }
  }
  static Key folded(std::string_view lower) { return {lower, hash_of(lower), true}; }
  static char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
  static bool equal_folded(std::string_view s, std::string_view lower) {
    if (s.size() != lower.size()) return false;
    for (size_t i = 0; i < s.size(); ++i)
      if (ascii_lower(s[i]) != lower[i]) return false;
    return true;
  }
  static uint32_t id_of(Slot slot) { return static_cast<uint32_t>(slot); }
  // Adds `id` under `k` unless an entry equal to it (as k.fold says) is there.
  std::pair<uint32_t, bool> insert_key(const Key& k, uint32_t id) {
    bool inserted = false;
    auto it = set_.lazy_emplace(k, [&](const auto& construct) {
      inserted = true;
      construct(uint64_t{k.hash} << 32 | id);
    });
    return {id_of(*it), inserted};
  }
  // The table's hash, from the 32 kept bits (multiplying by an odd constant spreads them over
  // the bits the table uses for its position and its control byte).
  static size_t spread(uint32_t hash) { return size_t{hash} * 0x9E3779B97F4A7C15ull; }
  struct Hasher {
    using is_transparent = void;
    size_t operator()(const Key& k) const { return spread(k.hash); }
    size_t operator()(Slot slot) const { return spread(static_cast<uint32_t>(slot >> 32)); }
  };
  struct Equal {
    using is_transparent = void;
    KeyOf key_of;
    bool operator()(const Key& k, Slot slot) const {
      if (static_cast<uint32_t>(slot >> 32) != k.hash) return false;
      return k.fold ? equal_folded(key_of(id_of(slot)), k.text) : key_of(id_of(slot)) == k.text;
    }
    bool operator()(Slot slot, const Key& k) const { return (*this)(k, slot); }
    bool operator()(Slot a, Slot b) const {
      return a == b || ((a >> 32) == (b >> 32) && key_of(id_of(a)) == key_of(id_of(b)));
    }
  };
  absl::flat_hash_set<Slot, Hasher, Equal, HugePageAllocator<Slot>> set_;
};

// A string -> V map on the two above: keys in a PackedStrings, values beside them in order.
// Not copyable or movable (the index refers to its own key store).
template <typename V>
class PackedStringMap {
 public:
  PackedStringMap() = default;
  PackedStringMap(const PackedStringMap&) = delete;
  PackedStringMap& operator=(const PackedStringMap&) = delete;

  // The value under `key`, added as `value` when absent; whether it was added. The pointer is
  // valid until the next insertion.
  std::pair<V*, bool> try_emplace(std::string_view key, V value) {
    const auto id = static_cast<uint32_t>(values_.size());
    keys_.add(key);  // first: the index may read the new id's string
    std::pair<uint32_t, bool> slot;
    try {
      slot = index_.insert(key, id);
      if (slot.second) values_.push_back(std::move(value));
    } catch (...) {
      if (index_.find(key) == id) index_.erase(key);
      keys_.pop_back();
      throw;
    }
    if (!slot.second) keys_.pop_back();
    return {&values_[slot.first], slot.second};
  }
  V* find(std::string_view key) {
    const int64_t id = index_.find(key);
    return id < 0 ? nullptr : &values_[static_cast<size_t>(id)];
  }
  bool contains(std::string_view key) const { return index_.contains(key); }
  void prefetch(std::string_view key) const { index_.prefetch(key); }
  void reserve(size_t n) {
    keys_.reserve(n);
    values_.reserve(n);
    index_.reserve(n);
  }
  size_t size() const { return values_.size(); }

 private:
  PackedStrings keys_;
  std::vector<V> values_;
  StringIndex<PackedStrings::KeyOf> index_{keys_.key_of()};
};

}  // namespace tapeflow
