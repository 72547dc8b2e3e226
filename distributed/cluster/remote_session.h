// Session("grpc://host:port"): the graph layer's RemoteSession (graph/remote_session.h) for
// gRPC targets, registered when libtapeflow_cluster is loaded (and by register_grpc_sessions,
// for a program that wants to be explicit). The master it runs is Note [Rounds] (master.h).
#pragma once

namespace tapeflow::cluster {

// Registers the "grpc://" factory with the graph layer. Idempotent, thread-safe.
void register_grpc_sessions();

}  // namespace tapeflow::cluster
