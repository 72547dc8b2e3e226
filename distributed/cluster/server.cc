#include "distributed/cluster/server.h"

#include <condition_variable>
#include <mutex>
#include <random>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "distributed/cluster/grpc_client.h"
#include "distributed/cluster/worker_service.h"
#include "graph/graph_def.h"

namespace tapeflow::cluster {

namespace {

// The gRPC edge: checks the token, then hands the request to the Worker.
class Service final : public WorkerService::Service {
 public:
  explicit Service(Server::Impl* server) : server_(server) {}
  grpc::Status GetStatus(grpc::ServerContext* ctx, const GetStatusRequest*, GetStatusResponse* response) override;
  grpc::Status RegisterGraph(grpc::ServerContext* ctx, const RegisterGraphRequest* request,
                             RegisterGraphResponse* response) override;
  grpc::Status DeregisterGraph(grpc::ServerContext* ctx, const DeregisterGraphRequest* request,
                               DeregisterGraphResponse*) override;
  grpc::Status RunGraph(grpc::ServerContext* ctx, const RunGraphRequest* request, RunGraphResponse* response) override;
  grpc::Status RecvTensor(grpc::ServerContext* ctx, const RecvTensorRequest* request,
                          grpc::ServerWriter<RecvTensorChunk>* writer) override;
  grpc::Status CleanupStep(grpc::ServerContext* ctx, const CleanupStepRequest* request, CleanupStepResponse*) override;
  grpc::Status Reset(grpc::ServerContext* ctx, const ResetRequest* request, ResetResponse*) override;

 private:
  grpc::Status check_token(grpc::ServerContext* ctx) const;
  Server::Impl* server_;
};

}  // namespace

struct Server::Impl {
  std::string job;
  int task = 0;
  ServerOptions options;
  int port = 0;
  std::string address;  // this task's "host:port" with the bound port
  uint64_t incarnation = 0;
  mutable std::mutex mu;
  ClusterSpec cluster;
  bool stopped = false;
  std::condition_variable stopped_cv;
  std::unique_ptr<Worker> worker;
  std::unique_ptr<Service> service;
  std::unique_ptr<grpc::Server> server;
};

namespace {

grpc::Status Service::check_token(grpc::ServerContext* ctx) const {
  const std::string& token = server_->options.token;
  if (token.empty()) return grpc::Status::OK;
  const auto& md = ctx->client_metadata();
  auto it = md.find(kTokenKey);
  if (it == md.end() || std::string_view(it->second.data(), it->second.size()) != token)
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat(task_name(server_->job, server_->task),
                                     " requires the cluster token (set_client_token or $TAPEFLOW_CLUSTER_TOKEN); ",
                                     it == md.end() ? "none was sent" : "a different one was sent"));
  return grpc::Status::OK;
}

#define TAPEFLOW_CHECK_TOKEN(ctx)                        \
  if (grpc::Status s = check_token(ctx); !s.ok()) return s

grpc::Status Service::GetStatus(grpc::ServerContext* ctx, const GetStatusRequest*, GetStatusResponse* response) {
  TAPEFLOW_CHECK_TOKEN(ctx);
  std::lock_guard<std::mutex> lock(server_->mu);
  for (const auto& [job, tasks] : server_->cluster.as_map()) {
    JobDef* def = response->mutable_cluster()->add_job();
    def->set_name(job);
    for (size_t t = 0; t < tasks.size(); ++t) (*def->mutable_tasks())[static_cast<int>(t)] = tasks[t];
  }
  response->set_job(server_->job);
  response->set_task(server_->task);
  response->set_incarnation(server_->incarnation);
  return grpc::Status::OK;
}

grpc::Status Service::RegisterGraph(grpc::ServerContext* ctx, const RegisterGraphRequest* request,
                                    RegisterGraphResponse* response) {
  TAPEFLOW_CHECK_TOKEN(ctx);
  return to_grpc(server_->worker->register_graph(*request, response));
}

grpc::Status Service::DeregisterGraph(grpc::ServerContext* ctx, const DeregisterGraphRequest* request,
                                      DeregisterGraphResponse*) {
  TAPEFLOW_CHECK_TOKEN(ctx);
  return to_grpc(server_->worker->deregister_graph(*request));
}

grpc::Status Service::RunGraph(grpc::ServerContext* ctx, const RunGraphRequest* request, RunGraphResponse* response) {
  TAPEFLOW_CHECK_TOKEN(ctx);
  return to_grpc(server_->worker->run_graph(*request, response, &pull_tensor, server_->address));
}

grpc::Status Service::RecvTensor(grpc::ServerContext* ctx, const RecvTensorRequest* request,
                                 grpc::ServerWriter<RecvTensorChunk>* writer) {
  TAPEFLOW_CHECK_TOKEN(ctx);
  absl::StatusOr<Tensor> t = server_->worker->step_tensor(request->step_id(), request->key());
  if (!t.ok()) return to_grpc(t.status());
  // Note [Streamed tensors]: a tensor goes out in chunks of kChunkBytes, each copied straight
  // from the tensor's buffer into its message (a GPU tensor is first copied to the host); the
  // receiver (pull_tensor) allocates the tensor from the first chunk's dtype and shape and copies
  // each chunk into place. So each byte is copied once on each side beyond what gRPC itself does,
  // and no message holds a large tensor whole.
  RecvTensorChunk chunk;
  absl::StatusOr<proto::DataType> dtype = graph_def_internal::to_proto_dtype(t->dtype());
  if (!dtype.ok()) return to_grpc(dtype.status());
  chunk.mutable_meta()->set_dtype(*dtype);
  graph_def_internal::shape_to_proto(t->shape(), chunk.mutable_meta()->mutable_tensor_shape());
  const int64_t bytes = t->num_elements() * static_cast<int64_t>(dtype_size(t->dtype()));
  chunk.set_total_bytes(bytes);
  std::string staged;  // only for a tensor the host cannot read in place
  const char* src = nullptr;
  if (bytes > 0) {
    const DeviceTensor& dt = t->device_tensor();
    if (dt.device()->host_accessible()) {
      src = static_cast<const char*>(dt.raw());
    } else {
      staged.resize(static_cast<size_t>(bytes));
      t->copy_to_host(staged.data());
      src = staged.data();
    }
  }
  for (int64_t offset = 0;;) {
    const int64_t n = std::min(kChunkBytes, bytes - offset);
    chunk.set_data(src ? src + offset : "", static_cast<size_t>(n));
    if (!writer->Write(chunk)) return grpc::Status(grpc::StatusCode::CANCELLED, "the receiver went away");
    chunk.clear_meta();
    offset += n;
    if (offset >= bytes) break;
  }
  return grpc::Status::OK;
}

grpc::Status Service::CleanupStep(grpc::ServerContext* ctx, const CleanupStepRequest* request, CleanupStepResponse*) {
  TAPEFLOW_CHECK_TOKEN(ctx);
  return to_grpc(server_->worker->cleanup_step(*request));
}

grpc::Status Service::Reset(grpc::ServerContext* ctx, const ResetRequest* request, ResetResponse*) {
  TAPEFLOW_CHECK_TOKEN(ctx);
  return to_grpc(server_->worker->reset(*request));
}

}  // namespace

