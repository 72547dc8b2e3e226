#include "data/idx.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/errors.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;
using Bytes = std::vector<unsigned char>;

// An IDX header: magic (0, 0, type, rank) and big-endian dims.
Bytes header(unsigned char type, const std::vector<uint32_t>& dims) {
  Bytes b = {0, 0, type, static_cast<unsigned char>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<unsigned char>(d >> shift));
  return b;
}

Bytes operator+(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Big-endian bytes of each value.
template <typename T> Bytes be(const std::vector<T>& values) {
  Bytes b;
  for (T v : values) {
    unsigned char raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    for (size_t i = sizeof(T); i-- > 0;) b.push_back(raw[i]);  // x86 is little-endian
  }
  return b;
}

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "tapeflow_idx_" + name; }

std::string write_plain(const std::string& name, const Bytes& bytes) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return path;
}

uint32_t crc32_of(const Bytes& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char b : bytes) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
  }
  return ~crc;
}

// A gzip file (RFC 1952) holding `bytes` in stored deflate blocks (RFC 1951), written by hand:
// the test binary does not link zlib, and an independent writer checks the reader against the
// format rather than against zlib's own output. Real deflate data is read in the Fashion-MNIST
// test.
Bytes gzip_bytes(const Bytes& bytes) {
  Bytes out = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
  size_t pos = 0;
  do {
    const size_t len = std::min<size_t>(bytes.size() - pos, 65535);
    const bool last = pos + len == bytes.size();
    out.push_back(last ? 1 : 0);  // BFINAL, BTYPE 00 (stored), padded to a byte
    for (uint16_t v : {static_cast<uint16_t>(len), static_cast<uint16_t>(~len)}) {
      out.push_back(static_cast<unsigned char>(v));
      out.push_back(static_cast<unsigned char>(v >> 8));
    }
    out.insert(out.end(), bytes.begin() + pos, bytes.begin() + pos + len);
    pos += len;
  } while (pos < bytes.size());
  for (uint32_t v : {crc32_of(bytes), static_cast<uint32_t>(bytes.size())})
    for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<unsigned char>(v >> shift));
  return out;
}

std::string write_gz(const std::string& name, const Bytes& bytes) { return write_plain(name, gzip_bytes(bytes)); }

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

// The typed error's message, or a note saying what was thrown instead.
template <typename E> std::string error_of(const std::string& path) {
  try {
    read_idx(path);
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

// ---- values, shapes and dtypes ----

TEST(IdxTest, ReadsUnsignedBytesPlainAndGzipped) {
  const Bytes file = header(0x08, {2, 3}) + Bytes{0, 1, 2, 253, 254, 255};
  for (const std::string& path : {write_plain("u8", file), write_gz("u8.gz", file)}) {
    Tensor t = read_idx(path);
    EXPECT_EQ(t.dtype(), DType::kUInt8);
    EXPECT_EQ(t.shape(), (Shape{2, 3}));
    EXPECT_EQ(t.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 2, 253, 254, 255}));
    EXPECT_EQ(t.at<uint8_t>({1, 0}), 253);
  }
}

