// Tutorial 09: control flow that depends on values, from eager code to a served graph.
//
// The story: a prototype has an `if` and a loop whose decisions depend on tensor values. A C++
// `if (t.item<bool>())` works eagerly, but a trace sees symbolic tensors with no values, so the
// decision could not become part of the graph. Written with tapeflow's cond and while_loop
// (TensorFlow's tf.cond and tf.while_loop), the same code runs eagerly, is traced by function()
// into one graph whose StatelessIf and StatelessWhile nodes decide at run time, and is saved,
// loaded and served like any model; and the same computation frozen by TensorFlow 1 loads and
// runs too. The example: square roots by Newton's method, iterating until the answer is good
// enough, so the number of iterations depends on the input.
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

// The same computation as a team's TensorFlow 1.15 model froze it (tf.cond and tf.while_loop
// written as Switch, Merge, Enter, LoopCond, NextIteration and Exit nodes), in the text format
// TensorFlow prints. tapeflow reads the cond as an If and the loop as a While.
constexpr char kTensorFlow1Newton[] = R"pb(
node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 3 } } } } }
node { name: "Const" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 0 } } } }
node { name: "Max" op: "Max" input: "a" input: "Const" attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tidx" value { type: DT_INT32 } } attr { key: "keep_dims" value { b: false } } }
node { name: "Greater/y" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
node { name: "Greater" op: "Greater" input: "Max" input: "Greater/y" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "cond/Switch" op: "Switch" input: "Greater" input: "Greater" attr { key: "T" value { type: DT_BOOL } } }
node { name: "cond/switch_t" op: "Identity" input: "cond/Switch:1" attr { key: "T" value { type: DT_BOOL } } }
node { name: "cond/switch_f" op: "Identity" input: "cond/Switch" attr { key: "T" value { type: DT_BOOL } } }
node { name: "cond/pred_id" op: "Identity" input: "Greater" attr { key: "T" value { type: DT_BOOL } } }
node { name: "cond/truediv/y" op: "Const" input: "^cond/switch_t" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }
node { name: "cond/truediv" op: "RealDiv" input: "cond/truediv/Switch:1" input: "cond/truediv/y" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "cond/truediv/Switch" op: "Switch" input: "a" input: "cond/pred_id" attr { key: "T" value { type: DT_FLOAT } } attr { key: "_class" value { list { s: "loc:@a" } } } }
node { name: "cond/ones_like" op: "Const" input: "^cond/switch_f" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 1 } } } }
node { name: "cond/Merge" op: "Merge" input: "cond/ones_like" input: "cond/truediv" attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } } }
node { name: "Const_1" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
node { name: "while/Enter" op: "Enter" input: "cond/Merge" attr { key: "T" value { type: DT_FLOAT } } attr { key: "frame_name" value { s: "while/while_context" } } attr { key: "is_constant" value { b: false } } attr { key: "parallel_iterations" value { i: 10 } } }
node { name: "while/Enter_1" op: "Enter" input: "Const_1" attr { key: "T" value { type: DT_INT32 } } attr { key: "frame_name" value { s: "while/while_context" } } attr { key: "is_constant" value { b: false } } attr { key: "parallel_iterations" value { i: 10 } } }
node { name: "while/Merge" op: "Merge" input: "while/Enter" input: "while/NextIteration" attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } } }
node { name: "while/Merge_1" op: "Merge" input: "while/Enter_1" input: "while/NextIteration_1" attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/mul" op: "Mul" input: "while/Merge" input: "while/Merge" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "while/sub/Enter" op: "Enter" input: "a" attr { key: "T" value { type: DT_FLOAT } } attr { key: "frame_name" value { s: "while/while_context" } } attr { key: "is_constant" value { b: true } } attr { key: "parallel_iterations" value { i: 10 } } }
node { name: "while/sub" op: "Sub" input: "while/mul" input: "while/sub/Enter" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "while/Abs" op: "Abs" input: "while/sub" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "while/truediv" op: "RealDiv" input: "while/Abs" input: "while/sub/Enter" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "while/Const" op: "Const" input: "^while/Merge" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 0 } } } }
node { name: "while/Max" op: "Max" input: "while/truediv" input: "while/Const" attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tidx" value { type: DT_INT32 } } attr { key: "keep_dims" value { b: false } } }
node { name: "while/Greater/y" op: "Const" input: "^while/Merge" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1e-06 } } } }
node { name: "while/Greater" op: "Greater" input: "while/Max" input: "while/Greater/y" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "while/Less/y" op: "Const" input: "^while/Merge" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 100 } } } }
node { name: "while/Less" op: "Less" input: "while/Merge_1" input: "while/Less/y" attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/LogicalAnd" op: "LogicalAnd" input: "while/Greater" input: "while/Less" }
node { name: "while/LoopCond" op: "LoopCond" input: "while/LogicalAnd" }
node { name: "while/Switch" op: "Switch" input: "while/Merge" input: "while/LoopCond" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "while/Switch_1" op: "Switch" input: "while/Merge_1" input: "while/LoopCond" attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/Identity" op: "Identity" input: "while/Switch:1" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "while/Identity_1" op: "Identity" input: "while/Switch_1:1" attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/truediv_1/Enter" op: "Enter" input: "a" attr { key: "T" value { type: DT_FLOAT } } attr { key: "frame_name" value { s: "while/while_context" } } attr { key: "is_constant" value { b: true } } attr { key: "parallel_iterations" value { i: 10 } } }
node { name: "while/truediv_1" op: "RealDiv" input: "while/truediv_1/Enter" input: "while/Identity" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "while/add" op: "AddV2" input: "while/Identity" input: "while/truediv_1" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "while/mul_1/y" op: "Const" input: "^while/Identity" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0.5 } } } }
node { name: "while/mul_1" op: "Mul" input: "while/add" input: "while/mul_1/y" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "while/add_1/y" op: "Const" input: "^while/Identity" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
node { name: "while/add_1" op: "AddV2" input: "while/Identity_1" input: "while/add_1/y" attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/NextIteration" op: "NextIteration" input: "while/mul_1" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "while/NextIteration_1" op: "NextIteration" input: "while/add_1" attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/Exit" op: "Exit" input: "while/Switch" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "while/Exit_1" op: "Exit" input: "while/Switch_1" attr { key: "T" value { type: DT_INT32 } } }
versions { producer: 134 }
)pb";

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

  // 5. A model TensorFlow 1 froze: its tf.cond and tf.while_loop are read as an If and a While
  // (Note [TF1 conds as If], Note [TF1 while loops]); the Exit nodes keep their names.
  const Graph tf1 = graph_from_graph_def(graph_def_from_text(kTensorFlow1Newton));
  std::cout << "TensorFlow 1 graph:";
  for (const Operation& op : tf1.get_operations())
    if (op.type() == "If" || op.type() == "While") std::cout << " " << op.name() << " (" << op.type() << ")";
  Session tf1_session(tf1);
  bool tf1_same = true;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::vector<Tensor> r = tf1_session.run({tf1.get_tensor_by_name("while/Exit:0"), tf1.get_tensor_by_name("while/Exit_1:0")},
                                                  {{tf1.get_tensor_by_name("a:0"), inputs[k]}});
    tf1_same = tf1_same && same(r[0], eager[k][0]) && r[1].item<int32_t>() == eager[k][1].item<int32_t>();
  }
  std::cout << "; same as eager: " << (tf1_same ? "yes" : "NO") << "\n";
  if (!all_same || !served_same || !tf1_same) return 1;
  std::cout << "tutorial complete\n";
  return 0;
}
