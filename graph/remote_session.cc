#include "graph/remote_session.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "core/errors.h"

namespace tapeflow {

namespace {
struct Entry {
  std::string prefix;
  RemoteSessionFactory factory;
  RemoteResetFn reset;
};
std::mutex g_mu;
std::vector<Entry>& entries() {
  static std::vector<Entry>* e = new std::vector<Entry>();  // never destroyed: used at exit
  return *e;
}

const Entry& find_entry(const std::string& target, const char* api, std::source_location loc) {
  for (const Entry& e : entries())
    if (target.rfind(e.prefix, 0) == 0) return e;
  if (target.rfind("grpc://", 0) == 0)
    throw UnimplementedError(absl::StrCat("[", api, "] target '", target,
                                          "' needs the cluster library: link tapeflow_cluster "
                                          "(distributed/cluster), which registers \"grpc://\" when it is loaded"),
                             loc);
  throw InvalidArgumentError(absl::StrCat("[", api, "] unknown target '", target,
                                          "': use \"\" for this process or \"grpc://host:port\" for a server"),
                             loc);
}
}  // namespace

void register_remote_session_factory(const std::string& prefix, RemoteSessionFactory factory, RemoteResetFn reset) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (Entry& e : entries())
    if (e.prefix == prefix) {
      e.factory = std::move(factory);
      e.reset = std::move(reset);
      return;
    }
  entries().push_back(Entry{prefix, std::move(factory), std::move(reset)});
}

std::unique_ptr<RemoteSession> make_remote_session(const Graph& graph, const SessionOptions& options,
                                                   std::source_location loc) {
  RemoteSessionFactory factory;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    factory = find_entry(options.target, "Session", loc).factory;
  }
  return factory(graph, options);
}

void reset_remote_containers(const std::string& target, const std::vector<std::string>& containers,
                             std::source_location loc) {
  RemoteResetFn reset;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    reset = find_entry(target, "Session.reset", loc).reset;
  }
  reset(target, containers);
}

}  // namespace tapeflow
