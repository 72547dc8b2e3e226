#include "graph/placer.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "devices/device_manager.h"
#include "eager/op_def.h"
#include "graph/graph_ops.h"

namespace tapeflow {

std::vector<Device*> session_devices(const SessionOptions& options) {
  int cpus = 1, gpus = -1;  // -1: every GPU present
  for (const auto& [type, count] : options.device_count) {
    if (type == "CPU") cpus = count;
    else if (type == "GPU") gpus = count;
    else
      throw InvalidArgumentError(absl::StrCat("[Session] device_count names an unknown device type '", type,
                                              "' (known: CPU, GPU)"),
                                 {});
  }
  if (cpus < 1 || cpus > 64)
    throw InvalidArgumentError(absl::StrCat("[Session] device_count[\"CPU\"] must be in [1, 64], got ", cpus), {});
  DeviceManager& dm = DeviceManager::global();
  if (cpus > 1) dm.set_num_cpu_devices(cpus);
  std::vector<Device*> out;
  for (int i = 0; i < cpus; ++i) out.push_back(dm.cpu(i));
  int taken = 0;
  for (Device* d : dm.devices())
    if (d->type() == DeviceType::kGPU && (gpus < 0 || taken < gpus)) { out.push_back(d); ++taken; }
  return out;
}

std::string placement_log_line(const Node& node, const Device& device) {
  return absl::StrCat(node.name, ": (", node.op->type, "): ", device.name());
}

bool runs_without_kernel(const Node& node) {
  return find_graph_op(node.op->type) == node.op || node.op->forward_input >= 0;
}

DType kernel_dtype(const Node& node, const std::vector<const Node*>& nodes) {
  const int k = node.op->kernel_dtype_input;
  if (k < 0 || k >= static_cast<int>(node.inputs.size())) return node.outputs.empty() ? DType::kFloat32 : node.outputs[0].dtype;
  const TensorRef& in = node.inputs[k];
  return nodes[in.node]->outputs[in.index].dtype;
}

namespace {

bool has_kernel(const Node& node, const Device& device, const std::vector<const Node*>& nodes) {
  if (runs_without_kernel(node)) return true;
  return resolve_kernel(*node.op, device.type(), kernel_dtype(node, nodes)).ok();
}

// Rule 5: GPUs first, then the Session's device order.
Device* best_of(const std::vector<Device*>& candidates) {
  for (Device* d : candidates) if (d->type() == DeviceType::kGPU) return d;
  return candidates.empty() ? nullptr : candidates.front();
}

std::string names_of(const std::vector<Device*>& devices) {
  std::vector<std::string> names;
  for (const Device* d : devices) names.push_back(d->name());
  return absl::StrCat("[", absl::StrJoin(names, ", "), "]");
}

// A node, or a colocation group (rule 2), placed as one.
struct Unit {
  std::vector<int> members;  // the needed node ids, in creation order
  std::vector<int> anchors;  // the group's VarHandleOps, then the nodes others name in "_class"
  int primary = -1;          // the node the request and errors are about: the first anchor, else the first member
  DeviceSpec request;
};

// Disjoint sets over node ids (path halving; the smaller id becomes the root).
struct Groups {
  explicit Groups(int n) : parent(static_cast<size_t>(n)) {
    for (int i = 0; i < n; ++i) parent[i] = i;
  }
  int find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
  std::vector<int> parent;
};

// Note [Colocation groups]: rule 2 unites a variable's nodes (Node::variable) and each node
// with the nodes its "_class" names (Node::colocate_with). As TensorFlow keys a group by the
// name in "loc:@X", nodes that name an X the graph lacks (a pass pruned it) are still placed
// together. `is_target` marks the nodes some other node names.
Groups colocation_groups(const std::vector<const Node*>& nodes, std::vector<char>& is_target) {
  const int n = static_cast<int>(nodes.size());
  Groups groups(n);
  absl::flat_hash_map<int64_t, int> first_of_variable;
  bool any_colocation = false;
  for (int id = 0; id < n; ++id) {
    const Node& node = *nodes[id];
    any_colocation |= !node.colocate_with().empty();
    if (!node.variable) continue;
    auto [it, inserted] = first_of_variable.try_emplace(node.variable->id(), id);
    if (!inserted) groups.unite(it->second, id);
  }
  if (!any_colocation) return groups;
  absl::flat_hash_map<std::string_view, int> by_name, first_naming_missing;
  by_name.reserve(static_cast<size_t>(n));
  for (int id = 0; id < n; ++id) by_name.emplace(nodes[id]->name, id);
  for (int id = 0; id < n; ++id) {
    for (const std::string& target : nodes[id]->colocate_with()) {
      if (auto it = by_name.find(target); it != by_name.end()) {
        groups.unite(id, it->second);
        if (it->second != id) is_target[it->second] = 1;
      } else {
        groups.unite(id, first_naming_missing.try_emplace(target, id).first->second);
      }
    }
  }
  return groups;
}

}  // namespace

std::vector<Device*> place_nodes(const std::vector<const Node*>& nodes, const std::vector<char>& needed,
                                 const std::vector<Device*>& devices, bool allow_soft_placement) {
  const int n = static_cast<int>(nodes.size());
  // Rule 2: one unit per colocation group with a needed member (Note [Colocation groups]).
  std::vector<char> is_target(static_cast<size_t>(n), 0);
  Groups groups = colocation_groups(nodes, is_target);
  std::vector<Unit> units;
  absl::flat_hash_map<int, int> unit_of_root;
  for (int id = 0; id < n; ++id) {
    if (!needed[id]) continue;
    auto [it, inserted] = unit_of_root.try_emplace(groups.find(id), static_cast<int>(units.size()));
    if (inserted) units.push_back(Unit{});
    units[it->second].members.push_back(id);
  }
  // Anchors, needed or not: the VarHandleOps first, then the named nodes, each in creation order.
  for (const bool handles : {true, false}) {
    for (int id = 0; id < n; ++id) {
      if (handles ? nodes[id]->op != &kVarHandleOp : !is_target[id] || nodes[id]->op == &kVarHandleOp) continue;
      auto it = unit_of_root.find(groups.find(id));
      if (it != unit_of_root.end()) units[it->second].anchors.push_back(id);
    }
  }
  for (Unit& unit : units) {
    unit.primary = unit.anchors.empty() ? unit.members.front() : unit.anchors.front();
    if (unit.members.size() == 1 && unit.anchors.empty()) {
      unit.request = nodes[unit.primary]->requested_device;
      continue;
    }
    // The anchors' requests merged; when they have none, the members' (a request that
    // conflicts with the merge so far is ignored).
    for (const std::vector<int>* from : {&unit.anchors, &unit.members}) {
      for (int m : *from) {
        const DeviceSpec& r = nodes[m]->requested_device;
        if (r.is_compatible_with(unit.request)) unit.request = unit.request.merged_with(r);
      }
      if (!unit.request.empty()) break;
    }
  }

  std::vector<Device*> placed(static_cast<size_t>(n), nullptr);
  for (const Unit& unit : units) {
    // Rule 3: the devices where every member has a kernel.
    std::vector<Device*> with_kernel;
    for (Device* d : devices) {
      bool ok = true;
      for (int m : unit.members) ok = ok && has_kernel(*nodes[m], *d, nodes);
      if (ok) with_kernel.push_back(d);
    }
    // Rule 1 over them.
    std::vector<Device*> matching;
    for (Device* d : with_kernel)
      if (unit.request.is_compatible_with(d->spec())) matching.push_back(d);
    Device* chosen = best_of(matching);
    if (chosen == nullptr && allow_soft_placement) {  // rule 4
      std::vector<Device*> same_type;
      for (Device* d : with_kernel)
        if (unit.request.device_type && *unit.request.device_type == device_type_name(d->type())) same_type.push_back(d);
      chosen = same_type.empty() ? best_of(with_kernel) : best_of(same_type);
    }
    if (chosen == nullptr) {  // rule 6
      const Node& node = *nodes[unit.primary];
      std::string kernel_of;
      for (int m : unit.members)
        if (!runs_without_kernel(*nodes[m]))
          absl::StrAppend(&kernel_of, kernel_of.empty() ? "" : ", ", nodes[m]->op->type, " (",
                          dtype_name(kernel_dtype(*nodes[m], nodes)), ")");
      std::string group;
      if (node.variable)
        group = absl::StrCat(" with the ", unit.members.size() - 1, " other node(s) colocated with variable '",
                             node.variable->name(), "' (its initializer, reads, assigns and updates run where it lives)");
      else if (unit.members.size() > 1 || !unit.anchors.empty())
        group = absl::StrCat(" with the ", unit.members.size() - 1, " other node(s) colocated with node '", node.name,
                             "' (its \"_class\" colocation group)");
      const std::string requested =
          unit.request.empty() ? std::string("no device was requested")
                               : absl::StrCat("it was explicitly requested on '", unit.request.to_string(), "'");
      std::vector<Device*> requested_present;
      for (Device* d : devices) if (unit.request.is_compatible_with(d->spec())) requested_present.push_back(d);
      const std::string why = requested_present.empty()
                                  ? std::string("no device of this session matches that")
                                  : absl::StrCat("of the devices that match it, ", names_of(requested_present),
                                                 ", none has a kernel for it");
      throw_status(absl::InvalidArgumentError(absl::StrCat(
                       "[", node.op->api_name, "] Cannot assign a device for operation '", node.name, "' (",
                       node.op->type, ")", group, ": ", requested, ", and ", why, ". Devices present: ",
                       names_of(devices), ". Devices with a kernel for ",
                       kernel_of.empty() ? std::string("it") : kernel_of, ": ", names_of(with_kernel),
                       with_kernel.empty() || allow_soft_placement
                           ? std::string(".")
                           : std::string(". SessionOptions::allow_soft_placement places it on one of those instead."),
                       "\n  in ", describe_node(node))),
                   node.loc);
    }
    for (int m : unit.members) placed[m] = chosen;
  }
  return placed;
}

}  // namespace tapeflow
