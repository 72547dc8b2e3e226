// Tutorial 09: control flow that depends on values, from eager code to a served graph.
//
// The story: a prototype has an `if` and a loop whose decisions depend on tensor values. A C++
// `if (t.item<bool>())` works eagerly, but a trace sees symbolic tensors with no values, so the
// decision could not become part of the graph. Written with tapeflow's cond and while_loop
// (TensorFlow's tf.cond and tf.while_loop), the same code runs eagerly, is traced by function()
// into one graph whose StatelessIf and StatelessWhile nodes decide at run time, and is saved,
// loaded and served like any model. The example: square roots by Newton's method, iterating
// until the answer is good enough, so the number of iterations depends on the input.
//
// Run: ./build/tutorials/09_control_flow
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdlib.h>

#include "graph/graph_def.h"
#include "saving/saved_model.h"
#include "tapeflow.h"

using namespace tapeflow;

namespace {

// sqrt(a) for a vector of positive a: Newton's x <- (x + a / x) / 2 from a first guess, until
// every |x * x - a| is within 1e-6 of a (at most 100 iterations). Returns {x, iterations}.
std::vector<Tensor> newton_sqrt(const Tensor& a) {
  // The first guess depends on the values: a / 2 when some a is above 1, else 1.
  const Tensor guess = cond(greater(reduce_max(a), 1.f), [&] { return a / 2.f; }, [&] { return ones_like(a); });
  return while_loop(
      [&](const std::vector<Tensor>& v) {
        return greater(reduce_max(abs(v[0] * v[0] - a) / a), 1e-6f);
      },
      [&](const std::vector<Tensor>& v) { return std::vector<Tensor>{(v[0] + a / v[0]) * 0.5f, v[1] + 1}; },
      {guess, Tensor(int32_t{0})}, {.maximum_iterations = 100});
}

bool same(const Tensor& x, const Tensor& y) { return x.to_vector<float>() == y.to_vector<float>(); }

std::string show(const Tensor& t) {
  std::ostringstream out;
  out << "[";
  for (float v : t.to_vector<float>()) out << (out.tellp() > 1 ? ", " : "") << v;
  return out.str() + "]";
}

}  // namespace

int main() {
  const std::vector<Tensor> inputs = {Tensor{2.f, 9.f, 0.25f}, Tensor{1e6f, 7.f, 3.f}, Tensor{0.5f, 0.01f, 0.9f}};

  // 1. Eagerly: cond calls one function now; while_loop is a loop in C++.
  std::cout << "eager:\n";
  std::vector<std::vector<Tensor>> eager;
  for (const Tensor& a : inputs) {
    eager.push_back(newton_sqrt(a));
    std::cout << "  sqrt(" << show(a) << ") = " << show(eager.back()[0]) << " after " << eager.back()[1].item<int32_t>()
              << " iterations (std::sqrt of the first: " << std::sqrt(a.to_vector<float>()[0]) << ")\n";
  }

  // 2. Traced: one graph for every input of this signature; the loop runs inside the Session, as
  // many times as each input needs.
  auto traced = function([](const Tensor& a) { return newton_sqrt(a); });
  std::cout << "traced:\n";
  bool all_same = true;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::vector<Tensor> r = traced(inputs[k]);
    all_same = all_same && same(r[0], eager[k][0]) && r[1].item<int32_t>() == eager[k][1].item<int32_t>();
    std::cout << "  " << show(r[0]) << " after " << r[1].item<int32_t>() << " iterations\n";
  }
  std::cout << "traces: " << traced.trace_count() << "; same as eager: " << (all_same ? "yes" : "NO") << "\n";
  ConcreteFunction& cf = traced.get_concrete_function({{DType::kFloat32, {3}}});
  std::cout << "nodes that decide at run time:";
  for (const Operation& op : cf.graph().get_operations())
    if (op.type() == "StatelessIf" || op.type() == "StatelessWhile") std::cout << " " << op.name() << " (" << op.type() << ")";
  std::cout << "\n";

  // 3. In TensorFlow's format the functions the nodes run are FunctionDefs of the library.
  const GraphDef def = to_graph_def(cf.graph());
  std::cout << "GraphDef library:";
  for (const auto& f : def.library().function()) std::cout << " " << f.signature().name();
  std::cout << "\n";

  // 4. Saved, loaded and served: a program with no model code gets the same answers.
  std::string dir = (std::filesystem::temp_directory_path() / "tapeflow_tutorial_09_XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) return 1;
  std::filesystem::remove(dir);
  save_model(dir, {{"serve", cf}});
  LoadedModel loaded = load_model(dir);
  const Signature& serve = loaded.signature("serve");
  bool served_same = true;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::map<std::string, Tensor> out = serve.run({{serve.inputs().begin()->first, inputs[k]}});
    served_same = served_same && same(out.at("output_0"), eager[k][0]);
  }
  std::cout << "served from " << std::filesystem::path(dir).filename().string()
            << ": same as eager: " << (served_same ? "yes" : "NO") << "\n";
  std::filesystem::remove_all(dir);
  if (!all_same || !served_same) return 1;
  std::cout << "tutorial complete\n";
  return 0;
}