Server::Server(const ClusterSpec& cluster, const std::string& job, int task, ServerOptions options,
               std::source_location loc)
    : impl_(std::make_unique<Impl>()) {
  const std::string& address = cluster.task_address(job, task, loc);
  impl_->job = job;
  impl_->task = task;
  impl_->options = std::move(options);
  impl_->cluster = cluster;
  impl_->incarnation = std::random_device{}() * uint64_t{0x100000001} ^ std::random_device{}();
  impl_->worker = std::make_unique<Worker>(task_name(job, task));
  impl_->service = std::make_unique<Service>(impl_.get());
  const std::string port = address.substr(address.rfind(':') + 1);
  const std::string host = address.substr(0, address.rfind(':'));
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat(impl_->options.bind_address, ":", port), grpc::InsecureServerCredentials(),
                           &impl_->port);
  builder.SetMaxReceiveMessageSize(impl_->options.max_message_bytes);
  // Without this gRPC sets SO_REUSEPORT, and a second server on a taken port would "bind".
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.RegisterService(impl_->service.get());
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || impl_->port == 0)
    throw UnavailableError(absl::StrCat("[Server] ", task_name(job, task), " could not listen on ",
                                        impl_->options.bind_address, ":", port, " (is the port in use?)"),
                           loc);
  // Loopback binds advertise 127.0.0.1; others keep the cluster's host name.
  impl_->address = absl::StrCat(impl_->options.bind_address == "127.0.0.1" ? "127.0.0.1" : host, ":", impl_->port);
  impl_->cluster.set_task_address(job, task, impl_->address, loc);
}

Server Server::create_local_server(ServerOptions options, std::source_location loc) {
  return Server(ClusterSpec({{"localhost", {"127.0.0.1:0"}}}, loc), "localhost", 0, std::move(options), loc);
}

Server::Server(Server&&) noexcept = default;
Server& Server::operator=(Server&&) noexcept = default;

Server::~Server() {
  if (impl_) stop();
}

std::string Server::target() const { return absl::StrCat("grpc://", impl_->address); }
int Server::port() const { return impl_->port; }
const std::string& Server::job() const { return impl_->job; }
int Server::task() const { return impl_->task; }

ClusterSpec Server::cluster() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->cluster;
}

void Server::set_cluster(const ClusterSpec& cluster, std::source_location loc) {
  ClusterSpec next = cluster;
  next.set_task_address(impl_->job, impl_->task, impl_->address, loc);  // throws when the task is missing
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->cluster = std::move(next);
}

void Server::join() {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->stopped_cv.wait(lock, [&] { return impl_->stopped; });
}

void Server::stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->stopped) return;
    impl_->stopped = true;
  }
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  impl_->server->Wait();
  impl_->stopped_cv.notify_all();
}

}  // namespace tapeflow::cluster
