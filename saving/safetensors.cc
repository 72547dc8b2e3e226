#include "saving/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/errors.h"
#include "devices/device.h"
#include "saving/crc32c.h"

// Note [Safetensors layout]: the file is
//   bytes [0, 8)        N, the header length, a little-endian u64
//   bytes [8, 8 + N)    the JSON header, padded with spaces so that 8 + N is a multiple of 8
//                       (the data section then starts aligned for every dtype)
//   bytes [8 + N, end)  the data section: each tensor's bytes at [begin, end) of data_offsets,
//                       relative to the data section; together the ranges tile it exactly
// Tensor bytes are stored as they lie in memory; that is the format's little-endian order only
// on a little-endian host, which we require.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

namespace tapeflow {
namespace {

using json = nlohmann::json;

constexpr std::string_view kMetadataKey = "__metadata__";
constexpr std::string_view kCrcPrefix = "crc32c:";
// The reference implementation's limit; it bounds the JSON parse of a hostile file.
constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;

struct DTypeInfo {
  SafetensorsDType dtype;
  const char* name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {SafetensorsDType::kF64, "F64", 8}, {SafetensorsDType::kF32, "F32", 4}, {SafetensorsDType::kF16, "F16", 2},
    {SafetensorsDType::kBF16, "BF16", 2}, {SafetensorsDType::kI64, "I64", 8}, {SafetensorsDType::kI32, "I32", 4},
    {SafetensorsDType::kI16, "I16", 2}, {SafetensorsDType::kI8, "I8", 1}, {SafetensorsDType::kU8, "U8", 1},
    {SafetensorsDType::kBool, "BOOL", 1},
};

absl::string_view av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// Error builders: "[safetensors] <file>: <what>".
template <typename... Args>
[[noreturn]] void data_loss(std::string_view file, const Args&... args) {
  throw DataLossError(absl::StrCat("[safetensors] ", av(file), ": ", args...));
}
template <typename... Args>
[[noreturn]] void invalid(std::string_view file, const Args&... args) {
  throw InvalidArgumentError(absl::StrCat("[safetensors] ", av(file), ": ", args...));
}

std::string hex32(uint32_t v) { return absl::StrFormat("%08x", v); }

// Checked arithmetic: false on overflow.
bool mul_ok(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_mul_overflow(a, b, out); }

std::span<const std::byte> host_bytes(const Tensor& t, std::vector<std::vector<std::byte>>& staged) {
  const DeviceTensor& d = t.device_tensor();
  const size_t n = d.bytes();
  if (n == 0) return {};
  if (d.device() != nullptr && d.device()->host_accessible())
    return {static_cast<const std::byte*>(d.raw()), n};
  staged.emplace_back(n);
  t.copy_to_host(staged.back().data());
  return {staged.back().data(), n};
}

}  // namespace

const char* safetensors_dtype_name(SafetensorsDType dt) { return kDTypes[static_cast<int>(dt)].name; }
size_t safetensors_dtype_size(SafetensorsDType dt) { return kDTypes[static_cast<int>(dt)].size; }

SafetensorsDType to_safetensors_dtype(DType dt) {
  switch (dt) {
    case DType::kFloat32: return SafetensorsDType::kF32;
    case DType::kFloat64: return SafetensorsDType::kF64;
    case DType::kInt32: return SafetensorsDType::kI32;
    case DType::kInt64: return SafetensorsDType::kI64;
    case DType::kUInt8: return SafetensorsDType::kU8;
    case DType::kBool: break;
  }
  return SafetensorsDType::kBool;
}

bool to_dtype(SafetensorsDType dt, DType* out) {
  switch (dt) {
    case SafetensorsDType::kF32: *out = DType::kFloat32; return true;
    case SafetensorsDType::kF64: *out = DType::kFloat64; return true;
    case SafetensorsDType::kI32: *out = DType::kInt32; return true;
    case SafetensorsDType::kI64: *out = DType::kInt64; return true;
    case SafetensorsDType::kU8: *out = DType::kUInt8; return true;
    case SafetensorsDType::kBool: *out = DType::kBool; return true;
    default: return false;
  }
}

std::string crc32c_metadata_key(std::string_view name) { return absl::StrCat(av(kCrcPrefix), av(name)); }

const SafetensorsEntry& SafetensorsFile::at(const std::string& name, std::string_view file) const {
  const auto it = tensors.find(name);
  if (it == tensors.end())
    throw NotFoundError(absl::StrCat("[safetensors] ", av(file), ": no tensor '", name, "'"));
  return it->second;
}

size_t SafetensorsPlan::total_bytes() const {
  size_t n = head.size();
  for (const auto& c : chunks) n += c.size();
  return n;
}

// ---- encoding ----

SafetensorsPlan plan_safetensors(const NamedTensors& tensors, const SafetensorsMetadata& metadata) {
  constexpr std::string_view where = "<encode>";
  SafetensorsPlan plan;
  json header = json::object();  // std::map inside: keys sorted, as Python's writer sorts them
  json meta = json::object();
  for (const auto& [key, value] : metadata) {
    if (key.starts_with(kCrcPrefix))
      invalid(where, "metadata key '", key, "' is reserved for the per-tensor checksums");
    meta[key] = value;
  }
  std::set<std::string_view> seen;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name.empty() || name == kMetadataKey) invalid(where, "a tensor cannot be named '", name, "'");
    if (!seen.insert(name).second) invalid(where, "tensor '", name, "' given twice");
    if (!t.defined() || t.is_symbolic())
      invalid(where, "tensor '", name, "' has no value (", t.defined() ? "a symbolic graph tensor" : "empty", ")");
    const std::span<const std::byte> bytes = host_bytes(t, plan.staged);
    plan.chunks.push_back(bytes);
    json shape = json::array();
    for (int64_t d : t.shape().dims()) shape.push_back(static_cast<uint64_t>(d));
    header[name] = {{"dtype", safetensors_dtype_name(to_safetensors_dtype(t.dtype()))},
                    {"shape", std::move(shape)},
                    {"data_offsets", {offset, offset + bytes.size()}}};
    offset += bytes.size();
    meta[crc32c_metadata_key(name)] = hex32(crc32c(bytes));
  }
  header[std::string(kMetadataKey)] = std::move(meta);
  std::string text;
  try {
    text = header.dump(-1, ' ', false, json::error_handler_t::strict);
  } catch (const json::exception& e) {
    invalid(where, "a tensor name or metadata string is not valid UTF-8 (", e.what(), ")");
  }
  text.append((8 - (text.size() % 8)) % 8, ' ');
  const uint64_t n = text.size();
  plan.head.resize(8);
  std::memcpy(plan.head.data(), &n, 8);  // little-endian host (static_assert above)
  plan.head += text;
  return plan;
}

