#include "saving/npy.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/checked_size.h"
#include "core/errors.h"
#include "eager/ops/array.h"
#include "saving/file_io.h"

// Note [npy layout]: NumPy's format description (numpy/lib/format.py, NEP 1):
//   bytes [0, 6)   the magic "\x93NUMPY"
//   bytes 6, 7     the major and minor version: 1.0, 2.0 or 3.0
//   then           the header length: a little-endian u16 (1.0) or u32 (2.0, 3.0)
//   then           the header: ASCII (1.0, 2.0) or UTF-8 (3.0) text of a Python dict literal with
//                  exactly the keys 'descr', 'fortran_order' and 'shape', padded with spaces
//                  and ended by '\n' so that magic + length + header is a multiple of 64
//                  (older NumPy versions aligned to 16: a reader must not insist on 64)
//   then           the data: prod(shape) elements in C (row-major) or Fortran order
// We write what NumPy writes: 1.0 unless the header exceeds 65535 bytes, keys in sorted order,
// "(n,)" for one dimension, "()" for a scalar, and a trailing ", " before the closing brace.
static_assert(std::endian::native == std::endian::little, ".npy I/O assumes a little-endian host");

namespace tapeflow {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kAlign = 64;
// NumPy refuses headers above this size (numpy.lib.format's max_header_size default is 10000;
// we allow more, but bound the parse of a hostile file).
constexpr uint64_t kMaxHeaderBytes = uint64_t{1} << 20;

absl::string_view av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

template <typename... Args>
[[noreturn]] void data_loss(std::string_view file, const Args&... args) {
  throw DataLossError(absl::StrCat("[npy] ", av(file), ": ", args...));
}
template <typename... Args>
[[noreturn]] void invalid(std::string_view file, const Args&... args) {
  throw InvalidArgumentError(absl::StrCat("[npy] ", av(file), ": ", args...));
}

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// A parser for the one Python literal the header holds: a dict of string keys to a string,
// True/False, or a tuple of non-negative integers.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view file) : s_(text), file_(file) {}

