// libFuzzer target: the cluster worker's request parsing and handling (Note [Fuzz contract] in
// fuzz_target.h; distributed/cluster/worker_service.h). The first byte picks the request type
// (RunGraph, RegisterGraph, RecvTensor, DeregisterGraph, CleanupStep, Reset); the rest is that
// message in protobuf's wire format, as gRPC hands it to the service. Every request must get a
// status (any): a crash, a sanitizer report, an abort or a hang is a finding. RunGraph runs
// against a registered graph "g1" (y = x * v, v a variable), so well-formed requests reach the
// executor; fuzzed graphs are registered and dropped again, never run.
// Built by the asan preset (tests/distributed/cluster/CMakeLists.txt, TAPEFLOW_FUZZ); the release
// build replays seeds and mutations of them through the same function (fuzz_replay_main.cc).
#include <string>

#include "distributed/cluster/worker_service.h"
#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using namespace tapeflow;
using namespace tapeflow::cluster;

absl::StatusOr<Tensor> no_pull(const std::string&, int64_t, const std::string&, int64_t) {
  return absl::UnavailableError("no pulls while fuzzing");
}

Worker& worker() {
  static Worker* w = [] {
    auto* out = new Worker("/job:fuzz/replica:0/task:0");
    Graph g;
    {
      auto scope = g.as_default();
      Tensor x = placeholder(DType::kFloat32, {-1}, "x");
      Variable v(Tensor(2.f), "v");
      (void)(x * v);
    }
    RegisterGraphRequest request;
    *request.mutable_graph_def() = to_graph_def(g);
    RegisterGraphResponse response;
    if (!out->register_graph(request, &response).ok() || response.graph_handle() != "g1") std::abort();
    return out;
  }();
  return *w;
}

}  // namespace

TAPEFLOW_FUZZ_TARGET(bytes) {
  if (bytes.empty()) return;
  Worker& w = worker();
  const int kind = static_cast<int>(static_cast<uint8_t>(bytes[0]) % 6);
  const std::string_view body = tapeflow::fuzz::as_text(bytes.subspan(1));
  const int size = static_cast<int>(body.size());
  switch (kind) {
    case 0: {
      RunGraphRequest request;
      if (!request.ParseFromArray(body.data(), size)) return;
      RunGraphResponse response;
      (void)w.run_graph(request, &response, no_pull, "");
      CleanupStepRequest cleanup;  // keep the step tables bounded
      cleanup.set_step_id(request.step_id());
      (void)w.cleanup_step(cleanup);
      break;
    }
    case 1: {
      RegisterGraphRequest request;
      if (!request.ParseFromArray(body.data(), size)) return;
      RegisterGraphResponse response;
      if (w.register_graph(request, &response).ok()) {
        DeregisterGraphRequest drop;
        drop.set_graph_handle(response.graph_handle());
        if (!w.deregister_graph(drop).ok()) std::abort();  // a handle just handed out must exist
      }
      break;
    }
    case 2: {
      RecvTensorRequest request;
      if (!request.ParseFromArray(body.data(), size)) return;
      (void)w.step_tensor(request.step_id(), request.key());
      break;
    }
    case 3: {
      DeregisterGraphRequest request;
      if (!request.ParseFromArray(body.data(), size) || request.graph_handle() == "g1") return;
      (void)w.deregister_graph(request);
      break;
    }
    case 4: {
      CleanupStepRequest request;
      if (!request.ParseFromArray(body.data(), size)) return;
      (void)w.cleanup_step(request);
      break;
    }
    default: {
      ResetRequest request;
      if (!request.ParseFromArray(body.data(), size)) return;
      (void)w.reset(request);
      break;
    }
  }
}
