// Partitioning (Note [Partitions], graph/executor.h): the _Send/_Recv pair a plan adds at each
// edge that crosses devices, and the partition graphs RunMetadata shows.
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/executor.h"
#include "graph/rendezvous.h"

namespace tapeflow {

namespace {
// Plan-local nodes' ops (never in a user's graph; the executor runs them itself).
OpDef kSendOp{.type = "_Send", .api_name = "_Send", .num_inputs = 1, .infer = nullptr};
OpDef kRecvOp{.type = "_Recv", .api_name = "_Recv", .num_inputs = 0, .infer = nullptr};
}  // namespace

int Plan::add_transfer(const TensorRef& ref, int src, Device* dst, int dst_lane, int src_slot, int& slots) {
  const PlanStep& producer = steps_[src];
  const Node& from = *producer.node;
  Transfer t;
  t.tensor_name = absl::StrCat(from.name, ":", ref.index);
  t.src = producer.device;
  t.dst = dst;
  t.key = Rendezvous::create_key(*t.src, *t.dst, t.tensor_name);
  const int index = static_cast<int>(transfers_.size());
  auto make_node = [&](const OpDef& op) -> Node& {
    Node& node = transfer_nodes_.emplace_back();
    node.name = absl::StrCat(from.name, "/_", transfer_nodes_.size() - 1);  // TensorFlow's "a/_0", "a/_1"
    node.op = &op;
    node.loc = from.loc;
    node.imported = from.imported;
    node.attrs.set("tensor_name", t.tensor_name);
    node.attrs.set("send_device", t.src->name());
    node.attrs.set("recv_device", t.dst->name());
    return node;
  };
  // The steps are built in place: moving a PlanStep's inline vectors trips GCC 12's
  // -Wmaybe-uninitialized inside absl::InlinedVector.
  Device* const src_device = producer.device;  // `producer` points into steps_, which grows below
  const int src_lane = producer.lane;
  const Node& send_node = make_node(kSendOp);
  Node& recv_node = make_node(kRecvOp);
  recv_node.outputs.push_back(from.outputs[ref.index]);
  PlanStep& send = steps_.emplace_back();
  send.node = &send_node;
  send.kind = PlanStep::Kind::kSend;
  send.device = src_device;
  send.lane = src_lane;
  send.transfer = index;
  send.inputs.push_back(src_slot);
  send.first_output = 0;
  PlanStep& recv = steps_.emplace_back();  // `send` is not used past here
  recv.node = &recv_node;
  recv.kind = PlanStep::Kind::kRecv;
  recv.device = dst;
  recv.lane = dst_lane;
  recv.transfer = index;
  recv.first_output = slots++;
  recv.num_outputs = 1;
  transfers_.push_back(std::move(t));
  return recv.first_output;
}

std::vector<PartitionGraph> Plan::partition_graphs() const {
  std::vector<PartitionGraph> parts;
  auto part_for = [&](Device* d) -> PartitionGraph& {
    for (PartitionGraph& p : parts) if (p.device == d->name()) return p;
    parts.push_back(PartitionGraph{d->name(), {}});
    return parts.back();
  };
  for (const auto& [node, device] : direct_consts_)  // read in place, on the kernel's device
    part_for(device).nodes.push_back(absl::StrCat(node->name, " = ", node->op->type, "()"));
  absl::flat_hash_map<int, const Node*> received;  // a _Recv's slot -> its node
  for (const PlanStep& step : steps_)
    if (step.kind == PlanStep::Kind::kRecv) received[step.first_output] = step.node;
  for (const PlanStep& step : steps_) {
    const Node& node = *step.node;
    if (step.kind == PlanStep::Kind::kSend || step.kind == PlanStep::Kind::kRecv) {
      const Transfer& t = transfers_[step.transfer];
      const bool send = step.kind == PlanStep::Kind::kSend;
      part_for(step.device).nodes.push_back(
          send ? absl::StrCat(node.name, " = _Send(", t.tensor_name, ") {tensor_name=\"", t.tensor_name,
                              "\", recv_device=\"", t.dst->name(), "\"}")
               : absl::StrCat(node.name, " = _Recv() {tensor_name=\"", t.tensor_name, "\", send_device=\"",
                              t.src->name(), "\"}"));
      continue;
    }
    std::vector<std::string> ins;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      auto it = i < step.inputs.size() ? received.find(step.inputs[i]) : received.end();
      ins.push_back(it != received.end() ? absl::StrCat(it->second->name, ":0")
                                         : absl::StrCat(graph_.state()->node(node.inputs[i].node).name, ":",
                                                        node.inputs[i].index));
    }
    for (int c : node.control_inputs) ins.push_back(absl::StrCat("^", graph_.state()->node(c).name));
    part_for(step.device).nodes.push_back(absl::StrCat(node.name, " = ", node.op->type, "(", absl::StrJoin(ins, ", "), ")"));
  }
  return parts;
}

}  // namespace tapeflow
