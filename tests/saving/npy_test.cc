// The .npy codec: bytes laid out exactly as NumPy's np.save writes them (hand-assembled from the
// published format), what older and other writers produce (version 2.0, 16-byte alignment,
// Fortran order, big-endian), round trips of every dtype, every malformed input as a typed
// error, and truncations and flips that only ever throw tapeflow errors.
#include "saving/npy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "core/checked_size.h"
#include "core/errors.h"
#include "saving/safetensors.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

template <typename T> std::string raw(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return out;
}

// A file as np.save lays it out: magic, version, little-endian header length, the dict padded
// with spaces and ended by '\n' so that the data starts at a multiple of `align`.
std::string npy_file(const std::string& dict, const std::string& data, int major = 1, size_t align = 64) {
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t prefix = 8 + len_bytes;
  const size_t total = (prefix + dict.size() + 1 + align - 1) / align * align;
  const size_t header_len = total - prefix;
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  for (size_t i = 0; i < len_bytes; ++i) out.push_back(static_cast<char>((header_len >> (8 * i)) & 0xff));
  out += dict;
  out.append(header_len - dict.size() - 1, ' ');
  out.push_back('\n');
  return out + data;
}

Tensor decode(const std::string& bytes) { return decode_npy(as_bytes(bytes), "x.npy"); }

TEST(NpyTest, WritesExactlyTheBytesNumpyWrites) {
  // np.save(f, np.arange(6, dtype='<f4').reshape(2, 3)): a 118-byte header, data at 128.
  const std::string numpy_bytes =
      npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", raw<float>({0, 1, 2, 3, 4, 5}));
  ASSERT_EQ(numpy_bytes.size(), 128u + 24u);
  EXPECT_EQ(numpy_bytes.substr(8, 2), std::string("\x76\x00", 2));
  const Tensor t({{0.f, 1.f, 2.f}, {3.f, 4.f, 5.f}});
  EXPECT_EQ(encode_npy(t), numpy_bytes);
  // One dimension is "(n,)", a scalar "()", uint8 and bool are '|u1' and '|b1'.
  EXPECT_EQ(encode_npy(Tensor(std::vector<int64_t>{7, -1, 3}, Shape{3})),
            npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", raw<int64_t>({7, -1, 3})));
  EXPECT_EQ(encode_npy(Tensor(std::vector<uint8_t>{200}, Shape{})),
            npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (), }", std::string("\xc8", 1)));
  EXPECT_EQ(encode_npy(Tensor(std::vector<bool>{true, false}, Shape{2, 1})),
            npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (2, 1), }", std::string("\x01\x00", 2)));
}

TEST(NpyTest, ReadsWhatNumpyWrites) {
  const Tensor t = decode(
      npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", raw<float>({0, 1.5f, 2, 3, 4, -5})));
  EXPECT_EQ(t.dtype(), DType::kFloat32);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 1.5f, 2, 3, 4, -5}));
  // NumPy >= 1.23 leaves spare spaces after the dict for growing the shape in place.
  const Tensor g = decode(npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }" +
                                       std::string(20, ' '),
                                   raw<int32_t>({-3, 9})));
  EXPECT_EQ(g.to_vector<int32_t>(), (std::vector<int32_t>{-3, 9}));
  const Tensor s = decode(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", raw<double>({2.5})));
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.item<double>(), 2.5);
  const Tensor e = decode(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4), }", ""));
  EXPECT_EQ(e.shape(), (Shape{0, 4}));
}

TEST(NpyTest, ReadsOtherWritersLayouts) {
  // Version 2.0 (u32 header length), 16-byte alignment (older NumPy), keys in another order,
  // double quotes, no trailing comma, Python 2's "3L".
  const Tensor v2 = decode(npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                                    raw<int64_t>({1, 2}), /*major=*/2));
  EXPECT_EQ(v2.to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  const Tensor old = decode(npy_file("{\"shape\": (3L,), \"fortran_order\": False, \"descr\": \"<f4\"}",
                                     raw<float>({1, 2, 3}), 1, /*align=*/16));
  EXPECT_EQ(old.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  // Fortran order: column-major data, read back into row-major [[0, 1, 2], [3, 4, 5]].
  const Tensor f = decode(npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                                   raw<float>({0, 3, 1, 4, 2, 5})));
  EXPECT_EQ(f.shape(), (Shape{2, 3}));
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  // Big-endian int32 and float64.
  const Tensor be = decode(npy_file("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
                                    std::string("\x00\x00\x01\x02\xff\xff\xff\xfe", 8)));
  EXPECT_EQ(be.to_vector<int32_t>(), (std::vector<int32_t>{0x0102, -2}));
  std::string d = raw<double>({-0.75});
  std::reverse(d.begin(), d.end());
  EXPECT_EQ(decode(npy_file("{'descr': '>f8', 'fortran_order': False, 'shape': (), }", d)).item<double>(), -0.75);
}

