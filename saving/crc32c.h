// CRC32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78): the checksum our
// checkpoints store per tensor. crc32c("123456789") == 0xE3069283.
//
//   uint32_t c = crc32c(bytes);                  // one buffer
//   c = crc32c_extend(crc32c(part1), part2);     // == crc32c(part1 + part2)
//
// Two implementations give identical results: SSE4.2's crc32 instruction where the CPU has it
// (chosen once at run time), else an 8-way slicing table. Both are exposed so that tests run
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

namespace crc32c_internal {
uint32_t extend_table(uint32_t crc, std::span<const std::byte> data);
// Requires has_sse42() (an illegal instruction otherwise).
uint32_t extend_sse42(uint32_t crc, std::span<const std::byte> data);
bool has_sse42();
// Which one crc32c_extend uses: "sse4.2" or "table".
const char* active_implementation();
}  // namespace crc32c_internal

}  // namespace tapeflow
