#include "saving/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace tapeflow {
namespace crc32c_internal {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // 0x1EDC6F41 bit-reversed

// tables[0] is the classic byte table; tables[k][b] is the CRC of byte b followed by k zero
// bytes, so eight bytes are folded per step ("slicing by 8").
constexpr std::array<std::array<uint32_t, 256>, 8> make_tables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
    t[0][b] = c;
  }
  for (uint32_t b = 0; b < 256; ++b)
    for (int k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
  return t;
}
constexpr auto kTables = make_tables();

uint32_t load_le32(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace

uint32_t extend_table(uint32_t crc, std::span<const std::byte> data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  uint32_t c = ~crc;
  while (n >= 8) {
    const uint32_t lo = load_le32(p) ^ c;
    const uint32_t hi = load_le32(p + 4);
    c = kTables[7][lo & 0xFF] ^ kTables[6][(lo >> 8) & 0xFF] ^ kTables[5][(lo >> 16) & 0xFF] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xFF] ^ kTables[2][(hi >> 8) & 0xFF] ^
        kTables[1][(hi >> 16) & 0xFF] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xFF];
  return ~c;
}

#if defined(__x86_64__)
// Note [CRC32C interleave]: the crc32 instruction takes 3 cycles but can start every cycle, so
// one dependency chain (extend_sse42_serial) uses a third of it. extend_sse42 runs three
// chains over three adjacent lanes of a block and joins them. With R(c, d) the raw register
// (no inversions) after the bytes d from register c, which is linear over GF(2):
//   R(c, A B) = Z(R(c, A), |B|) ^ R(0, B),
// where Z(c, n) = R(c, n zero bytes) multiplies c by x^(8n) modulo the polynomial; Z for a
// fixed n is a linear map of the 32 bits, applied here as four 256-entry tables (one per byte
// of c) built once from the images of the 32 unit vectors. Lanes of 8 KiB, then of 256 bytes;
// what is left goes through one chain.
namespace {
constexpr size_t kLongLane = 8192;
constexpr size_t kShortLane = 256;

struct ZerosTable {
  std::array<std::array<uint32_t, 256>, 4> t;
  uint32_t apply(uint32_t c) const { return t[0][c & 0xFF] ^ t[1][(c >> 8) & 0xFF] ^ t[2][(c >> 16) & 0xFF] ^ t[3][c >> 24]; }
};

ZerosTable make_zeros_table(size_t n) {
  std::array<uint32_t, 32> image{};
  for (int bit = 0; bit < 32; ++bit) {
    uint32_t c = uint32_t{1} << bit;
    for (size_t i = 0; i < n; ++i) c = (c >> 8) ^ kTables[0][c & 0xFF];
    image[bit] = c;
  }
  ZerosTable z{};
  for (int byte = 0; byte < 4; ++byte)
    for (uint32_t v = 0; v < 256; ++v) {
      uint32_t out = 0;
      for (int b = 0; b < 8; ++b)
        if ((v >> b) & 1) out ^= image[8 * byte + b];
      z.t[byte][v] = out;
    }
  return z;
}

// One 8-byte word into the checksum, and with kCopy also to `d` (crc32c_copy): the word goes
// through a register once, where a copy and then a checksum would read it twice.
template <bool kCopy>
__attribute__((target("sse4.2"))) inline uint64_t load_crc64(uint64_t c, const unsigned char* p, unsigned char* d) {
  uint64_t word;
  std::memcpy(&word, p, 8);  // unaligned-safe
  if constexpr (kCopy) std::memcpy(d, &word, 8);
  return _mm_crc32_u64(c, word);
}

template <bool kCopy>
__attribute__((target("sse4.2"))) uint32_t finish_serial(uint64_t c, const unsigned char* p, size_t n, unsigned char* d) {
  for (; n >= 8; p += 8, n -= 8) {
    c = load_crc64<kCopy>(c, p, d);
    if constexpr (kCopy) d += 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n--) {
    if constexpr (kCopy) *d++ = *p;
    c32 = _mm_crc32_u8(c32, *p++);
  }
  return c32;
}

// The three chains of Note [CRC32C interleave]; with kCopy every word is also stored at the
// same offset from `d`.
const ZerosTable& lane_zeros(size_t lane) {
  static const ZerosTable long_zeros = make_zeros_table(kLongLane);
  static const ZerosTable short_zeros = make_zeros_table(kShortLane);
  return lane == kLongLane ? long_zeros : short_zeros;
}

template <bool kCopy>
__attribute__((target("sse4.2"))) uint32_t extend_lanes(uint32_t crc, const unsigned char* p, size_t n, unsigned char* d) {
  auto to = [&d](size_t offset) -> unsigned char* {  // no arithmetic on the null `d` of a checksum only
    if constexpr (kCopy) return d + offset;
    return nullptr;
  };
  uint64_t c0 = ~crc;
  for (const size_t lane : {kLongLane, kShortLane}) {
    const ZerosTable* zeros = &lane_zeros(lane);
    for (; n >= 3 * lane; p += 3 * lane, n -= 3 * lane) {
      uint64_t c1 = 0, c2 = 0;
      for (size_t i = 0; i < lane; i += 8) {
        c0 = load_crc64<kCopy>(c0, p + i, to(i));
        c1 = load_crc64<kCopy>(c1, p + lane + i, to(lane + i));
        c2 = load_crc64<kCopy>(c2, p + 2 * lane + i, to(2 * lane + i));
      }
      c0 = zeros->apply(static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
      c0 = zeros->apply(static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c2);
      if constexpr (kCopy) d += 3 * lane;
    }
  }
  return ~finish_serial<kCopy>(c0, p, n, d);
}

const unsigned char* bytes(std::span<const std::byte> data) { return reinterpret_cast<const unsigned char*>(data.data()); }

}  // namespace

__attribute__((target("sse4.2"))) uint32_t extend_sse42_serial(uint32_t crc, std::span<const std::byte> data) {
  return ~finish_serial<false>(~crc, bytes(data), data.size(), nullptr);
}

uint32_t extend_sse42(uint32_t crc, std::span<const std::byte> data) {
  return extend_lanes<false>(crc, bytes(data), data.size(), nullptr);
}

uint32_t copy_sse42(uint32_t crc, std::byte* dst, std::span<const std::byte> src) {
  return extend_lanes<true>(crc, bytes(src), src.size(), reinterpret_cast<unsigned char*>(dst));
}

bool has_sse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#else
uint32_t extend_sse42(uint32_t crc, std::span<const std::byte> data) { return extend_table(crc, data); }
uint32_t copy_sse42(uint32_t crc, std::byte* dst, std::span<const std::byte> src) { return copy_table(crc, dst, src); }
uint32_t extend_sse42_serial(uint32_t crc, std::span<const std::byte> data) { return extend_table(crc, data); }
bool has_sse42() { return false; }
#endif

uint32_t copy_table(uint32_t crc, std::byte* dst, std::span<const std::byte> src) {
  if (!src.empty()) std::memcpy(dst, src.data(), src.size());
  return extend_table(crc, {dst, src.size()});
}

const char* active_implementation() { return has_sse42() ? "sse4.2" : "table"; }

}  // namespace crc32c_internal

uint32_t crc32c_extend(uint32_t crc, std::span<const std::byte> data) {
  return crc32c_internal::has_sse42() ? crc32c_internal::extend_sse42(crc, data)
                                      : crc32c_internal::extend_table(crc, data);
}

uint32_t crc32c_copy(uint32_t crc, std::byte* dst, std::span<const std::byte> src) {
  return crc32c_internal::has_sse42() ? crc32c_internal::copy_sse42(crc, dst, src)
                                      : crc32c_internal::copy_table(crc, dst, src);
}

}  // namespace tapeflow