std::string encode_safetensors(const NamedTensors& tensors, const SafetensorsMetadata& metadata) {
  const SafetensorsPlan plan = plan_safetensors(tensors, metadata);
  std::string out;
  out.reserve(plan.total_bytes());
  out += plan.head;
  for (const auto& c : plan.chunks) out.append(reinterpret_cast<const char*>(c.data()), c.size());
  return out;
}

// ---- decoding ----

namespace {

// A non-negative JSON integer, or false.
bool as_u64(const json& v, uint64_t* out) {
  if (!v.is_number_unsigned()) return false;
  *out = v.get<uint64_t>();
  return true;
}

struct Parsed {
  json header;
  std::vector<std::string> duplicates;
};

// Parses the header, recording top-level keys seen twice (nlohmann keeps the last silently).
Parsed parse_header(std::string_view text, std::string_view file) {
  Parsed p;
  std::set<std::string> keys;
  auto callback = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1) {
      const std::string& k = parsed.get_ref<const std::string&>();
      if (!keys.insert(k).second) p.duplicates.push_back(k);
    }
    return true;
  };
  try {
    p.header = json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/true);
  } catch (const json::exception& e) {
    data_loss(file, "the header is not valid JSON (", e.what(), ")");
  }
  return p;
}

// One tensor's entry, its view into `data` set; *begin_out is where the view starts.
SafetensorsEntry parse_entry(const std::string& name, const json& v, std::string_view file,
                             std::span<const std::byte> data, uint64_t* begin_out) {
  const uint64_t data_size = data.size();
  SafetensorsEntry e;
  e.name = name;
  if (!v.is_object()) invalid(file, "tensor '", name, "': the entry is not a JSON object");
  const auto dt = v.find("dtype");
  if (dt == v.end() || !dt->is_string()) invalid(file, "tensor '", name, "': no \"dtype\" string");
  const std::string& dname = dt->get_ref<const std::string&>();
  const auto info = std::find_if(std::begin(kDTypes), std::end(kDTypes),
                                 [&](const DTypeInfo& i) { return dname == i.name; });
  if (info == std::end(kDTypes)) invalid(file, "tensor '", name, "': unknown dtype '", dname, "'");
  e.dtype = info->dtype;

  const auto sh = v.find("shape");
  if (sh == v.end() || !sh->is_array()) invalid(file, "tensor '", name, "': no \"shape\" array");
  uint64_t count = 1;
  for (const json& d : *sh) {
    uint64_t dim = 0;
    if (!as_u64(d, &dim)) invalid(file, "tensor '", name, "': shape ", sh->dump(), " has a non-integer or negative dim");
    if (dim > uint64_t(std::numeric_limits<int64_t>::max()) || !mul_ok(count, dim, &count) ||
        count > uint64_t(std::numeric_limits<int64_t>::max()))
      invalid(file, "tensor '", name, "': the element count of shape ", sh->dump(), " overflows");
    e.shape.push_back(static_cast<int64_t>(dim));
  }
  uint64_t expected = 0;
  if (!mul_ok(count, info->size, &expected))
    invalid(file, "tensor '", name, "': the byte size of shape ", sh->dump(), " overflows");

  const auto off = v.find("data_offsets");
  uint64_t begin = 0, end = 0;
  if (off == v.end() || !off->is_array() || off->size() != 2 || !as_u64((*off)[0], &begin) ||
      !as_u64((*off)[1], &end))
    invalid(file, "tensor '", name, "': \"data_offsets\" is not [begin, end]");
  if (begin > end || end > data_size)
    data_loss(file, "tensor '", name, "': data_offsets [", begin, ", ", end, "] lie outside the data section of ",
              data_size, " bytes (truncated file?)");
  if (end - begin != expected)
    data_loss(file, "tensor '", name, "': data_offsets [", begin, ", ", end, "] hold ", end - begin, " bytes but ",
              info->name, " ", sh->dump(), " needs ", expected);
  e.data = data.subspan(begin, expected);
  *begin_out = begin;
  return e;
}