  Header parse() {
    Header h;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') break;
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        check_once(seen_descr, key);
        skip_ws();
        if (peek() != '\'' && peek() != '"')
          invalid(file_, "'descr' is not a simple type string (structured arrays are not supported)");
        h.descr = string_literal();
      } else if (key == "fortran_order") {
        check_once(seen_order, key);
        h.fortran_order = boolean();
      } else if (key == "shape") {
        check_once(seen_shape, key);
        h.shape = tuple();
      } else {
        fail("unexpected key '", key, "' (a .npy header has 'descr', 'fortran_order' and 'shape')");
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skip_ws();
      if (peek() != '}') fail("expected ',' or '}' at offset ", pos_);
    }
    ++pos_;  // '}'
    for (; pos_ < s_.size(); ++pos_)
      if (!is_ws(s_[pos_]) && s_[pos_] != '\0') fail("unexpected text after the header's dict at offset ", pos_);
    if (!seen_descr || !seen_order || !seen_shape)
      fail("the header lacks ", !seen_descr ? "'descr'" : !seen_order ? "'fortran_order'" : "'shape'");
    return h;
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(const Args&... args) const {
    data_loss(file_, "bad header: ", args...);
  }
  static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  void skip_ws() {
    while (pos_ < s_.size() && is_ws(s_[pos_])) ++pos_;
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void expect(char c) {
    skip_ws();
    if (peek() != c) fail("expected '", std::string(1, c), "' at offset ", pos_);
    ++pos_;
  }
  void check_once(bool& seen, const std::string& key) const {
    if (seen) fail("key '", key, "' appears twice");
    seen = true;
  }
  std::string string_literal() {
    skip_ws();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string at offset ", pos_);
    const size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string at offset ", pos_);
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    if (out.find('\\') != std::string::npos) fail("escapes in strings are not supported");
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_ws();
    for (const auto& [word, value] : {std::pair{std::string_view("True"), true}, {"False", false}})
      if (s_.substr(pos_).starts_with(word)) {
        pos_ += word.size();
        return value;
      }
    fail("'fortran_order' is not True or False");
  }
  std::vector<int64_t> tuple() {
    expect('(');
    std::vector<int64_t> dims;
    while (true) {
      skip_ws();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') fail("'shape' holds something other than non-negative integers");
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        const std::optional<int64_t> next = checked_mul(v, 10);
        const std::optional<int64_t> sum = next ? checked_add(*next, peek() - '0') : std::nullopt;
        if (!sum) fail("a dimension of 'shape' overflows int64");
        v = *sum;
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 wrote long integers as "3L"
      dims.push_back(v);
      if (dims.size() > 64) fail("'shape' has more than 64 dimensions");
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skip_ws();
      if (peek() != ')') fail("expected ',' or ')' in 'shape' at offset ", pos_);
    }
    ++pos_;
    return dims;
  }

  std::string_view s_;
  std::string_view file_;
  size_t pos_ = 0;
};

struct DescrInfo {
  DType dtype;
  bool swap;  // stored big-endian
};

DescrInfo parse_descr(const std::string& descr, std::string_view file) {
  if (descr.size() >= 2) {
    const char order = descr[0];
    const std::string type = descr.substr(1);
    struct Known {
      const char* type;
      DType dtype;
    };
    static constexpr Known kKnown[] = {{"f4", DType::kFloat32}, {"f8", DType::kFloat64}, {"i4", DType::kInt32},
                                       {"i8", DType::kInt64},   {"u1", DType::kUInt8},   {"b1", DType::kBool}};
    if (order == '<' || order == '>' || order == '|' || order == '=')
      for (const Known& k : kKnown)
        if (type == k.type) {
          const bool one_byte = dtype_size(k.dtype) == 1;
          if (order == '|' && !one_byte) break;  // '|' means "not applicable": bytes only
          return {k.dtype, order == '>' && !one_byte};
        }
  }
  invalid(file, "dtype '", descr,
          "' is not supported (tapeflow reads float32 '<f4', float64 '<f8', int32 '<i4', int64 '<i8', uint8 '|u1' "
          "and bool '|b1')");
}

std::string shape_literal(const Shape& shape) {
  std::vector<std::string> dims;
  for (int64_t d : shape.dims()) dims.push_back(absl::StrCat(d));
  if (dims.size() == 1) return absl::StrCat("(", dims[0], ",)");
  return absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

}  // namespace

const char* npy_descr(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "<f4";
    case DType::kFloat64: return "<f8";
    case DType::kInt32: return "<i4";
    case DType::kInt64: return "<i8";
    case DType::kUInt8: return "|u1";
    case DType::kBool: return "|b1";
  }
  return "?";
}

std::string encode_npy(const Tensor& tensor) {
  if (!tensor.defined()) throw InvalidArgumentError("[npy] cannot write an empty tensor handle");
  if (tensor.is_symbolic())
    throw InvalidArgumentError(absl::StrCat("[npy] cannot write symbolic tensor '", tensor.name(),
                                            "': it has no value (run it through a Session first)"));
  std::string dict = absl::StrCat("{'descr': '", npy_descr(tensor.dtype()), "', 'fortran_order': False, 'shape': ",
                                  shape_literal(tensor.shape()), ", }");
  // Version 1.0 holds a header of up to 65535 bytes; 2.0 is needed only beyond that.
  auto padded_size = [&](size_t prefix) {
    const size_t unpadded = prefix + dict.size() + 1;  // + '\n'
    return (unpadded + kAlign - 1) / kAlign * kAlign;
  };
  size_t prefix = kMagicSize + 2 + 2;
  uint8_t major = 1;
  if (padded_size(prefix) - prefix > 0xffff) {
    prefix = kMagicSize + 2 + 4;
    major = 2;
  }
  const size_t header_len = padded_size(prefix) - prefix;
  dict.append(header_len - dict.size() - 1, ' ');
  dict.push_back('\n');

  const size_t data_bytes = static_cast<size_t>(tensor.num_elements()) * dtype_size(tensor.dtype());
  std::string out;
  out.reserve(prefix + header_len + data_bytes);
  out.append(kMagic, kMagicSize);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  for (size_t i = 0; i < prefix - kMagicSize - 2; ++i) out.push_back(static_cast<char>((header_len >> (8 * i)) & 0xff));
  out += dict;
  const size_t at = out.size();
  out.resize(at + data_bytes);
  if (data_bytes > 0) tensor.copy_to_host(out.data() + at);
  return out;
}