TEST(IdxTest, ReadsRank1AndRank3) {
  Tensor labels = read_idx(write_gz("labels.gz", header(0x08, {4}) + Bytes{9, 0, 3, 7}));
  EXPECT_EQ(labels.shape(), (Shape{4}));
  EXPECT_EQ(labels.to_vector<uint8_t>(), (std::vector<uint8_t>{9, 0, 3, 7}));

  Bytes pixels;
  for (int i = 0; i < 2 * 3 * 2; ++i) pixels.push_back(static_cast<unsigned char>(10 * i));
  Tensor images = read_idx(write_plain("images", header(0x08, {2, 3, 2}) + pixels));
  EXPECT_EQ(images.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(images.at<uint8_t>({1, 2, 1}), 110);
}

TEST(IdxTest, SignedBytesAndShortsWidenToInt32) {
  Tensor s8 = read_idx(write_plain("i8", header(0x09, {4}) + Bytes{0x00, 0x7F, 0x80, 0xFF}));
  EXPECT_EQ(s8.dtype(), DType::kInt32);
  EXPECT_EQ(s8.to_vector<int32_t>(), (std::vector<int32_t>{0, 127, -128, -1}));

  Tensor s16 = read_idx(write_gz("i16.gz", header(0x0B, {2, 2}) + be<int16_t>({1, -2, 32767, -32768})));
  EXPECT_EQ(s16.dtype(), DType::kInt32);
  EXPECT_EQ(s16.shape(), (Shape{2, 2}));
  EXPECT_EQ(s16.to_vector<int32_t>(), (std::vector<int32_t>{1, -2, 32767, -32768}));
}

TEST(IdxTest, ReadsInt32FloatAndDoubleBigEndian) {
  Tensor i32 = read_idx(write_plain("i32", header(0x0C, {3}) + be<int32_t>({1, -70000, 0x12345678})));
  EXPECT_EQ(i32.dtype(), DType::kInt32);
  EXPECT_EQ(i32.to_vector<int32_t>(), (std::vector<int32_t>{1, -70000, 0x12345678}));

  Tensor f32 = read_idx(write_gz("f32.gz", header(0x0D, {1, 3}) + be<float>({1.5f, -0.25f, 3e38f})));
  EXPECT_EQ(f32.dtype(), DType::kFloat32);
  EXPECT_EQ(f32.shape(), (Shape{1, 3}));
  EXPECT_EQ(f32.to_vector<float>(), (std::vector<float>{1.5f, -0.25f, 3e38f}));

  Tensor f64 = read_idx(write_plain("f64", header(0x0E, {2}) + be<double>({3.141592653589793, -1e-300})));
  EXPECT_EQ(f64.dtype(), DType::kFloat64);
  EXPECT_EQ(f64.to_vector<double>(), (std::vector<double>{3.141592653589793, -1e-300}));
}

TEST(IdxTest, ZeroDimsIsAScalarAndAZeroDimIsEmpty) {
  Tensor scalar = read_idx(write_plain("scalar", header(0x08, {}) + Bytes{42}));
  EXPECT_EQ(scalar.shape(), Shape{});
  EXPECT_EQ(scalar.item<uint8_t>(), 42);

  Tensor empty = read_idx(write_gz("empty.gz", header(0x0D, {0, 28})));
  EXPECT_EQ(empty.shape(), (Shape{0, 28}));
  EXPECT_EQ(empty.dtype(), DType::kFloat32);
}

TEST(IdxTest, ReadsALargerGzipFileExactly) {
  // Several zlib buffers' worth, to cross the reader's internal chunking.
  const uint32_t n = 300000;
  Bytes data(n);
  for (uint32_t i = 0; i < n; ++i) data[i] = static_cast<unsigned char>((i * 7919u) >> 3);
  Tensor t = read_idx(write_gz("large.gz", header(0x08, {n / 100, 100}) + data));
  EXPECT_EQ(t.shape(), (Shape{n / 100, 100}));
  std::vector<uint8_t> got = t.to_vector<uint8_t>();
  EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin()));
}

// ---- errors ----

TEST(IdxTest, MissingFileIsNotFoundNamingThePath) {
  const std::string path = temp_path("does_not_exist.gz");
  const std::string msg = error_of<NotFoundError>(path);
  EXPECT_THAT(msg, HasSubstr("[read_idx]"));
  EXPECT_THAT(msg, HasSubstr(path));
}

TEST(IdxTest, DirectoryIsInvalidArgument) {
  EXPECT_THAT(error_of<InvalidArgumentError>(::testing::TempDir()), HasSubstr("is a directory"));
}

TEST(IdxTest, TruncatedHeaderIsDataLoss) {
  for (const std::string& path : {write_plain("short_magic", Bytes{0, 0, 8}), write_gz("short_magic.gz", Bytes{0}),
                                  write_plain("empty_file", Bytes{})}) {
    const std::string msg = error_of<DataLossError>(path);
    EXPECT_THAT(msg, HasSubstr("truncated header"));
    EXPECT_THAT(msg, HasSubstr("expected 4 bytes"));
    EXPECT_THAT(msg, HasSubstr(path));
  }
  // The magic promises 3 dims (12 bytes); only 6 follow.
  Bytes cut = header(0x08, {60000, 28, 28});
  cut.resize(4 + 6);
  const std::string path = write_gz("short_dims.gz", cut);
  const std::string msg = error_of<DataLossError>(path);
  EXPECT_THAT(msg, HasSubstr("expected 12 bytes for 3 dims, found 6"));
  EXPECT_THAT(msg, HasSubstr(path));
}

TEST(IdxTest, TruncatedDataSaysExpectedAndFound) {
  const Bytes file = header(0x08, {2, 5}) + Bytes{1, 2, 3, 4, 5, 6, 7};  // 7 of 10 bytes
  for (const std::string& path : {write_plain("short_data", file), write_gz("short_data.gz", file)}) {
    const std::string msg = error_of<DataLossError>(path);
    EXPECT_THAT(msg, HasSubstr("[read_idx] " + path));
    EXPECT_THAT(msg, HasSubstr("truncated data"));
    EXPECT_THAT(msg, HasSubstr("promises 10 bytes of data, found 7"));
  }
  // Multi-byte elements count bytes, not elements.
  const std::string path = write_plain("short_f64", header(0x0E, {3}) + be<double>({1, 2}));
  EXPECT_THAT(error_of<DataLossError>(path), HasSubstr("promises 24 bytes of data, found 16"));
}

