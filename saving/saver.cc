#include "saving/saver.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "eager/context.h"
#include "saving/file_io.h"
#include "saving/safetensors.h"

namespace tapeflow {

// Note [All or nothing restore]: restore runs in two phases. Phase 1 maps and decodes the file
// (which checks its structure and every CRC32C), finds each key, checks dtype and shape and
// copies each tensor into fresh storage on its variable's device; any failure throws here and
// nothing has changed. Phase 2 assigns: eager variables through Variable::assign (which cannot
// fail for a value of the right dtype and shape on the right device), a Session's variables in
// one Session::set_variable_values call, optimizer counters with set_iterations (checked >= 0
// in phase 1). The only state touched before phase 2 is the creation of missing eager optimizer
// slots as zeros, which is what their first update would create anyway.

struct Saver::Item {
  std::string key;
  std::optional<Variable> variable;     // a variable, slot or graph iterations counter
  nn::Optimizer* counter = nullptr;     // else: this optimizer's eager step counter
};

namespace {

constexpr char kIndexFile[] = "checkpoint";

absl::string_view av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// Rethrows a tapeflow error from a lower layer with `prefix` in front of its message, keeping
// its type (code), so callers catch the same DataLossError or NotFoundError.
[[noreturn]] void rethrow_with(const Error& e, std::string_view prefix, std::source_location loc) {
  throw_status(absl::Status(e.code(), absl::StrCat(av(prefix), e.message())), loc);
}

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
std::string base_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_graph_variable(const Variable& v) { return v.graph_info() != nullptr; }

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

// ---- construction ----

Saver::Saver(const std::vector<Variable>& var_list, SaverOptions options, std::source_location loc)
    : options_(options) {
  if (var_list.empty()) throw InvalidArgumentError("[Saver] no variables to save", loc);
  for (const Variable& v : var_list) {
    if (!variables_.emplace(v.name(), v).second)
      throw InvalidArgumentError(absl::StrCat("[Saver] two variables are named '", v.name(),
                                              "'; give them distinct names or pass a key -> variable map"),
                                 loc);
  }
  if (options_.max_to_keep < 0)
    throw InvalidArgumentError(absl::StrCat("[Saver] max_to_keep must be >= 0, got ", options_.max_to_keep), loc);
}

Saver::Saver(const std::map<std::string, Variable>& var_map, SaverOptions options, std::source_location loc)
    : variables_(var_map), options_(options) {
  if (var_map.empty()) throw InvalidArgumentError("[Saver] no variables to save", loc);
  for (const auto& [key, v] : var_map)
    if (key.empty() || key == "__metadata__")
      throw InvalidArgumentError(absl::StrCat("[Saver] '", key, "' cannot be a checkpoint key (variable '", v.name(),
                                              "')"),
                                 loc);
  if (options_.max_to_keep < 0)
    throw InvalidArgumentError(absl::StrCat("[Saver] max_to_keep must be >= 0, got ", options_.max_to_keep), loc);
}

void Saver::add_optimizer(nn::Optimizer& optimizer) {
  std::lock_guard lock(mu_);
  if (std::find(optimizers_.begin(), optimizers_.end(), &optimizer) == optimizers_.end())
    optimizers_.push_back(&optimizer);
}

void Saver::recover_last_checkpoints(const std::vector<std::string>& paths) {
  std::lock_guard lock(mu_);
  for (const std::string& p : paths) {
    if (!file_exists(p)) continue;
    std::erase(last_checkpoints_, p);
    last_checkpoints_.push_back(p);
  }
}

std::vector<std::string> Saver::last_checkpoints() const {
  std::lock_guard lock(mu_);
  return last_checkpoints_;
}

// The variables, then each optimizer's slots and counter. Eager slots that do not exist yet are
// created (Optimizer::build); a graph's must exist (minimize made them).
std::vector<Saver::Item> Saver::items(Session* session, const char* api, std::source_location loc) const {
  std::vector<Item> out;
  std::set<std::string> keys;
  auto add = [&](Item item) {
    if (!keys.insert(item.key).second)
      throw InvalidArgumentError(absl::StrCat("[", api, "] two entries have the checkpoint key '", item.key, "'"),
                                 loc);
    out.push_back(std::move(item));
  };
  for (const auto& [key, v] : variables_) add(Item{key, v, nullptr});
  for (nn::Optimizer* opt : optimizers_) {
    std::vector<Variable> eager_vars;
    for (const auto& [key, v] : variables_)
      if (!is_graph_variable(v)) eager_vars.push_back(v);
    {
      ContextGuard eager(&eager_context());  // slots of eager variables are eager variables
      opt->build(eager_vars);
    }
    for (const auto& [key, v] : variables_) {
      for (const std::string& slot : opt->slot_names()) {
        std::optional<Variable> s = opt->get_slot(v, slot);
        if (!s)
          throw FailedPreconditionError(absl::StrCat("[", api, "] optimizer '", opt->name(), "' has no slot '", slot,
                                                     "' for graph variable '", v.name(),
                                                     "' yet: build the train op (minimize) first"),
                                        loc);
        add(Item{absl::StrCat(key, "/", slot), *s, nullptr});
      }
    }
    const std::string counter_key = absl::StrCat(opt->name(), "/iterations");
    std::optional<Variable> graph_counter;
    if (session != nullptr) graph_counter = opt->iterations_variable(session->graph());
    if (graph_counter)
      add(Item{counter_key, *graph_counter, nullptr});
    else
      add(Item{counter_key, std::nullopt, opt});
  }
  return out;
}

std::vector<std::string> Saver::keys() const {
  std::vector<std::string> out;
  for (const Item& item : items(nullptr, "Saver.keys", std::source_location::current())) out.push_back(item.key);
  std::sort(out.begin(), out.end());
  return out;
}

// ---- save ----

std::string Saver::save(const std::string& prefix, std::optional<int64_t> global_step, std::source_location loc) {
  return save_impl(nullptr, prefix, global_step, loc);
}

std::string Saver::save(Session& session, const std::string& prefix, std::optional<int64_t> global_step,
                        std::source_location loc) {
  return save_impl(&session, prefix, global_step, loc);
}

std::string Saver::save_impl(Session* session, const std::string& prefix, std::optional<int64_t> global_step,
                             std::source_location loc) {
  if (prefix.empty() || prefix.back() == '/')
    throw InvalidArgumentError(absl::StrCat("[save] the prefix '", prefix, "' names no file"), loc);
  const std::string path =
      global_step ? absl::StrCat(prefix, "-", *global_step, ".safetensors") : absl::StrCat(prefix, ".safetensors");
  std::lock_guard lock(mu_);
  const std::vector<Item> all = items(session, "save", loc);

  // Read every value first; a Session's variables in one call, so they come from one moment.
  NamedTensors named(all.size());
  std::vector<Variable> from_session;
  std::vector<size_t> session_index;
  for (size_t i = 0; i < all.size(); ++i) {
    const Item& item = all[i];
    named[i].first = item.key;
    if (item.counter != nullptr) {
      named[i].second = Tensor(item.counter->iterations());
    } else if (is_graph_variable(*item.variable)) {
      if (session == nullptr)
        throw InvalidArgumentError(absl::StrCat("[save] ", path, ": variable '", item.variable->name(),
                                                "' is a graph variable; its value lives in a Session: "
                                                "call save(session, prefix, step)"),
                                   loc);
      from_session.push_back(*item.variable);
      session_index.push_back(i);
    } else {
      ContextGuard eager(&eager_context());  // a concrete read even while a graph is being built
      named[i].second = item.variable->read();
    }
  }
  if (!from_session.empty()) {
    std::vector<Tensor> values;
    try {
      values = session->variable_values(from_session, loc);
    } catch (const Error& e) {
      rethrow_with(e, absl::StrCat("[save] ", path, ": "), loc);
    }
    for (size_t j = 0; j < values.size(); ++j) named[session_index[j]].second = values[j];
  }

  SafetensorsMetadata metadata{{"format", "tapeflow.checkpoint"}};
  if (global_step) metadata["global_step"] = absl::StrCat(*global_step);
  try {
    SafetensorsPlan plan = plan_safetensors(named, metadata);
    std::vector<std::span<const std::byte>> chunks{as_bytes(plan.head)};
    chunks.insert(chunks.end(), plan.chunks.begin(), plan.chunks.end());
    write_file_atomically(path, chunks);
  } catch (const Error& e) {
    rethrow_with(e, absl::StrCat("[save] ", path, ": "), loc);
  }

  // Bookkeeping as TensorFlow's Saver: re-saving a path moves it to the end; beyond max_to_keep
  // the oldest files go. The index is rewritten (atomically) after the deletions.
  std::erase(last_checkpoints_, path);
  last_checkpoints_.push_back(path);
  if (options_.max_to_keep > 0) {
    while (static_cast<int>(last_checkpoints_.size()) > options_.max_to_keep) {
      try {
        remove_file(last_checkpoints_.front());
      } catch (const Error& e) {
        rethrow_with(e, "[save] deleting an old checkpoint: ", loc);
      }
      last_checkpoints_.erase(last_checkpoints_.begin());
    }
  }
  const std::string dir = dir_of(path);
  std::vector<std::string> relative;
  for (const std::string& p : last_checkpoints_) relative.push_back(dir_of(p) == dir ? base_of(p) : p);
  try {
    write_file_atomically(absl::StrCat(dir, "/", kIndexFile), format_checkpoint_index(base_of(path), relative));
  } catch (const Error& e) {
    rethrow_with(e, "[save] writing the checkpoint index: ", loc);
  }
  return path;
}

// ---- restore ----

void Saver::restore(const std::string& path, std::source_location loc) { restore_impl(nullptr, path, loc); }

void Saver::restore(Session& session, const std::string& path, std::source_location loc) {
  restore_impl(&session, path, loc);
}

void Saver::restore_impl(Session* session, const std::string& path, std::source_location loc) {
  const std::string where = absl::StrCat("[restore] ", path, ": ");
  const std::vector<Item> all = items(session, "restore", loc);
  // Phase 1 (Note [All or nothing restore]): read, check, and stage every value.
  MappedFile mapping;
  SafetensorsFile file;
  try {
    mapping = MappedFile::open(path);
    // The checksums are checked as the tensors are copied (Note [Checked copy]).
    file = decode_safetensors(mapping.bytes(), path, {.verify_checksums = false});
  } catch (const Error& e) {
    rethrow_with(e, "[restore] ", loc);
  }
  std::set<std::string_view> copied;
  std::vector<Tensor> staged(all.size());
  std::vector<std::pair<Variable, Tensor>> to_session;
  for (size_t i = 0; i < all.size(); ++i) {
    const Item& item = all[i];
    const std::string what = item.counter != nullptr
                                 ? absl::StrCat("the step counter of optimizer '", item.counter->name(), "'")
                                 : absl::StrCat("variable '", item.variable->name(), "'");
    const auto it = file.tensors.find(item.key);
    if (it == file.tensors.end()) {
      std::vector<std::string> present;
      for (const auto& [name, entry] : file.tensors) present.push_back(name);
      throw NotFoundError(absl::StrCat(where, what, " (key '", item.key, "') is not in the checkpoint; it holds: ",
                                       absl::StrJoin(present, ", ")),
                          loc);
    }
    const SafetensorsEntry& entry = it->second;
    const DType want_dtype = item.counter != nullptr ? DType::kInt64 : item.variable->dtype();
    const Shape want_shape = item.counter != nullptr ? Shape{} : item.variable->shape();
    DType got_dtype;
    const bool known = to_dtype(entry.dtype, &got_dtype);
    const Shape got_shape(entry.shape);
    if (!known || got_dtype != want_dtype || !want_shape.is_compatible_with(got_shape))
      throw InvalidArgumentError(absl::StrCat(where, what, " (key '", item.key, "') has dtype ",
                                              dtype_name(want_dtype), " and shape ", want_shape.to_string(),
                                              "; the checkpoint holds ", safetensors_dtype_name(entry.dtype), " ",
                                              got_shape.to_string()),
                                 loc);
    Device* device = item.variable && !is_graph_variable(*item.variable) ? item.variable->device() : nullptr;
    try {
      ContextGuard eager(&eager_context());
      staged[i] = to_tensor_verified(entry, path, device);  // the one copy: mapping -> variable storage
    } catch (const DataLossError& e) {
      rethrow_with(e, "[restore] ", loc);  // as when decode_safetensors checked it
    } catch (const Error& e) {
      rethrow_with(e, where, loc);
    }
    copied.insert(item.key);
    if (item.counter != nullptr && staged[i].item<int64_t>() < 0)
      throw DataLossError(absl::StrCat(where, what, " is negative (", staged[i].item<int64_t>(), ")"), loc);
    if (item.variable && is_graph_variable(*item.variable)) {
      if (session == nullptr)
        throw InvalidArgumentError(absl::StrCat(where, what, " is a graph variable; its value lives in a Session: ",
                                                "call restore(session, path)"),
                                   loc);
      to_session.emplace_back(*item.variable, staged[i]);
    }
  }
  // Every checksum of the file is checked, of tensors nobody restores too.
  try {
    for (const auto& [name, entry] : file.tensors)
      if (!copied.count(name)) verify_checksum(entry, path);
  } catch (const Error& e) {
    rethrow_with(e, "[restore] ", loc);
  }
  // Phase 2: assign. The Session first: it is the one call that checks (graph membership).
  if (!to_session.empty()) {
    try {
      session->set_variable_values(to_session, loc);
    } catch (const Error& e) {
      rethrow_with(e, where, loc);
    }
  }
  ContextGuard eager(&eager_context());
  for (size_t i = 0; i < all.size(); ++i) {
    const Item& item = all[i];
    if (item.counter != nullptr)
      item.counter->set_iterations(staged[i].item<int64_t>(), loc);
    else if (!is_graph_variable(*item.variable))
      Variable(*item.variable).assign(staged[i], loc);
  }
}

// ---- the index ----

std::string format_checkpoint_index(const std::string& latest, const std::vector<std::string>& all) {
  std::string out = absl::StrCat("model_checkpoint_path: ", quote(latest), "\n");
  for (const std::string& p : all) absl::StrAppend(&out, "all_model_checkpoint_paths: ", quote(p), "\n");
  return out;
}

std::pair<std::string, std::vector<std::string>> parse_checkpoint_index(std::string_view text, std::string_view file) {
  std::optional<std::string> latest;
  std::vector<std::string> all;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty()) continue;
    auto bad = [&](std::string_view why) {
      throw DataLossError(absl::StrCat("[latest_checkpoint] ", av(file), ":", line_no, ": ", av(why)));
    };
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) bad("expected 'key: \"path\"'");
    const std::string_view key = line.substr(0, colon);
    std::string_view rest = line.substr(colon + 1);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (rest.size() < 2 || rest.front() != '"' || rest.back() != '"') bad("the path is not a quoted string");
    std::string value;
    for (size_t i = 1; i + 1 < rest.size(); ++i) {
      char c = rest[i];
      if (c == '\\') {
        if (i + 2 >= rest.size()) bad("a dangling backslash");
        c = rest[++i];
        if (c == 'n') c = '\n';
      } else if (c == '"') {
        bad("an unescaped quote");
      }
      value += c;
    }
    if (key == "model_checkpoint_path")
      latest = std::move(value);
    else if (key == "all_model_checkpoint_paths")
      all.push_back(std::move(value));
    // Other keys (TensorFlow's timestamps) are ignored.
  }
  if (!latest) throw DataLossError(absl::StrCat("[latest_checkpoint] ", av(file), ": no model_checkpoint_path"));
  return {*latest, all};
}

std::optional<std::string> latest_checkpoint(const std::string& dir) {
  const std::string index = absl::StrCat(dir, "/", kIndexFile);
  if (!file_exists(index)) return std::nullopt;
  const std::string latest = parse_checkpoint_index(read_small_file(index), index).first;
  if (!latest.empty() && latest.front() == '/') return latest;
  return absl::StrCat(dir, "/", latest);
}

}  // namespace tapeflow
