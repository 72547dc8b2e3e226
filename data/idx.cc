#include "data/idx.h"

#include "core/checked_size.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"

namespace tapeflow {

namespace {

// Inflate expands at most ~1032:1 (a 258-byte match per 2 bits, plus block overhead); more
// data than that cannot be hidden in a gzip file of a given size, whatever its header says.
constexpr uint64_t kMaxInflateRatio = 1032;
constexpr uint64_t kGzipSlack = 1 << 16;
// Buffer growth step while reading: memory follows the bytes that really arrive.
constexpr size_t kReadChunk = size_t{16} << 20;
// gzread takes an unsigned count; stay well inside it.
constexpr size_t kMaxGzRead = size_t{1} << 30;

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

struct TypeInfo {
  uint8_t code;
  const char* name;
  size_t file_size;  // bytes per element in the file
  DType dtype;       // what it reads as
};
constexpr TypeInfo kTypes[] = {
    {0x08, "unsigned byte", 1, DType::kUInt8}, {0x09, "signed byte", 1, DType::kInt32},
    {0x0B, "short", 2, DType::kInt32},         {0x0C, "int", 4, DType::kInt32},
    {0x0D, "float", 4, DType::kFloat32},       {0x0E, "double", 8, DType::kFloat64},
};

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  absl::StatusOr<Tensor> read() {
    struct stat st;
    if (::stat(path_.c_str(), &st) != 0) return open_error(errno);
    if (S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(msg("is a directory, not an IDX file"));
    const bool sized = S_ISREG(st.st_mode);
    const uint64_t file_bytes = static_cast<uint64_t>(st.st_size);

    errno = 0;
    file_.reset(gzopen(path_.c_str(), "rb"));
    if (!file_) return open_error(errno);
    gzbuffer(file_.get(), 1 << 17);  // larger than zlib's 8 KiB default: fewer syscalls

    // Header: magic number, then the dims.
    unsigned char magic[4];
    TF_ASSIGN_OR_RETURN(size_t got, read_bytes(magic, 4));
    if (got < 4)
      return absl::DataLossError(msg(absl::StrCat("truncated header: expected 4 bytes of magic number, found ", got)));
    if (magic[0] != 0 || magic[1] != 0)
      return absl::DataLossError(msg(absl::StrFormat(
          "bad magic number 0x%02X%02X%02X%02X (an IDX file starts with two zero bytes)", magic[0], magic[1],
          magic[2], magic[3])));
    const TypeInfo* type = nullptr;
    for (const TypeInfo& t : kTypes)
      if (t.code == magic[2]) type = &t;
    if (type == nullptr)
      return absl::DataLossError(msg(absl::StrFormat(
          "unknown element type code 0x%02X (expected 0x08, 0x09, 0x0B, 0x0C, 0x0D or 0x0E)", magic[2])));
    const int rank = magic[3];
    const size_t dims_bytes = 4 * static_cast<size_t>(rank);
    std::vector<unsigned char> raw_dims(dims_bytes);
    TF_ASSIGN_OR_RETURN(got, read_bytes(raw_dims.data(), dims_bytes));
    if (got < dims_bytes)
      return absl::DataLossError(msg(absl::StrCat("truncated header: expected ", dims_bytes, " bytes for ", rank,
                                                  " dims, found ", got)));
    std::vector<int64_t> dims(rank);
    for (int i = 0; i < rank; ++i) dims[i] = load_be<uint32_t>(&raw_dims[4 * i]);
    // Note [Checked sizes]: [2^32-1, 2^32-1, 0] holds no data but is still no valid shape.
    absl::StatusOr<int64_t> count = checked_num_elements(dims);
    uint64_t data_bytes = 0;
    const bool overflow =
        !count.ok() || __builtin_mul_overflow(static_cast<uint64_t>(*count), type->file_size, &data_bytes);
    const std::string desc = absl::StrCat(type->name, " dims [", absl::StrJoin(dims, ","), "]");
    if (overflow)
      return absl::DataLossError(msg(absl::StrCat("absurd header: ", desc, " overflow a 64-bit size")));

    // Refuse sizes the file cannot hold before allocating anything.
    const uint64_t header_bytes = 4 + dims_bytes;
    if (sized && gzdirect(file_.get())) {
      const uint64_t have = file_bytes > header_bytes ? file_bytes - header_bytes : 0;
      if (data_bytes > have) return truncated(desc, data_bytes, have);
    } else if (sized && file_bytes <= (UINT64_MAX - kGzipSlack) / kMaxInflateRatio &&
               data_bytes > file_bytes * kMaxInflateRatio + kGzipSlack) {
      return absl::DataLossError(msg(absl::StrCat("absurd header: ", desc, " need ", data_bytes,
                                                  " bytes of data, more than a ", file_bytes,
                                                  "-byte gzip file can hold")));
    }

    // The data, buffered as it arrives.
    std::vector<unsigned char> buf;
    buf.reserve(static_cast<size_t>(std::min<uint64_t>(data_bytes, kReadChunk)));
    while (buf.size() < data_bytes) {
      const size_t old = buf.size();
      const size_t want = static_cast<size_t>(std::min<uint64_t>(data_bytes - old, std::max(old, kReadChunk)));
      buf.resize(old + want);
      absl::StatusOr<size_t> n = read_bytes(buf.data() + old, want);
      if (!n.ok()) return n.status();
      buf.resize(old + *n);
      if (*n < want) break;
    }
    if (buf.size() < data_bytes) return truncated(desc, data_bytes, buf.size());
    unsigned char extra;
    TF_ASSIGN_OR_RETURN(got, read_bytes(&extra, 1));
    if (got != 0)
      return absl::DataLossError(msg(absl::StrCat("unexpected bytes after the ", data_bytes,
                                                  " data bytes the header promises (", desc,
                                                  "); the header's dims are likely wrong")));
    return to_tensor(*type, Shape(dims), buf);
  }

 private:
  std::string msg(std::string_view what) const {
    return absl::StrCat("[read_idx] ", path_, ": ", absl::string_view(what.data(), what.size()));
  }

  absl::Status open_error(int err) const {
    const std::string text = absl::StrCat("cannot open (", err ? std::strerror(err) : "unknown error", ")");
    switch (err) {
      case ENOENT:
      case ENOTDIR:
        return absl::NotFoundError(absl::StrCat("[read_idx] No such file: ", path_));
      case EACCES:
      case EPERM:
        return absl::PermissionDeniedError(msg(text));
      default:
        return absl::UnavailableError(msg(text));
    }
  }

  absl::Status truncated(const std::string& desc, uint64_t expected, uint64_t found) const {
    return absl::DataLossError(msg(absl::StrCat("truncated data: the header (", desc, ") promises ", expected,
                                                " bytes of data, found ", found)));
  }

  // Reads up to n bytes; fewer means end of file. A zlib error (corrupt or cut-off gzip
  // stream) is a DataLossError.
  absl::StatusOr<size_t> read_bytes(void* dst, size_t n) {
    size_t done = 0;
    while (done < n) {
      const unsigned chunk = static_cast<unsigned>(std::min(n - done, kMaxGzRead));
      const int r = gzread(file_.get(), static_cast<char*>(dst) + done, chunk);
      if (r < 0 || (r == 0 && gz_failed())) return gz_error(done);
      done += static_cast<size_t>(r);
      if (r == 0) break;
    }
    // A short read may also come with an error (e.g. a gzip stream cut off mid-way).
    if (done < n && gz_failed()) return gz_error(done);
    total_read_ += done;
    return done;
  }

  bool gz_failed() const {
    int code = Z_OK;
    gzerror(file_.get(), &code);
    return code != Z_OK;
  }

  absl::Status gz_error(size_t partial) const {
    int code = Z_OK;
    const char* text = gzerror(file_.get(), &code);
    if (code == Z_ERRNO) text = std::strerror(errno);
    return absl::DataLossError(msg(absl::StrCat("corrupt or truncated gzip data (zlib: ", text ? text : "?",
                                                ") after ", total_read_ + partial, " bytes")));
  }

  template <typename U> static U load_be(const unsigned char* p) {
    U v = 0;
    for (size_t i = 0; i < sizeof(U); ++i) v = static_cast<U>((v << 8) | p[i]);
    return v;
  }

  absl::StatusOr<Tensor> to_tensor(const TypeInfo& type, const Shape& shape, const std::vector<unsigned char>& buf) {
    const size_t n = static_cast<size_t>(shape.num_elements());
    if (n == 0) return Tensor::from_host(type.dtype, shape, nullptr);  // nothing to copy
    switch (type.code) {
      case 0x08:
        return Tensor::from_host(DType::kUInt8, shape, buf.data());
      case 0x09: {
        std::vector<int32_t> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = static_cast<int8_t>(buf[i]);
        return Tensor::from_host(DType::kInt32, shape, v.data());
      }
      case 0x0B: {
        std::vector<int32_t> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = static_cast<int16_t>(load_be<uint16_t>(&buf[2 * i]));
        return Tensor::from_host(DType::kInt32, shape, v.data());
      }
      case 0x0C:
      case 0x0D: {
        std::vector<uint32_t> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = load_be<uint32_t>(&buf[4 * i]);
        // int32 and float32 share the bit pattern; from_host copies the bytes.
        return Tensor::from_host(type.dtype, shape, v.data());
      }
      default: {  // 0x0E
        std::vector<uint64_t> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = load_be<uint64_t>(&buf[8 * i]);
        return Tensor::from_host(DType::kFloat64, shape, v.data());
      }
    }
  }

  std::string path_;
  GzFile file_;
  uint64_t total_read_ = 0;
};

}  // namespace

Tensor read_idx(const std::string& path, std::source_location loc) {
  return value_or_throw(Reader(path).read(), loc);
}

}  // namespace tapeflow
