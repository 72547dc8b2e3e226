#include "distributed/cluster/grpc_client.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "core/checked_size.h"
#include "core/errors.h"
#include "distributed/cluster/worker_service.h"
#include "graph/graph_def.h"

namespace tapeflow::cluster {

namespace {
std::atomic<int64_t> g_pulled{0};
std::mutex g_mu;
std::string* g_token = nullptr;  // set: overrides TAPEFLOW_CLUSTER_TOKEN

std::map<std::string, std::shared_ptr<grpc::Channel>>& channels() {
  static auto* c = new std::map<std::string, std::shared_ptr<grpc::Channel>>();
  return *c;
}
}  // namespace

void set_client_token(const std::string& token) {
  std::lock_guard<std::mutex> lock(g_mu);
  delete g_token;
  g_token = new std::string(token);
}

std::string client_token() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_token) return *g_token;
  const char* env = std::getenv("TAPEFLOW_CLUSTER_TOKEN");
  return env ? env : "";
}

std::shared_ptr<WorkerService::Stub> stub_for(const std::string& address) {
  std::shared_ptr<grpc::Channel> channel;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto& c = channels()[address];
    if (!c) {
      grpc::ChannelArguments args;
      args.SetMaxReceiveMessageSize(kMaxMessageBytes);
      args.SetMaxSendMessageSize(kMaxMessageBytes);
      // A restarted task is found again quickly (Note [Recovery] in master.h).
      args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
      args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
      args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
      c = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
    }
    channel = c;
  }
  return WorkerService::NewStub(channel);
}

void forget_channel(const std::string& address) {
  std::lock_guard<std::mutex> lock(g_mu);
  channels().erase(address);
}

void prepare_context(grpc::ClientContext& context, int64_t timeout_ms) {
  const std::string token = client_token();
  if (!token.empty()) context.AddMetadata(kTokenKey, token);
  if (timeout_ms > 0) context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
}

absl::Status from_grpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

grpc::Status to_grpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::StatusOr<Tensor> pull_tensor(const std::string& address, int64_t step_id, const std::string& key,
                                   int64_t timeout_ms) {
  auto stub = stub_for(address);
  grpc::ClientContext context;
  prepare_context(context, timeout_ms > 0 ? timeout_ms : 600'000);  // bounded even without a run timeout
  RecvTensorRequest request;
  request.set_step_id(step_id);
  request.set_key(key);
  auto reader = stub->RecvTensor(&context, request);
  RecvTensorChunk chunk;
  if (!reader->Read(&chunk)) {
    absl::Status s = from_grpc(reader->Finish());
    if (s.code() == absl::StatusCode::kUnavailable) forget_channel(address);  // Note [Recovery]
    return s;
  }
  // On any error below, cancel the stream (its remaining chunks are not wanted).
  auto fail = [&](absl::Status s) {
    context.TryCancel();
    return s;
  };
  auto dtype = graph_def_internal::from_proto_dtype(chunk.meta().dtype());
  if (!dtype.ok()) return fail(dtype.status());
  std::vector<int64_t> dims;
  for (const auto& d : chunk.meta().tensor_shape().dim()) dims.push_back(d.size());
  auto bytes = checked_tensor_bytes(dims, *dtype);
  if (!bytes.ok()) return fail(bytes.status());
  if (static_cast<int64_t>(*bytes) != chunk.total_bytes())
    return fail(absl::InvalidArgumentError(absl::StrCat("RecvTensor '", key, "': ", chunk.total_bytes(),
                                                   " bytes announced for ", *bytes, " bytes of tensor")));
  // Note [Streamed tensors] (server.cc): allocated once, each chunk copied into place.
  const size_t want = static_cast<size_t>(*bytes);
  Tensor out;
  try {
    out = Tensor::from_host(*dtype, Shape(dims), nullptr);
  } catch (const Error& e) {  // over max_tensor_bytes()
    return fail(e.status());
  }
  char* dst = want > 0 ? static_cast<char*>(out.device_tensor().raw()) : nullptr;
  size_t have = 0;
  do {
    if (have + chunk.data().size() > want)
      return fail(absl::InvalidArgumentError(absl::StrCat("RecvTensor '", key, "': more bytes than announced")));
    if (!chunk.data().empty()) std::memcpy(dst + have, chunk.data().data(), chunk.data().size());
    have += chunk.data().size();
  } while (reader->Read(&chunk));
  TF_RETURN_IF_ERROR(from_grpc(reader->Finish()));
  if (have != want)
    return absl::InvalidArgumentError(absl::StrCat("RecvTensor '", key, "': ", have, " of ", want, " bytes"));
  g_pulled.fetch_add(1, std::memory_order_relaxed);
  return out;
}

int64_t tensors_pulled() { return g_pulled.load(std::memory_order_relaxed); }

}  // namespace tapeflow::cluster
