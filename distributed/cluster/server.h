// Server: one task of a cluster, serving its devices to the cluster's masters over gRPC
// (TensorFlow's tf.distribute.Server).
//
//   ClusterSpec cluster({{"ps", {"127.0.0.1:2222"}}, {"worker", {"127.0.0.1:2223"}}});
//   Server ps(cluster, "ps", 0);          // serves 127.0.0.1:2222 until destroyed or stop()
//   ps.join();                            // blocks (a ps process does only this)
//
//   Server local = Server::create_local_server();   // a one-task cluster on an OS-chosen port
//   Session sess(graph, {.target = local.target()}); // "grpc://127.0.0.1:40123"
//
// Note [Cluster security]: a graph is a program: whoever can reach a server can make it run
// any op on its machine (read and write files through the ops that do, use its memory and
// CPU). A server therefore binds 127.0.0.1 unless ServerOptions::bind_address says otherwise,
// and a cluster must only ever run on a trusted network.
// Note [Cluster token]: with ServerOptions::token set, every call must carry the same token in
// its "tapeflow-token" metadata (clients send set_client_token()'s, or $TAPEFLOW_CLUSTER_TOKEN);
// others get PERMISSION_DENIED. It is a shared secret sent in clear text (no TLS): it keeps
// strangers' programs out of a trusted network, it does not make an untrusted network safe.
//
// Servers started with port 0 learn their own port when they bind; a launcher that starts
// several such servers collects their ports and hands each the full cluster with set_cluster.
#pragma once

#include <memory>
#include <source_location>
#include <string>

#include "distributed/cluster/cluster_spec.h"

namespace tapeflow::cluster {

struct ServerOptions {
  // The interface to listen on: "127.0.0.1" (loopback only), or e.g. "0.0.0.0" for every
  // interface of a trusted network (Note [Cluster security]).
  std::string bind_address = "127.0.0.1";
  // A shared secret every call must carry (Note [Cluster token]); "" accepts every caller.
  std::string token;
  // The largest request a call may send (feeds and partition graphs ride in one message).
  int max_message_bytes = 1 << 30;
};

class Server {
 public:
  // Starts serving task `task` of `job` on its address's port (0: one the OS picks). Throws
  // InvalidArgumentError for a job or task the cluster lacks, UnavailableError when the port
  // cannot be bound.
  Server(const ClusterSpec& cluster, const std::string& job, int task, ServerOptions options = {},
         std::source_location loc = std::source_location::current());
  // A one-task cluster {"localhost": ["127.0.0.1:0"]}, as tf.distribute.Server.create_local_server.
  static Server create_local_server(ServerOptions options = {},
                                    std::source_location loc = std::source_location::current());
  Server(Server&&) noexcept;
  Server& operator=(Server&&) noexcept;
  ~Server();  // stops serving

  // "grpc://host:port" with the bound port: a Session target.
  std::string target() const;
  int port() const;
  const std::string& job() const;
  int task() const;
  // The cluster as this server knows it (its own address with the bound port).
  ClusterSpec cluster() const;
  // Replaces the cluster (same jobs and tasks; this task's address stays the bound one).
  // InvalidArgumentError when this task is missing from `cluster`. Thread-safe.
  void set_cluster(const ClusterSpec& cluster, std::source_location loc = std::source_location::current());

  // Blocks until stop() (from another thread, or a signal handler's thread).
  void join();
  // Stops serving: calls in flight finish or are cancelled. Idempotent.
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tapeflow::cluster
