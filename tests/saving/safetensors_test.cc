// The safetensors codec (pure functions over bytes): round trips, bytes written the way Python's
// safetensors writes them, every malformed input, checked copies, and a fuzz-style loop.
// CRC32C itself: tests/saving/crc32c_test.cc.
#include "saving/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "core/errors.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::span<const std::byte> bytes_of(const std::string& s) { return as_bytes(s); }

// A file as the format's writers lay it out: u64 LE length, the header padded with spaces to a
// multiple of 8, then the data.
std::string assemble(std::string header, const std::string& data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

template <typename T> std::string raw(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return out;
}

// ---- round trips ----

TEST(SafetensorsTest, RoundTripEveryDTypeRankZeroAndEmpty) {
  const NamedTensors tensors = {
      {"f32", Tensor({{1.5f, -2.f, 3.25f}, {4.f, 5.f, 6.f}})},
      {"f64", Tensor(std::vector<double>{1e300, -0.5}, Shape{2})},
      {"i32", Tensor(std::vector<int32_t>{-7, 8, 9}, Shape{3, 1})},
      {"i64", Tensor(std::vector<int64_t>{int64_t(1) << 40}, Shape{1})},
      {"u8", Tensor(std::vector<uint8_t>{0, 255, 128}, Shape{3})},
      {"bool", Tensor(std::vector<bool>{true, false, true, true}, Shape{2, 2})},
      {"scalar", Tensor(42.f)},
      {"empty", Tensor(std::vector<float>{}, Shape{0, 3})},
  };
  const std::string file = encode_safetensors(tensors, {{"step", "12"}});
  const uint64_t n = [&] { uint64_t v; std::memcpy(&v, file.data(), 8); return v; }();
  EXPECT_EQ((8 + n) % 8, 0u);
  const SafetensorsFile decoded = decode_safetensors(bytes_of(file), "rt.safetensors");
  EXPECT_EQ(decoded.tensors.size(), tensors.size());
  EXPECT_EQ(decoded.metadata.at("step"), "12");
  for (const auto& [name, t] : tensors) {
    SCOPED_TRACE(name);
    const SafetensorsEntry& e = decoded.at(name);
    EXPECT_TRUE(e.checksummed);
    EXPECT_EQ(Shape(e.shape), t.shape());
    const Tensor back = to_tensor(e);
    ASSERT_EQ(back.dtype(), t.dtype());
    ASSERT_EQ(back.shape(), t.shape());
    dispatch_dtype(t.dtype(), [&]<typename T>() { EXPECT_EQ(back.to_vector<T>(), t.to_vector<T>()); });
  }
  EXPECT_EQ(decoded.at("scalar").shape.size(), 0u);
  EXPECT_EQ(decoded.at("bool").dtype, SafetensorsDType::kBool);
}

TEST(SafetensorsTest, HeaderIsCompactSortedJsonPaddedWithSpaces) {
  const std::string file = encode_safetensors({{"b", Tensor(std::vector<int32_t>{1, 2}, Shape{2})}, {"a", Tensor(1.f)}});
  uint64_t n;
  std::memcpy(&n, file.data(), 8);
  const std::string header = file.substr(8, n);
  EXPECT_THAT(header, HasSubstr(R"("a":{"data_offsets":[8,12],"dtype":"F32","shape":[]})"));
  EXPECT_THAT(header, HasSubstr(R"("b":{"data_offsets":[0,8],"dtype":"I32","shape":[2]})"));
  EXPECT_THAT(header, HasSubstr(R"("crc32c:a":")"));
  EXPECT_EQ(header.find('{'), 0u);
  EXPECT_EQ(header.find_last_not_of(' '), header.rfind('}'));
  EXPECT_EQ(file.size(), 8 + n + 12);
}

// Bytes laid out as Python's `safetensors.torch.save_file` / `numpy.save_file` write them: a
// header with sorted keys and no spaces, padded to 8 with spaces, no checksums of ours.
TEST(SafetensorsTest, ReadsBytesWrittenByThePythonLibrary) {
  const std::string data = raw<float>({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}) + raw<int64_t>({-3}) + std::string("\x01\x00", 2);
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"flag":{"data_offsets":[32,34],"dtype":"BOOL","shape":[2]},)"
      R"("step":{"data_offsets":[24,32],"dtype":"I64","shape":[]},)"
      R"("weight":{"data_offsets":[0,24],"dtype":"F32","shape":[2,3]}})";
  const std::string file = assemble(header, data);
  const SafetensorsFile f = decode_safetensors(bytes_of(file), "python.safetensors");
  EXPECT_EQ(f.metadata.at("format"), "pt");
  const SafetensorsEntry& w = f.at("weight");
  EXPECT_FALSE(w.checksummed);
  EXPECT_EQ(to_tensor(w).to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(to_tensor(w).shape(), (Shape{2, 3}));
  EXPECT_EQ(to_tensor(f.at("step")).item<int64_t>(), -3);
  EXPECT_EQ(to_tensor(f.at("flag")).to_vector<bool>(), (std::vector<bool>{true, false}));
  // No metadata at all, and no tensors at all, are valid too.
  EXPECT_EQ(decode_safetensors(bytes_of(assemble("{}", ""))).tensors.size(), 0u);
  const std::string half = assemble(R"({"h":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}})", std::string("\x00\x3c", 2));
  const SafetensorsFile hf = decode_safetensors(bytes_of(half), "half.safetensors");
  EXPECT_EQ(hf.at("h").dtype, SafetensorsDType::kF16);
  EXPECT_THAT(error_of([&] { to_tensor(hf.at("h"), "half.safetensors"); }),
              AllOf(HasSubstr("[safetensors] half.safetensors"), HasSubstr("'h'"), HasSubstr("F16")));
}

TEST(SafetensorsTest, EncodeRejectsBadNames) {
  const Tensor t(1.f);
  EXPECT_THAT(error_of([&] { encode_safetensors({{"a", t}, {"a", t}}); }), HasSubstr("tensor 'a' given twice"));
  EXPECT_THAT(error_of([&] { encode_safetensors({{"__metadata__", t}}); }), HasSubstr("cannot be named"));
  EXPECT_THAT(error_of([&] { encode_safetensors({{"a", t}}, {{"crc32c:a", "0"}}); }), HasSubstr("reserved"));
  EXPECT_THAT(error_of([&] { encode_safetensors({{"a", Tensor()}}); }), HasSubstr("has no value"));
  EXPECT_THAT(error_of([&] { encode_safetensors({{std::string("\xff\xfe"), t}}); }), HasSubstr("UTF-8"));
}

// ---- malformed input ----

struct BadCase {
  const char* what;
  std::string bytes;
  bool data_loss;              // DataLossError, else InvalidArgumentError
  std::vector<std::string> expect;  // substrings of the message
};

std::vector<BadCase> bad_cases() {
  const std::string f2 = raw<float>({1.f, 2.f});
  const std::string good = encode_safetensors({{"w", Tensor({1.f, 2.f})}});
  std::string flipped = good;
  flipped.back() ^= 0x40;  // one data bit: only the checksum can tell
  std::string long_header = good;
  const uint64_t huge = good.size();  // header length == file size: beyond the file
  std::memcpy(long_header.data(), &huge, 8);
  return {
      {"short", "abc", true, {"only 3 bytes"}},
      {"header beyond file", long_header, true, {"beyond the file"}},
      {"not json", assemble("{\"w\": [", f2), true, {"not valid JSON"}},
      {"not an object", assemble("[1,2]", ""), true, {"not a JSON object"}},
      {"unknown dtype", assemble(R"({"w":{"dtype":"F8","shape":[2],"data_offsets":[0,8]}})", f2), false,
       {"'w'", "unknown dtype 'F8'"}},
      {"missing shape", assemble(R"({"w":{"dtype":"F32","data_offsets":[0,8]}})", f2), false, {"'w'", "shape"}},
      {"negative dim", assemble(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", f2), false,
       {"'w'", "negative"}},
      {"offsets out of range", assemble(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", f2), true,
       {"'w'", "outside the data section"}},
      {"offsets reversed", assemble(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", f2), true,
       {"'w'", "outside"}},
      {"overlap",
       assemble(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                f2),
       true, {"overlap"}},
      {"gap", assemble(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", f2), true,
       {"belong to no tensor", "'w'"}},
      {"trailing bytes", assemble(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", f2), true,
       {"belong to no tensor"}},
      {"shape overflow",
       assemble(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", f2), false,
       {"'w'", "overflows"}},
      {"bytes overflow",
       assemble(R"({"w":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,8]}})", f2), false,
       {"'w'", "overflows"}},
      {"count mismatch", assemble(R"({"w":{"dtype":"F64","shape":[2],"data_offsets":[0,8]}})", f2), true,
       {"'w'", "needs 16"}},
      {"duplicate", assemble(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", f2),
       true, {"'w' appears twice"}},
      {"crc mismatch", flipped, true, {"'w'", "CRC32C mismatch"}},
      {"crc of absent tensor",
       assemble(R"({"__metadata__":{"crc32c:x":"00000000"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", f2),
       true, {"'x'"}},
      {"bool byte", assemble(R"({"b":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})", std::string("\x01\x02", 2)),
       true, {"'b'", "not 0 or 1"}},
      {"metadata not string", assemble(R"({"__metadata__":{"k":1}})", ""), false, {"metadata 'k'"}},
      {"entry not object", assemble(R"({"w":3})", ""), false, {"'w'"}},
      {"bad offsets", assemble(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", f2), false,
       {"'w'", "data_offsets"}},
  };
}

TEST(SafetensorsTest, EveryMalformedInputIsATypedErrorNamingFileAndTensor) {
  for (const BadCase& c : bad_cases()) {
    SCOPED_TRACE(c.what);
    std::string message;
    bool data_loss = false;
    try {
      decode_safetensors(bytes_of(c.bytes), "bad.safetensors");
      ADD_FAILURE() << "decoded";
      continue;
    } catch (const DataLossError& e) {
      data_loss = true;
      message = e.what();
    } catch (const InvalidArgumentError& e) {
      message = e.what();
    }
    EXPECT_EQ(data_loss, c.data_loss) << message;
    EXPECT_THAT(message, HasSubstr("[safetensors] bad.safetensors: "));
    for (const std::string& s : c.expect) EXPECT_THAT(message, HasSubstr(s));
  }
}

TEST(SafetensorsTest, ChecksumsCanBeSkipped) {
  std::string file = encode_safetensors({{"w", Tensor({1.f, 2.f})}});
  file.back() ^= 1;
  EXPECT_THROW(decode_safetensors(bytes_of(file)), DataLossError);
  EXPECT_NO_THROW(decode_safetensors(bytes_of(file), "f", DecodeOptions{.verify_checksums = false}));
}

// Note [Checked copy]: a tensor large enough for every lane of crc32c_copy is restored whole, and
// a flipped data byte in it (decoded without the checksum pass) is a DataLossError naming the
// tensor and the file when it is copied.
TEST(SafetensorsTest, VerifiedCopyRestoresLargeTensorsAndCatchesAFlippedByte) {
  std::vector<float> values(3 * 8192 + 777);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.25f - 100.f;
  const Tensor w(values, Shape{static_cast<int64_t>(values.size())});
  std::string file = encode_safetensors({{"w", w}, {"small", Tensor({1.f, 2.f, 3.f})}});
  const SafetensorsFile good = decode_safetensors(bytes_of(file), "ok.safetensors");
  const Tensor w_back = to_tensor_verified(good.at("w"), "ok.safetensors");
  EXPECT_EQ(w_back.dtype(), DType::kFloat32);
  EXPECT_EQ(w_back.shape(), Shape({static_cast<int64_t>(values.size())}));
  EXPECT_EQ(w_back.to_vector<float>(), values);
  EXPECT_EQ(to_tensor_verified(good.at("small"), "ok.safetensors").to_vector<float>(), (std::vector<float>{1.f, 2.f, 3.f}));
  file[file.size() - 5000] ^= 0x08;  // inside w's 100 KB of data, whichever tensor comes last
  const SafetensorsFile bad = decode_safetensors(bytes_of(file), "bad.safetensors", {.verify_checksums = false});
  EXPECT_NO_THROW(to_tensor_verified(bad.at("small"), "bad.safetensors"));
  try {
    to_tensor_verified(bad.at("w"), "bad.safetensors");
    FAIL() << "a flipped byte was not caught";
  } catch (const DataLossError& e) {
    EXPECT_THAT(e.message(), AllOf(HasSubstr("bad.safetensors"), HasSubstr("tensor 'w'"), HasSubstr("CRC32C mismatch")));
  }
}

// Random truncations and byte flips of a valid file: the decoder only ever throws tapeflow
// errors (never crashes, never another exception); a damaged data byte is always caught.
TEST(SafetensorsTest, FuzzTruncationsAndFlipsOnlyThrowTapeflowErrors) {
  const std::string file = encode_safetensors(
      {{"weights", Tensor({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}})},
       {"ids", Tensor(std::vector<int64_t>{1, 2, 3}, Shape{3})},
       {"mask", Tensor(std::vector<bool>{true, false}, Shape{2})},
       {"s", Tensor(2.0)}},
      {{"note", "fuzz"}});
  uint64_t n;
  std::memcpy(&n, file.data(), 8);
  const size_t data_start = 8 + n;
  std::mt19937 rng(1234);
  int ok = 0, rejected = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string mutated = file;
    bool data_damaged = false, header_damaged = false;
    switch (iter % 3) {
      case 0:
        mutated.resize(rng() % file.size());
        break;
      case 1:
      case 2: {
        const int flips = 1 + int(rng() % 4);
        for (int k = 0; k < flips; ++k) {
          const size_t at = rng() % mutated.size();
          const char old = mutated[at];
          mutated[at] = char(old ^ char(1 + rng() % 255));
          (at >= data_start ? data_damaged : header_damaged) = true;
        }
        break;
      }
    }
    try {
      decode_safetensors(bytes_of(mutated), "fuzz.safetensors");
      ++ok;
      // (a damaged header may have lost a checksum key; then the data is not checked)
      if (!header_damaged) {
        EXPECT_FALSE(data_damaged) << "iteration " << iter << ": a damaged data byte went unnoticed";
      }
    } catch (const Error&) {
      ++rejected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "iteration " << iter << ": " << e.what();
    }
  }
  EXPECT_GT(rejected, 2000);
  (void)ok;
}

}  // namespace
}  // namespace tapeflow