TEST(NpyTest, RoundTripsEveryDTypeThroughAFile) {
  std::string dir = ::testing::TempDir() + "tapeflow_npy_XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::vector<Tensor> tensors = {
      Tensor({{1.f, -2.f}, {3.5f, 4.f}}), Tensor(std::vector<double>{1e300, -0.0}, Shape{2}),
      Tensor(std::vector<int32_t>{1, -2, 3}, Shape{3, 1, 1}), Tensor(std::vector<int64_t>{int64_t{1} << 40}, Shape{}),
      Tensor(std::vector<uint8_t>{0, 255, 7, 8}, Shape{2, 2}), Tensor(std::vector<bool>{false, true, true}, Shape{3})};
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string path = dir + "/t" + std::to_string(i) + ".npy";
    write_npy(tensors[i], path);
    const Tensor back = read_npy(path);
    EXPECT_EQ(back.dtype(), tensors[i].dtype()) << i;
    EXPECT_EQ(back.shape(), tensors[i].shape()) << i;
    EXPECT_EQ(encode_npy(back), encode_npy(tensors[i])) << i;
    EXPECT_EQ((encode_npy(back).find('\n') + 1) % 64, 0u) << "data not 64-aligned for " << i;
  }
  EXPECT_THAT(error_of<NotFoundError>([&] { read_npy(dir + "/missing.npy"); }), HasSubstr("missing.npy"));
  std::filesystem::remove_all(dir);
}

TEST(NpyTest, EveryMalformedInputIsATypedErrorNamingTheFile) {
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string data = raw<float>({1, 2});
  struct Case {
    std::string bytes;
    std::string expect;
    bool data_loss;  // else InvalidArgument
  };
  std::string bad_magic = npy_file(ok_dict, data);
  bad_magic[1] = 'M';
  std::string long_header = npy_file(ok_dict, data);
  long_header[8] = '\xff';
  long_header[9] = '\x7f';
  const Case cases[] = {
      {"", "not a .npy file", true},
      {bad_magic, "not a .npy file", true},
      {std::string("\x93NUMPY\x01\x00\x10", 9), "truncated in the header length", true},
      {long_header, "goes beyond the file", true},
      {npy_file(ok_dict, data.substr(0, 6)), "needs 8 bytes of data but the file holds 6 (truncated file?)", true},
      {npy_file(ok_dict, data + "xx"), "needs 8 bytes of data but the file holds 10", true},
      {npy_file("{'descr': '<f4', 'shape': (2,), }", data), "lacks 'fortran_order'", true},
      {npy_file("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data), "twice", true},
      {npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", data), "unexpected key 'x'", true},
      {npy_file("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", data), "not True or False", true},
      {npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", data), "non-negative integers", true},
      {npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", data), "expected ',' or '}'", true},
      {npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", data), "overflows",
       true},
      {npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } junk", data), "after the header", true},
      {npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", "\x01\x02"), "holds the byte 2", true},
      {npy_file("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", data), "dtype '<c8' is not supported",
       false},
      {npy_file("{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }", data), "dtype '<f2'", false},
      {npy_file("{'descr': '|f4', 'fortran_order': False, 'shape': (2,), }", data), "dtype '|f4'", false},
      {npy_file("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", data), "dtype '|O'", false},
      {npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", data), "structured", false},
      {npy_file(ok_dict, data, 4), "format version 4.0 is not supported", false},
  };
  for (const Case& c : cases) {
    const std::string message = c.data_loss ? error_of<DataLossError>([&] { decode(c.bytes); })
                                            : error_of<InvalidArgumentError>([&] { decode(c.bytes); });
    EXPECT_THAT(message, HasSubstr("[npy] x.npy: ")) << c.expect;
    EXPECT_THAT(message, HasSubstr(c.expect));
  }
}

TEST(NpyTest, ShapesTooLargeAreRefusedBeforeAllocating) {
  const int64_t old = max_tensor_bytes();
  set_max_tensor_bytes(1 << 20);
  const std::string msg = error_of<ResourceExhaustedError>(
      [&] { decode(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1024, 1024), }", "")); });
  set_max_tensor_bytes(old);
  EXPECT_THAT(msg, HasSubstr("[npy] x.npy: "));
  EXPECT_THAT(error_of<Error>([&] {
                decode(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", ""));
              }),
              HasSubstr("[npy] x.npy: "));
}

TEST(NpyTest, WriterRejectsHandlesWithoutValues) {
  EXPECT_THAT(error_of([&] { encode_npy(Tensor()); }), HasSubstr("[npy] cannot write an empty tensor"));
}

TEST(NpyTest, FuzzTruncationsAndFlipsOnlyThrowTapeflowErrors) {
  const std::string files[] = {
      encode_npy(Tensor({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}})),
      npy_file("{'descr': '>i4', 'fortran_order': True, 'shape': (2, 2), }", raw<int32_t>({1, 2, 3, 4})),
      encode_npy(Tensor(std::vector<bool>{true, false}, Shape{2}))};
  std::mt19937 rng(99);
  int accepted = 0, rejected = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string mutated = files[iter % 3];
    if (iter % 2 == 0) {
      mutated.resize(rng() % mutated.size());
    } else {
      for (int k = 0, flips = 1 + int(rng() % 4); k < flips; ++k) mutated[rng() % mutated.size()] ^= char(1 + rng() % 255);
    }
    try {
      decode(mutated);
      ++accepted;
    } catch (const Error& e) {
      EXPECT_THAT(std::string(e.what()), HasSubstr("[npy] x.npy: "));
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 1000);
  EXPECT_GT(accepted, 10);  // flips inside the data decode to other values
}

}  // namespace
}  // namespace tapeflow
