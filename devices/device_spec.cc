#include "devices/device_spec.h"

#include <cctype>
#include <charconv>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tapeflow {

namespace {

absl::string_view to_absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

absl::Status bad_spec(std::string_view spec, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("Malformed device specification '", to_absl(spec),
                                                 "': ", to_absl(why)));
}

bool parse_index(std::string_view text, int* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && *out >= 0;
}

// TensorFlow's job names: a letter, then letters, digits, '_' and '-' ([a-zA-Z][_a-zA-Z0-9-]*).
bool valid_name(std::string_view name) {
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

std::string canonical_type(std::string_view type) {
  std::string t(type);
  // TensorFlow upper-cases the well-known legacy lower-case types.
  if (absl::AsciiStrToLower(t) == "cpu" || absl::AsciiStrToLower(t) == "gpu") {
    t = absl::AsciiStrToUpper(t);
  }
  return t;
}

}  // namespace

absl::StatusOr<DeviceSpec> DeviceSpec::parse(std::string_view spec) {
  DeviceSpec out;
  std::vector<absl::string_view> parts = absl::StrSplit(to_absl(spec), '/');
  for (absl::string_view part_a : parts) {
    std::string_view part(part_a.data(), part_a.size());
    if (part.empty()) continue;
    std::vector<absl::string_view> kv = absl::StrSplit(part_a, ':');
    const std::string key = absl::AsciiStrToLower(kv[0]);
    auto field = [&](size_t i) { return std::string_view(kv[i].data(), kv[i].size()); };
    if (key == "job") {
      if (kv.size() != 2 || !valid_name(field(1)))
        return bad_spec(spec, absl::StrCat("'", part_a, "' needs a job name, as in /job:ps"));
      if (out.job) return bad_spec(spec, "job given twice");
      out.job = std::string(field(1));
    } else if (key == "replica" || key == "task") {
      int idx;
      if (kv.size() != 2 || !parse_index(field(1), &idx))
        return bad_spec(spec, absl::StrCat("'", part_a, "' needs a non-negative integer, as in /", key, ":0"));
      auto& slot = key == "replica" ? out.replica : out.task;
      if (slot) return bad_spec(spec, absl::StrCat(key, " given twice"));
      slot = idx;
    } else if (key == "device") {
      if (kv.size() < 2 || kv.size() > 3 || !valid_name(field(1)))
        return bad_spec(spec, absl::StrCat("'", part_a, "' must look like device:GPU:0 or device:CPU:*"));
      if (out.device_type) return bad_spec(spec, "device given twice");
      out.device_type = canonical_type(field(1));
      if (kv.size() == 3 && field(2) != "*") {
        int idx;
        if (!parse_index(field(2), &idx))
          return bad_spec(spec, absl::StrCat("device index '", kv[2], "' is not a non-negative integer"));
        out.device_index = idx;
      }
    } else if (kv.size() == 2 && valid_name(field(0)) && key != "") {
      // Legacy short form: /cpu:0, /gpu:1, /GPU:*.
      if (key != "cpu" && key != "gpu")
        return bad_spec(spec, absl::StrCat("unknown field '", kv[0],
                                           "' (expected job, replica, task, device, cpu or gpu)"));
      if (out.device_type) return bad_spec(spec, "device given twice");
      out.device_type = canonical_type(field(0));
      if (field(1) != "*") {
        int idx;
        if (!parse_index(field(1), &idx))
          return bad_spec(spec, absl::StrCat("device index '", kv[1], "' is not a non-negative integer"));
        out.device_index = idx;
      }
    } else {
      return bad_spec(spec, absl::StrCat("cannot parse '", part_a, "'"));
    }
  }
  return out;
}

std::string DeviceSpec::to_string() const {
  std::string out;
  if (job) absl::StrAppend(&out, "/job:", *job);
  if (replica) absl::StrAppend(&out, "/replica:", *replica);
  if (task) absl::StrAppend(&out, "/task:", *task);
  if (device_type) {
    absl::StrAppend(&out, "/device:", *device_type, ":");
    if (device_index) absl::StrAppend(&out, *device_index); else out += "*";
  }
  return out;
}

DeviceSpec DeviceSpec::merged_with(const DeviceSpec& inner) const {
  DeviceSpec out = *this;
  if (inner.job) out.job = inner.job;
  if (inner.replica) out.replica = inner.replica;
  if (inner.task) out.task = inner.task;
  // Field by field, as TensorFlow's DeviceSpec.make_merged_spec: an inner spec without an
  // index keeps the outer index even when it names another type ("/gpu:1" + "/cpu:*" = CPU:1).
  if (inner.device_type) out.device_type = inner.device_type;
  if (inner.device_index) out.device_index = inner.device_index;
  return out;
}

bool DeviceSpec::is_compatible_with(const DeviceSpec& o) const {
  auto agree = [](const auto& a, const auto& b) { return !a || !b || *a == *b; };
  return agree(job, o.job) && agree(replica, o.replica) && agree(task, o.task) &&
         agree(device_type, o.device_type) && agree(device_index, o.device_index);
}

const DeviceSpec& SharedDeviceSpec::get() const {
  static const DeviceSpec kEmpty;
  return spec_ ? *spec_ : kEmpty;
}

}  // namespace tapeflow
