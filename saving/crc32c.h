// CRC32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78): the checksum our
// checkpoints store per tensor. crc32c("123456789") == 0xE3069283.
//
//   uint32_t c = crc32c(bytes);                  // one buffer
//   c = crc32c_extend(crc32c(part1), part2);     // == crc32c(part1 + part2)
//   c = crc32c_copy(0, dst, bytes);              // copies bytes to dst; == crc32c(bytes)
//
// Two implementations give identical results: SSE4.2's crc32 instruction where the CPU has it
// (chosen once at run time; three interleaved chains), else an 8-way slicing table. Both are exposed so that tests run
// each one, not only the one this machine picks. Pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace tapeflow {

// The checksum of `data` continuing from the checksum `crc` of the bytes before it.
uint32_t crc32c_extend(uint32_t crc, std::span<const std::byte> data);
inline uint32_t crc32c(std::span<const std::byte> data) { return crc32c_extend(0, data); }
inline uint32_t crc32c(std::string_view s) {
  return crc32c({reinterpret_cast<const std::byte*>(s.data()), s.size()});
}
// Copies `src` to `dst` (src.size() bytes, not overlapping) and returns crc32c_extend(crc, src),
// in one pass: each word is checksummed on its way through (restoring checkpoints, Note
// [Checked copy] in saving/safetensors.cc).
uint32_t crc32c_copy(uint32_t crc, std::byte* dst, std::span<const std::byte> src);

namespace crc32c_internal {
uint32_t extend_table(uint32_t crc, std::span<const std::byte> data);
// Both require has_sse42() (an illegal instruction otherwise). extend_sse42 runs three crc32
// chains over adjacent lanes and joins them (Note [CRC32C interleave], ~3x the speed of one
// chain on 768 bytes and more); extend_sse42_serial is the one chain, kept as its reference.
uint32_t extend_sse42(uint32_t crc, std::span<const std::byte> data);
uint32_t extend_sse42_serial(uint32_t crc, std::span<const std::byte> data);
// crc32c_copy's two: the lanes of extend_sse42, storing each word as it is read; memcpy, then
// extend_table over the copy.
uint32_t copy_sse42(uint32_t crc, std::byte* dst, std::span<const std::byte> src);
uint32_t copy_table(uint32_t crc, std::byte* dst, std::span<const std::byte> src);
bool has_sse42();
// Which one crc32c_extend uses: "sse4.2" or "table".
const char* active_implementation();
}  // namespace crc32c_internal

}  // namespace tapeflow
