#include "graph/trace_events.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"

namespace tapeflow {
namespace {

// ordered_json keeps keys in the order written, so the text is deterministic and reads like
// TensorFlow's timeline ("name", "cat", "ph", "ts", "dur", "pid", "tid", "args").
using Json = nlohmann::ordered_json;

std::string dump(const Json& j) {
  // Node names come from users: replace invalid UTF-8 instead of throwing halfway through.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

std::string to_chrome_trace(const StepStats& stats) {
  for (const NodeExecStats& s : stats.nodes) {
    if (s.start_micros < 0 || s.duration_nanos < 0)
      throw InvalidArgumentError(absl::StrCat("[to_chrome_trace] step statistics of node '", s.node_name,
                                              "' have a negative start (", s.start_micros,
                                              " us) or duration (", s.duration_nanos, " ns)"));
  }
  // Events in start order (ties by name): the stats are in completion order, which differs from
  // run to run when threads race; viewers sort anyway, but diffs of two traces should not.
  std::vector<const NodeExecStats*> events;
  for (const NodeExecStats& s : stats.nodes) events.push_back(&s);
  std::stable_sort(events.begin(), events.end(), [](const NodeExecStats* a, const NodeExecStats* b) {
    return std::tie(a->start_micros, a->node_name) < std::tie(b->start_micros, b->node_name);
  });

  // pid: devices in name order, so a device keeps its pid across traces of one graph. tid: per
  // device, threads in order of their first event (thread_id is a hash, meaningless to a reader).
  std::map<std::string, int> pids;
  for (const NodeExecStats* s : events) pids.emplace(s->device, 0);
  int next_pid = 0;
  for (auto& [device, pid] : pids) pid = next_pid++;
  std::map<std::string, std::vector<size_t>> threads;  // device -> thread ids, in tid order
  auto tid_of = [&](const NodeExecStats& s) {
    std::vector<size_t>& ids = threads[s.device];
    auto it = std::find(ids.begin(), ids.end(), s.thread_id);
    if (it != ids.end()) return static_cast<int>(it - ids.begin());
    ids.push_back(s.thread_id);
    return static_cast<int>(ids.size() - 1);
  };

  std::vector<Json> out;
  for (const auto& [device, pid] : pids) {
    out.push_back(Json{{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0},
                       {"args", {{"name", device.empty() ? std::string("(no device)") : device}}}});
    // Viewers order processes by sort_index (else by pid or name): keep ours.
    out.push_back(Json{{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", 0},
                       {"args", {{"sort_index", pid}}}});
  }
  std::vector<Json> complete;
  for (const NodeExecStats* s : events) {
    Json args = {{"name", s->node_name}, {"op", s->op}};
    if (!s->fused_nodes.empty()) args["fused_nodes"] = s->fused_nodes;
    complete.push_back(Json{{"name", s->op.empty() ? s->node_name : s->op},
                            {"cat", "Op"},
                            {"ph", "X"},
                            {"ts", s->start_micros},
                            {"dur", static_cast<double>(s->duration_nanos) / 1000.0},
                            {"pid", pids.at(s->device)},
                            {"tid", tid_of(*s)},
                            {"args", std::move(args)}});
  }
  for (const auto& [device, ids] : threads) {
    for (size_t tid = 0; tid < ids.size(); ++tid)
      out.push_back(Json{{"name", "thread_name"}, {"ph", "M"}, {"pid", pids.at(device)}, {"tid", tid},
                         {"args", {{"name", absl::StrCat("thread ", tid)}}}});
  }
  for (Json& e : complete) out.push_back(std::move(e));

  // One event per line: large traces stay readable and diffable.
  std::string text = "{\"traceEvents\": [\n";
  for (size_t i = 0; i < out.size(); ++i) absl::StrAppend(&text, "  ", dump(out[i]), i + 1 < out.size() ? ",\n" : "\n");
  text += "],\n\"displayTimeUnit\": \"ns\"}\n";
  return text;
}

}  // namespace tapeflow
