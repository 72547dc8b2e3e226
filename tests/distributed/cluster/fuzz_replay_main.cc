// Replays the worker-service fuzz target (tests/fuzz/fuzz_worker_service.cc) without libFuzzer,
// so the release build exercises it too: seed requests built here (and written out with
// --write-seeds DIR as the libFuzzer seed corpus), then --mutations N seeded mutations of them
// (bytes flipped, dropped, inserted; truncations). Exit status 0; a finding aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "distributed/cluster/worker_service.h"
#include "graph/graph_def.h"
#include "tapeflow.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using namespace tapeflow;
using namespace tapeflow::cluster;

std::string with_kind(char kind, const google::protobuf::Message& m) {
  std::string bytes(1, kind);  // (not kind + string: GCC 12's -Wrestrict misfires on operator+)
  bytes += m.SerializeAsString();
  return bytes;
}

std::vector<std::string> seeds() {
  std::vector<std::string> out;
  RunGraphRequest run;
  run.set_graph_handle("g1");
  run.set_step_id(3);
  NamedTensor* send = run.add_send();
  send->set_name("x:0");
  if (!tensor_to_wire(Tensor(std::vector<float>{1.f, 2.f, 3.f}, {3}), send->mutable_tensor()).ok()) std::abort();
  run.add_fetch("Mul:0");
  run.add_keep("x:0");
  run.add_target("v/Assign");
  out.push_back(with_kind(0, run));
  run.clear_target();
  RemoteInput* recv = run.add_recv();
  recv->set_name("x:0");
  recv->set_key("x:0");
  out.push_back(with_kind(0, run));
  Graph g;
  {
    auto scope = g.as_default();
    Tensor a = placeholder(DType::kFloat32, {2, 2}, "a");
    (void)matmul(a, a);
  }
  RegisterGraphRequest reg;
  *reg.mutable_graph_def() = to_graph_def(g);
  out.push_back(with_kind(1, reg));
  RecvTensorRequest recv_tensor;
  recv_tensor.set_step_id(3);
  recv_tensor.set_key("x:0");
  out.push_back(with_kind(2, recv_tensor));
  DeregisterGraphRequest dereg;
  dereg.set_graph_handle("g2");
  out.push_back(with_kind(3, dereg));
  CleanupStepRequest cleanup;
  cleanup.set_step_id(3);
  out.push_back(with_kind(4, cleanup));
  ResetRequest reset;
  reset.add_container("");
  out.push_back(with_kind(5, reset));
  return out;
}

uint64_t next(uint64_t& s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  long mutations = 20000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--mutations") == 0) mutations = std::atol(argv[i + 1]);
    if (std::strcmp(argv[i], "--write-seeds") == 0) {
      int n = 0;
      for (const std::string& s : seeds()) std::ofstream(std::string(argv[i + 1]) + "/seed_" + std::to_string(n++)) << s;
    }
  }
  const std::vector<std::string> base = seeds();
  for (const std::string& s : base) LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (long m = 0; m < mutations; ++m) {
    std::string s = base[next(state) % base.size()];
    const int edits = 1 + static_cast<int>(next(state) % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t at = 1 + next(state) % s.size();  // keep the kind byte mostly
      switch (next(state) % 4) {
        case 0: if (at < s.size()) s[at] = static_cast<char>(next(state)); break;
        case 1: if (at < s.size()) s.erase(at, 1); break;
        case 2: s.insert(std::min(at, s.size()), 1, static_cast<char>(next(state))); break;
        default: s.resize(at); break;
      }
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
  std::printf("fuzz_worker_service_replay: %zu seeds and %ld mutations, no finding\n", base.size(), mutations);
  return 0;
}