Tensor decode_npy(std::span<const std::byte> bytes, std::string_view file, Device* device) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < kMagicSize + 2 || std::memcmp(p, kMagic, kMagicSize) != 0)
    data_loss(file, "not a .npy file (it does not start with \"\\x93NUMPY\")");
  const unsigned major = p[6], minor = p[7];
  if (major < 1 || major > 3 || minor != 0)
    invalid(file, "format version ", major, ".", minor, " is not supported (1.0, 2.0 and 3.0 are)");
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t prefix = kMagicSize + 2 + len_bytes;
  if (bytes.size() < prefix) data_loss(file, "truncated in the header length");
  uint64_t header_len = 0;
  for (size_t i = 0; i < len_bytes; ++i) header_len |= uint64_t{p[kMagicSize + 2 + i]} << (8 * i);
  if (header_len > kMaxHeaderBytes) data_loss(file, "the header length ", header_len, " is implausibly large");
  if (header_len > bytes.size() - prefix)
    data_loss(file, "the header length ", header_len, " goes beyond the file's ", bytes.size(),
              " bytes (truncated file?)");
  const std::string_view text(reinterpret_cast<const char*>(p) + prefix, header_len);
  if (major < 3)
    for (char c : text)
      if (static_cast<unsigned char>(c) >= 0x80) data_loss(file, "bad header: a version ", major, ".0 header is ASCII");
  const Header h = HeaderParser(text, file).parse();
  const DescrInfo d = parse_descr(h.descr, file);

  const absl::StatusOr<int64_t> n_bytes = checked_tensor_bytes(h.shape, d.dtype);
  if (!n_bytes.ok())
    throw_status(absl::Status(n_bytes.status().code(), absl::StrCat("[npy] ", av(file), ": ", n_bytes.status().message())),
                 std::source_location::current());
  const std::span<const std::byte> data = bytes.subspan(prefix + header_len);
  if (data.size() != static_cast<uint64_t>(*n_bytes))
    data_loss(file, "shape ", dims_to_string(h.shape), " of ", dtype_name(d.dtype), " needs ", *n_bytes,
              " bytes of data but the file holds ", data.size(), data.size() < static_cast<uint64_t>(*n_bytes) ? " (truncated file?)" : "");
  const size_t item = dtype_size(d.dtype);
  std::vector<std::byte> fixed;  // byte-swapped or bool-checked copy when needed
  const std::byte* src = data.empty() ? nullptr : data.data();
  if (d.swap) {
    fixed.assign(data.begin(), data.end());
    for (size_t i = 0; i < fixed.size(); i += item) std::reverse(fixed.begin() + i, fixed.begin() + i + item);
    src = fixed.data();
  }
  if (d.dtype == DType::kBool)
    for (size_t i = 0; i < data.size(); ++i)
      if (static_cast<uint8_t>(data[i]) > 1)
        data_loss(file, "bool element ", i, " holds the byte ", static_cast<int>(data[i]), " (0 or 1 expected)");
  if (!h.fortran_order || h.shape.size() < 2) return Tensor::from_host(d.dtype, Shape(h.shape), src, device);
  // Fortran order: the data is the row-major array of the reversed shape; transpose it back.
  std::vector<int64_t> reversed(h.shape.rbegin(), h.shape.rend());
  std::vector<int64_t> perm(h.shape.size());
  std::iota(perm.rbegin(), perm.rend(), 0);
  return transpose(Tensor::from_host(d.dtype, Shape(reversed), src, device), perm);
}

void write_npy(const Tensor& tensor, const std::string& path) { write_file_atomically(path, encode_npy(tensor)); }

Tensor read_npy(const std::string& path, Device* device) {
  const MappedFile f = MappedFile::open(path);
  return decode_npy(f.bytes(), path, device);
}

}  // namespace tapeflow