void check_bool_bytes(const SafetensorsEntry& e, std::string_view file) {
  for (size_t i = 0; i < e.data.size(); ++i)
    if (static_cast<unsigned char>(e.data[i]) > 1)
      data_loss(file, "tensor '", e.name, "': BOOL element ", i, " is byte ",
                static_cast<int>(static_cast<unsigned char>(e.data[i])), ", not 0 or 1");
}

}  // namespace

SafetensorsFile decode_safetensors(std::span<const std::byte> bytes, std::string_view file,
                                   const DecodeOptions& options) {
  if (bytes.size() < 8) data_loss(file, "only ", bytes.size(), " bytes; a safetensors file starts with 8");
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  if (n > bytes.size() - 8)
    data_loss(file, "the header length ", n, " goes beyond the file's ", bytes.size(), " bytes (truncated file?)");
  if (n > kMaxHeaderBytes) data_loss(file, "the header length ", n, " exceeds the limit of ", kMaxHeaderBytes);
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + 8, n);
  Parsed parsed = parse_header(text, file);
  if (!parsed.header.is_object()) data_loss(file, "the header is not a JSON object");
  if (!parsed.duplicates.empty()) data_loss(file, "tensor '", parsed.duplicates.front(), "' appears twice in the header");

  const std::span<const std::byte> data = bytes.subspan(8 + n);
  SafetensorsFile out;
  std::vector<std::pair<uint64_t, const SafetensorsEntry*>> ranges;
  for (const auto& [key, value] : parsed.header.items()) {
    if (key == kMetadataKey) {
      if (!value.is_object()) invalid(file, "\"__metadata__\" is not a JSON object");
      for (const auto& [mk, mv] : value.items()) {
        if (!mv.is_string()) invalid(file, "metadata '", mk, "' is not a string");
        out.metadata[mk] = mv.get<std::string>();
      }
      continue;
    }
    uint64_t begin = 0;
    SafetensorsEntry e = parse_entry(key, value, file, data, &begin);
    const auto it = out.tensors.emplace(key, std::move(e)).first;
    ranges.emplace_back(begin, &it->second);
  }
  // The ranges must tile the data section (Note [Safetensors layout]).
  std::sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second->data.size() < b.second->data.size();
  });
  uint64_t covered = 0;
  for (const auto& [begin, entry] : ranges) {
    if (begin < covered)
      data_loss(file, "tensor '", entry->name, "': data_offsets starting at ", begin,
                " overlap the previous tensor, which ends at ", covered);
    if (begin > covered)
      data_loss(file, "bytes [", covered, ", ", begin, ") of the data section belong to no tensor (before '",
                entry->name, "')");
    covered = begin + entry->data.size();
  }
  if (covered != data.size())
    data_loss(file, "bytes [", covered, ", ", data.size(), ") of the data section belong to no tensor");

  for (auto& [name, entry] : out.tensors)
    if (entry.dtype == SafetensorsDType::kBool) check_bool_bytes(entry, file);

  // Checksums: each "crc32c:<name>" must name a tensor of the file and match its bytes.
  for (const auto& [key, value] : out.metadata) {
    if (!key.starts_with(kCrcPrefix)) continue;
    const std::string name = key.substr(kCrcPrefix.size());
    const auto it = out.tensors.find(name);
    if (it == out.tensors.end()) data_loss(file, "a checksum names tensor '", name, "', which the file lacks");
    it->second.checksummed = true;
    it->second.crc32c = value;
    if (options.verify_checksums) verify_checksum(it->second, file);
  }
  return out;
}

