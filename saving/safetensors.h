// safetensors: Hugging Face's tensor file format, as a pair of pure functions over bytes.
//
//   std::string bytes = encode_safetensors({{"w", w.read()}, {"b", b.read()}}, {{"step", "10"}});
//   SafetensorsFile file = decode_safetensors(as_bytes(bytes), "model.safetensors");
//   const SafetensorsEntry& w = file.at("w");      // dtype, shape, a view of its bytes
//   Tensor t = to_tensor(w, "model.safetensors");  // one copy, into a tensor's own storage
//
// Layout (the published format; Note [Safetensors layout]):
//   [u64 little-endian N][N bytes of UTF-8 JSON, padded with spaces to a multiple of 8][data]
//   JSON: {"name": {"dtype": "F32", "shape": [2,3], "data_offsets": [begin, end]}, ...,
//          "__metadata__": {"key": "value", ...}}   (metadata values are strings only)
// Offsets are relative to the start of the data section; data is little-endian, row-major.
//
// Our writer adds one CRC32C per tensor to __metadata__ ("crc32c:<name>": 8 lowercase hex
// digits); the reader checks every checksum present (files from other writers have none, and
// load without a check). The reader treats its input as hostile: every malformed input is a
// DataLossError (damaged bytes) or an InvalidArgumentError (a well-formed file we cannot use),
// whose message starts with "[safetensors] <file>:" and names the tensor. It never crashes and
// never reads outside the span it was given.
//
// All functions are pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "eager/tensor.h"

namespace tapeflow {

// The format's element types. Only some have a tapeflow DType (to_dtype); the others decode
// (their bytes are checked) but cannot become Tensors.
enum class SafetensorsDType : uint8_t { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };

// "F32", "BOOL", ...
const char* safetensors_dtype_name(SafetensorsDType dt);
size_t safetensors_dtype_size(SafetensorsDType dt);
// The safetensors type of a tapeflow dtype (every tapeflow dtype has one).
SafetensorsDType to_safetensors_dtype(DType dt);
// false when tapeflow has no such dtype (F16, BF16, I16, I8).
bool to_dtype(SafetensorsDType dt, DType* out);

// One tensor of a decoded file. `data` points into the decoded span (no copy): it is valid
// while that memory is (a MappedFile, a std::string).
struct SafetensorsEntry {
  std::string name;
  SafetensorsDType dtype = SafetensorsDType::kF32;
  std::vector<int64_t> shape;
  std::span<const std::byte> data;
  bool checksummed = false;  // a "crc32c:<name>" entry was present (and matched, when verified)
  std::string crc32c;        // that entry's value as stored (8 lowercase hex digits), "" when none
};

struct SafetensorsFile {
  std::map<std::string, SafetensorsEntry> tensors;  // by name
  std::map<std::string, std::string> metadata;      // __metadata__, our checksums included

  bool contains(const std::string& name) const { return tensors.count(name) != 0; }
  // NotFoundError "[safetensors] <file>: no tensor '<name>'" when absent.
  const SafetensorsEntry& at(const std::string& name, std::string_view file = "<memory>") const;
};

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using SafetensorsMetadata = std::map<std::string, std::string>;

// The metadata key that holds `name`'s checksum.
std::string crc32c_metadata_key(std::string_view name);

// Encodes `tensors` (concrete; any device: non-host tensors are copied to the host) with
// `metadata` and a CRC32C per tensor. InvalidArgumentError for an empty or duplicate name, a
// name "__metadata__", a symbolic tensor, or a metadata key that starts with "crc32c:".
std::string encode_safetensors(const NamedTensors& tensors, const SafetensorsMetadata& metadata = {});

// What encode_safetensors writes, split so that a file writer can stream the tensor bytes
// straight from their storage instead of building one large string (saving/file_io.h).
// `chunks` point into the tensors' own storage (host devices) or into `staged`: keep the
// tensors and the plan alive while writing.
struct SafetensorsPlan {
  std::string head;                          // the 8-byte length and the padded header
  std::vector<std::span<const std::byte>> chunks;  // each tensor's bytes, in file order
  std::vector<std::vector<std::byte>> staged;      // host copies of non-host tensors (owned)
  size_t total_bytes() const;
};
SafetensorsPlan plan_safetensors(const NamedTensors& tensors, const SafetensorsMetadata& metadata = {});

struct DecodeOptions {
  bool verify_checksums = true;  // check each "crc32c:<name>" against the tensor's bytes
};

// Decodes and validates a whole file held in `bytes`; `file` names it in errors.
// DataLossError: shorter than 8 bytes, a header length beyond the input, a header that is not
// a JSON object, offsets outside the data, overlapping, or leaving bytes of the data section
// uncovered, a byte count that differs from dtype size x shape product, a BOOL byte other than
// 0 or 1, a checksum mismatch, a duplicate name. InvalidArgumentError: an unknown dtype, a
// shape whose product overflows, a malformed entry (missing or mistyped fields), non-string
// metadata.
SafetensorsFile decode_safetensors(std::span<const std::byte> bytes, std::string_view file = "<memory>",
                                   const DecodeOptions& options = {});

// A tensor holding a copy of `entry`'s bytes, on `device` (null: the default device).
// InvalidArgumentError for a dtype tapeflow does not have (F16, BF16, I16, I8).
Tensor to_tensor(const SafetensorsEntry& entry, std::string_view file = "<memory>", Device* device = nullptr);

// The same, checking the entry's stored CRC32C (when it has one) in the same pass: each block
// is copied and then checksummed while it is in the cache (Note [Checked copy]), so a file
// decoded with verify_checksums = false is read once instead of twice. DataLossError, with
// decode_safetensors' message, on a mismatch; no tensor is returned then.
Tensor to_tensor_verified(const SafetensorsEntry& entry, std::string_view file = "<memory>", Device* device = nullptr);

// Checks one entry's stored CRC32C against its bytes (what decode_safetensors does for every
// entry when verify_checksums is set): for entries a reader does not copy with
// to_tensor_verified. DataLossError on a mismatch.
void verify_checksum(const SafetensorsEntry& entry, std::string_view file = "<memory>");

inline std::span<const std::byte> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace tapeflow
