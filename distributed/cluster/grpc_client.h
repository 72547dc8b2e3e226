// The client side of the worker service, shared by the master (remote_session.cc) and by
// workers pulling tensors from each other: one channel per address, the shared token, deadlines,
// and gRPC <-> absl status. Internal to distributed/cluster (includes gRPC).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "distributed/cluster/cluster.grpc.pb.h"
#include "eager/tensor.h"

namespace tapeflow::cluster {

// The metadata key that carries the shared token (Note [Cluster token] in server.h).
inline constexpr const char* kTokenKey = "tapeflow-token";
// RecvTensor's chunk size: a tensor larger than this is streamed in several messages.
inline constexpr int64_t kChunkBytes = int64_t{1} << 20;
// The most bytes one message may carry, both ways (feeds, fetches and partitions ride in one
// message; tensors between tasks are streamed in chunks, so this bounds only those).
inline constexpr int kMaxMessageBytes = 1 << 30;

// A stub on a cached channel to "host:port".
std::shared_ptr<WorkerService::Stub> stub_for(const std::string& address);
// Drops the cached channel: the next stub_for connects afresh, instead of waiting out the
// reconnect backoff of a channel that saw its task die (Note [Recovery] in master.h).
void forget_channel(const std::string& address);
// Adds the token (client_token()) and, for timeout_ms > 0, the deadline.
void prepare_context(grpc::ClientContext& context, int64_t timeout_ms);
absl::Status from_grpc(const grpc::Status& status);
grpc::Status to_grpc(const absl::Status& status);
// RecvTensor: tensor `key` of step `step_id` from the task at `address`, reassembled from chunks.
absl::StatusOr<Tensor> pull_tensor(const std::string& address, int64_t step_id, const std::string& key,
                                   int64_t timeout_ms);

// Tensors this process has pulled with RecvTensor so far (for benchmarks and tests).
int64_t tensors_pulled();

// The token this process sends (Note [Cluster token]); "" sends none. Thread-safe.
void set_client_token(const std::string& token);
std::string client_token();

}  // namespace tapeflow::cluster