namespace {

[[noreturn]] void crc_mismatch(const SafetensorsEntry& e, std::string_view file, uint32_t actual) {
  data_loss(file, "tensor '", e.name, "': CRC32C mismatch (stored ", e.crc32c, ", computed ", hex32(actual), ")");
}

}  // namespace

void verify_checksum(const SafetensorsEntry& entry, std::string_view file) {
  if (!entry.checksummed) return;
  const uint32_t actual = crc32c(entry.data);
  if (entry.crc32c != hex32(actual)) crc_mismatch(entry, file, actual);
}

Tensor to_tensor(const SafetensorsEntry& entry, std::string_view file, Device* device) {
  DType dt;
  if (!to_dtype(entry.dtype, &dt))
    invalid(file, "tensor '", entry.name, "' has dtype ", safetensors_dtype_name(entry.dtype),
            ", which tapeflow does not support");
  return Tensor::from_host(dt, Shape(entry.shape), entry.data.empty() ? nullptr : entry.data.data(), device);
}

// Note [Checked copy]: restoring a tensor reads its bytes twice if the checksum and the copy
// are separate passes, and the second read of a large tensor comes from memory again.
// crc32c_copy checksums each 8-byte word on its way from the mapping into the tensor's storage:
// one pass, in which the crc32 instruction (8 bytes a cycle) keeps up with the copy. Copying
// 32 KiB blocks and checksumming each in the cache made the copy and the checksum 70% of
// loading the CNN bundle (0.88 and 0.51 ms of 2.0); docs/performance.md has the figures.
Tensor to_tensor_verified(const SafetensorsEntry& entry, std::string_view file, Device* device) {
  if (!entry.checksummed) return to_tensor(entry, file, device);
  if (entry.data.empty()) {
    verify_checksum(entry, file);
    return to_tensor(entry, file, device);
  }
  DType dt;
  if (!to_dtype(entry.dtype, &dt))
    invalid(file, "tensor '", entry.name, "' has dtype ", safetensors_dtype_name(entry.dtype),
            ", which tapeflow does not support");
  Tensor t = Tensor::from_host(dt, Shape(entry.shape), nullptr, device);  // allocated, not filled
  const DeviceTensor& d = t.device_tensor();
  if (d.device() == nullptr || !d.device()->host_accessible()) {  // a GPU: check, then copy
    verify_checksum(entry, file);
    return to_tensor(entry, file, device);
  }
  const uint32_t crc = crc32c_copy(0, static_cast<std::byte*>(d.raw()), entry.data);
  if (entry.crc32c != hex32(crc)) crc_mismatch(entry, file, crc);
  return t;
}

}  // namespace tapeflow
