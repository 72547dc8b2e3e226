// Uses the installed "cluster" component: a graph run through Session("grpc://...") with a
// variable that lives on the server, and a typed error. The server is a one-task cluster on an
// OS-chosen loopback port made here (Server::create_local_server), or, with an argument, the
// target of an installed tapeflow_server process.
//
//   cluster_app [grpc://127.0.0.1:PORT]
#include <tapeflow/tapeflow.h>
#include "distributed/cluster/server.h"  // the layout README shows (in-tree and installed)

#include <iostream>
#include <optional>

int main(int argc, char** argv) {
  using namespace tapeflow;
  try {
    std::optional<cluster::Server> local;
    if (argc < 2) local.emplace(cluster::Server::create_local_server());
    const std::string target = argc < 2 ? local->target() : argv[1];
    Graph g;
    Tensor x, y, bump;
    Operation init;
    {
      auto scope = g.as_default();
      x = placeholder(DType::kFloat32, {2}, "x");
      Variable v(Tensor({10.f, 20.f}), "v");
      init = global_variables_initializer();
      bump = v.assign_add(x);
      y = matmul(reshape(x, {1, 2}), reshape(v.read(), {2, 1}));
    }
    Session sess(target, g);
    sess.run({}, {}, {init});
    sess.run(bump, {{x, Tensor({1.f, 2.f})}});  // v = [11, 22], held by the server
    const Tensor out = sess.run(y, {{x, Tensor({1.f, 2.f})}});
    std::cout << "remote: " << out.to_vector<float>()[0] << " shape " << out.shape().to_string() << "\n";
    try {
      sess.run(y, {{x, Tensor({1.f, 2.f, 3.f})}});
    } catch (const InvalidArgumentError& e) {
      std::cout << "caught: " << e.what() << "\n";
    }
  } catch (const Error& e) {
    std::cerr << "cluster_app: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