TEST(IdxTest, TrailingBytesAreDataLoss) {
  const std::string path = write_plain("trailing", header(0x08, {2}) + Bytes{1, 2, 3});
  EXPECT_THAT(error_of<DataLossError>(path), HasSubstr("unexpected bytes after the 2 data bytes"));
}

TEST(IdxTest, BadMagicIsDataLoss) {
  const std::string text = write_plain("text", Bytes{'h', 'e', 'l', 'l', 'o', '\n'});
  std::string msg = error_of<DataLossError>(text);
  EXPECT_THAT(msg, HasSubstr("bad magic number 0x68656C6C"));
  EXPECT_THAT(msg, HasSubstr(text));
  const std::string gz = write_gz("magic.gz", Bytes{0, 1, 8, 1, 0, 0, 0, 1, 5});
  EXPECT_THAT(error_of<DataLossError>(gz), HasSubstr("bad magic number 0x00010801"));
}

TEST(IdxTest, UnknownTypeCodeIsDataLoss) {
  const std::string path = write_gz("type.gz", header(0x0A, {1}) + Bytes{1});
  const std::string msg = error_of<DataLossError>(path);
  EXPECT_THAT(msg, HasSubstr("unknown element type code 0x0A"));
  EXPECT_THAT(msg, HasSubstr(path));
}

TEST(IdxTest, AbsurdDimsNeverAllocate) {
  // 2^32-1 cubed overflows 64 bits.
  const std::string overflow = write_plain("overflow", header(0x0E, {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}));
  EXPECT_THAT(error_of<DataLossError>(overflow), HasSubstr("overflow a 64-bit size"));
  // A zero dim holds no data, but huge dims beside it still make no valid shape (strides).
  const std::string zero = write_plain("zero", header(0x08, {0xFFFFFFFFu, 0xFFFFFFFFu, 0}));
  EXPECT_THAT(error_of<DataLossError>(zero), HasSubstr("dims [4294967295,4294967295,0] overflow a 64-bit size"));
  // 16 TB promised by a tiny plain file: refused from the file size, not by reading.
  const std::string plain = write_plain("huge", header(0x08, {4000000, 4000000}) + Bytes{1, 2, 3});
  EXPECT_THAT(error_of<DataLossError>(plain), HasSubstr("promises 16000000000000 bytes of data, found 3"));
  // And by a tiny gzip file: more than inflate can expand it to.
  const std::string gz = write_gz("huge.gz", header(0x0D, {100000, 100000}) + Bytes{1, 2, 3});
  EXPECT_THAT(error_of<DataLossError>(gz), HasSubstr("more than a"));
}

TEST(IdxTest, CorruptGzipIsDataLoss) {
  // A gzip magic followed by garbage.
  const std::string garbage = write_plain("garbage.gz", Bytes{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xde, 0xad,
                                                               0xbe, 0xef, 0x12, 0x34, 0x56, 0x78, 0x9a});
  std::string msg = error_of<DataLossError>(garbage);
  EXPECT_THAT(msg, HasSubstr("gzip data"));
  EXPECT_THAT(msg, HasSubstr(garbage));

  // A valid gzip stream cut off half way.
  Bytes data(5000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 31 + (i >> 5));
  Bytes gz = read_file(write_gz("whole.gz", header(0x08, {5000}) + data));
  gz.resize(gz.size() / 2);
  const std::string cut = write_plain("cut.gz", gz);
  msg = error_of<DataLossError>(cut);
  EXPECT_THAT(msg, HasSubstr(cut));
  EXPECT_THAT(msg, ::testing::AnyOf(HasSubstr("gzip data"), HasSubstr("truncated data")));

  // A flipped data byte: the gzip trailer's CRC no longer matches.
  Bytes bad = gzip_bytes(header(0x08, {3}) + Bytes{1, 2, 3});
  bad[bad.size() - 9] ^= 0x40;  // the last data byte, before the 8-byte trailer
  const std::string crc = write_plain("crc.gz", bad);
  msg = error_of<DataLossError>(crc);
  EXPECT_THAT(msg, HasSubstr("gzip data"));
  EXPECT_THAT(msg, HasSubstr("incorrect data check"));
}

}  // namespace
}  // namespace tapeflow
