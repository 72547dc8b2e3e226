#include "core/string_index.h"

#include <algorithm>
#include <stdexcept>

namespace tapeflow {

uint32_t PackedStrings::add(std::string_view s) {
  constexpr size_t kChunk = 64 << 10;
  if (views_.size() >= UINT32_MAX) throw std::length_error("PackedStrings: more than 2^32 - 1 strings");
  if (chunks_.empty() || free_ < s.size()) {
    const size_t size = std::max(kChunk, s.size());
    chunks_.push_back(std::make_unique_for_overwrite<char[]>(size));
    next_ = chunks_.back().get();
    free_ = size;
  }
  std::copy(s.begin(), s.end(), next_);
  views_.emplace_back(next_, s.size());
  next_ += s.size();
  free_ -= s.size();
  return static_cast<uint32_t>(views_.size() - 1);
}

void PackedStrings::pop_back() {
  const std::string_view last = views_.back();
  if (last.data() + last.size() == next_) {
    next_ -= last.size();
    free_ += last.size();
  }
  views_.pop_back();
}

void PackedStrings::clear() {
  chunks_.clear();
  next_ = nullptr;
  free_ = 0;
  views_.clear();
}

}  // namespace tapeflow
