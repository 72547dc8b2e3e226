// CRC32C: known vectors, the table, the single chain and the interleaved lanes agreeing on
// every path, and crc32c_copy copying exactly its bytes while checksumming them.
#include "saving/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace tapeflow {
namespace {

std::span<const std::byte> sp(const std::string& s) { return {reinterpret_cast<const std::byte*>(s.data()), s.size()}; }

TEST(Crc32cTest, KnownVectorsBothImplementations) {
  const std::string zeros(32, '\0'), ones(32, '\xff');
  std::string inc(32, '\0');
  for (int i = 0; i < 32; ++i) inc[i] = char(i);
  struct Case { std::string in; uint32_t crc; };
  // RFC 3720 (iSCSI) B.4 and the classic check value.
  const std::vector<Case> cases = {{"123456789", 0xE3069283u}, {"", 0u}, {zeros, 0x8A9136AAu},
                                   {ones, 0x62A8AB43u}, {inc, 0x46DD794Eu}};
  for (const Case& c : cases) {
    EXPECT_EQ(crc32c_internal::extend_table(0, sp(c.in)), c.crc) << "table, " << c.in.size() << " bytes";
    EXPECT_EQ(crc32c(c.in), c.crc) << crc32c_internal::active_implementation();
    if (crc32c_internal::has_sse42()) {
      EXPECT_EQ(crc32c_internal::extend_sse42(0, sp(c.in)), c.crc) << "sse4.2";
    }
  }
  if (!crc32c_internal::has_sse42()) GTEST_SKIP() << "no SSE4.2 here: only the table was checked";
}

TEST(Crc32cTest, ImplementationsAgreeAndExtend) {
  std::mt19937 rng(7);
  std::string buf(300, '\0');
  for (char& c : buf) c = char(rng());
  for (size_t start = 0; start < 9; ++start) {
    for (size_t len = 0; start + len <= buf.size(); len += 7) {
      const auto part = sp(buf).subspan(start, len);
      const uint32_t table = crc32c_internal::extend_table(0, part);
      if (crc32c_internal::has_sse42()) {
        ASSERT_EQ(crc32c_internal::extend_sse42(0, part), table);
      }
      const size_t cut = len / 3;
      ASSERT_EQ(crc32c_extend(crc32c(part.subspan(0, cut)), part.subspan(cut)), table);
    }
  }
  EXPECT_STREQ(crc32c_internal::active_implementation(), crc32c_internal::has_sse42() ? "sse4.2" : "table");
}

// Note [CRC32C interleave]: lengths that take the 8 KiB lanes (>= 24576 bytes), the 256-byte
// lanes (>= 768) and both, with a tail, at odd offsets and from a non-zero running CRC; each
// against the table and the single chain, so a wrong join shows on every path.
TEST(Crc32cTest, InterleavedLanesAgreeWithTheSingleChainAndTheTable) {
  if (!crc32c_internal::has_sse42()) GTEST_SKIP() << "no SSE4.2 here: the interleaved path does not run";
  std::mt19937 rng(11);
  std::string buf(3 * 8192 * 2 + 3 * 256 * 3 + 64, '\0');
  for (char& c : buf) c = char(rng());
  for (size_t len : {767u, 768u, 769u, 1535u, 2304u, 24575u, 24576u, 24577u, 25000u, 49152u + 768u + 13u}) {
    for (size_t start : {0u, 1u, 5u}) {
      if (start + len > buf.size()) continue;
      const auto part = sp(buf).subspan(start, len);
      const uint32_t table = crc32c_internal::extend_table(0x1234567u, part);
      ASSERT_EQ(crc32c_internal::extend_sse42_serial(0x1234567u, part), table) << len << " bytes at " << start;
      ASSERT_EQ(crc32c_internal::extend_sse42(0x1234567u, part), table) << len << " bytes at " << start;
    }
  }
  // A single flipped bit in any lane changes the checksum.
  const uint32_t whole = crc32c(buf);
  for (size_t at : {size_t{10}, size_t{8192 + 3}, size_t{2 * 8192 + 7}, buf.size() - 1}) {
    std::string flipped = buf;
    flipped[at] ^= 0x10;
    EXPECT_NE(crc32c(flipped), whole) << "bit flipped at " << at;
  }
}

// crc32c_copy (Note [Checked copy]): for lengths on every path of the lanes, at odd source and
// destination offsets and from a non-zero running CRC, each implementation copies exactly the
// source bytes (the guard bytes around the destination stay) and returns extend_table's checksum.
TEST(Crc32cTest, CopyWritesExactlyTheBytesAndReturnsTheirChecksum) {
  std::mt19937 rng(13);
  std::string src(3 * 8192 * 2 + 3 * 256 * 3 + 64, '\0');
  for (char& c : src) c = char(rng());
  using CopyFn = uint32_t (*)(uint32_t, std::byte*, std::span<const std::byte>);
  std::vector<std::pair<const char*, CopyFn>> impls = {{"crc32c_copy", &crc32c_copy},
                                                       {"table", &crc32c_internal::copy_table}};
  if (crc32c_internal::has_sse42()) impls.emplace_back("sse4.2", &crc32c_internal::copy_sse42);
  constexpr size_t kGuard = 16;
  for (const auto& [impl, copy] : impls) {
    for (size_t len : {0u, 1u, 7u, 8u, 9u, 767u, 768u, 769u, 24575u, 24576u, 24577u, 49152u + 768u + 13u}) {
      for (size_t start : {0u, 1u, 5u}) {
        for (size_t out_at : {0u, 3u}) {
          if (start + len > src.size()) continue;
          SCOPED_TRACE(testing::Message() << impl << ", " << len << " bytes from " << start << " to " << out_at);
          const auto part = sp(src).subspan(start, len);
          std::vector<std::byte> dst(len + out_at + 2 * kGuard, std::byte{0xA5});
          const uint32_t crc = copy(0x1234567u, dst.data() + kGuard + out_at, part);
          ASSERT_EQ(crc, crc32c_internal::extend_table(0x1234567u, part));
          ASSERT_TRUE(len == 0 || std::memcmp(dst.data() + kGuard + out_at, part.data(), len) == 0);
          for (size_t i = 0; i < kGuard + out_at; ++i) ASSERT_EQ(dst[i], std::byte{0xA5}) << "before, at " << i;
          for (size_t i = kGuard + out_at + len; i < dst.size(); ++i) ASSERT_EQ(dst[i], std::byte{0xA5}) << "after, at " << i;
        }
      }
    }
  }
  if (!crc32c_internal::has_sse42()) GTEST_SKIP() << "no SSE4.2 here: only the table's copy was checked";
}

}  // namespace
}  // namespace tapeflow
