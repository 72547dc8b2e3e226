#include "core/string_index.h"

#include <algorithm>
#include <stdexcept>

namespace tapeflow {

uint32_t PackedStrings::add(std::string_view s) {
  if (places_.size() >= kLarge) throw std::length_error("PackedStrings: more than 2^31 strings");
  if (s.size() >= 255) {
    if (large_.size() >= kLarge) throw std::length_error("PackedStrings: more than 2^31 long strings");
    large_.push_back(std::make_unique<std::string>(s));
    places_.push_back(kLarge | static_cast<uint32_t>(large_.size() - 1));
    return static_cast<uint32_t>(places_.size() - 1);
  }
  const uint32_t need = static_cast<uint32_t>(s.size()) + 1;
  if (kChunkSize - used_ < need) {
    if (chunks_.size() >= (kLarge >> kChunkBits))
      throw std::length_error("PackedStrings: more than 2 GiB of strings");
    chunks_.push_back(std::make_unique_for_overwrite<char[]>(kChunkSize));
    used_ = 0;
  }
  char* p = chunks_.back().get() + used_;
  p[0] = static_cast<char>(static_cast<unsigned char>(s.size()));
  std::copy(s.begin(), s.end(), p + 1);
  places_.push_back(static_cast<uint32_t>((chunks_.size() - 1) << kChunkBits) | used_);
  used_ += need;
  return static_cast<uint32_t>(places_.size() - 1);
}

void PackedStrings::pop_back() {
  const uint32_t place = places_.back();
  places_.pop_back();
  if (place & kLarge) {
    large_.pop_back();
  } else if ((place >> kChunkBits) == chunks_.size() - 1) {
    used_ = place & (kChunkSize - 1);  // the last string of the last chunk: its bytes are free again
  }
}

void PackedStrings::clear() {
  chunks_.clear();
  used_ = kChunkSize;
  large_.clear();
  places_.clear();
}

}  // namespace tapeflow
