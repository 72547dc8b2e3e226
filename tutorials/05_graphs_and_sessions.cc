// Tutorial 05: graphs and sessions.
//
// TensorFlow 1's low-level programming model, step by step, following the "Graphs and Sessions"
// guide: first describe a computation as a dataflow graph (ops are nodes, tensors are edges),
// then create a Session to run parts of it. Every example of the guide is here, in order, with
// the same names and values; where tapeflow cannot do what the guide shows (a remote session,
// TensorBoard, replica_device_setter, string tensors), the program says so instead of faking it.
//
// tapeflow is eager-first (like TensorFlow 2): ops run at once unless a graph is the default.
// `auto building = get_default_graph().as_default();` is how a C++ program says "from here on,
// build the default graph", which a TensorFlow 1 Python program did implicitly.
//
// Build and run: cmake --build build --target 05_graphs_and_sessions && ./build/tutorials/05_graphs_and_sessions
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph_def.h"
#include "tapeflow.h"

using namespace tapeflow;

namespace {

void section(const std::string& title) { std::cout << "\n=== " << title << " ===\n"; }

void note(const std::string& text) { std::cout << "note: " << text << "\n"; }

// The ops of `g` created since it had `first` nodes: "name (Type) device".
void print_ops_since(const Graph& g, int first) {
  const std::vector<Operation> ops = g.get_operations();
  for (size_t i = static_cast<size_t>(first); i < ops.size(); ++i) {
    const std::string dev = ops[i].device();
    std::cout << "  " << ops[i].name() << " (" << ops[i].type() << ") requested device: "
              << (dev.empty() ? "(none)" : dev) << "\n";
  }
}

std::string op_list(const std::vector<Operation>& ops) {
  std::string out = "[";
  for (size_t i = 0; i < ops.size(); ++i) out += (i ? ", " : "") + ops[i].name();
  return out + "]";
}

}  // namespace

int main() {
  set_seed(42);  // the random values below are the same on every run
  std::cout << std::boolalpha;

  // ---------------------------------------------------------------------------------------
  section("1. Building a graph");
  // From here on every op call adds a node to the default graph and returns a symbolic
  // tensor: a name for a value that only a Session computes.
  Graph g = get_default_graph();
  auto building = g.as_default();

  Tensor answer_42 = constant(Tensor(42.0f));  // tf.constant(42.0): one op, named "Const"
  std::cout << "constant(42.0) -> " << answer_42 << "\n";
  Tensor a = constant(Tensor({{1.f, 2.f}, {3.f, 4.f}}), "a");
  Tensor b = constant(Tensor({{1.f}, {1.f}}), "b");
  Tensor product = matmul(a, b);  // tf.matmul(x, y): one op, "MatMul"
  std::cout << "matmul(a, b)   -> " << product << "\n";
  // tf.Variable(0): an op that stores a value between runs, plus its initial value and the
  // initializer that assigns it.
  Variable v(Tensor(0), "Variable");
  Tensor increment = v.assign_add(1);  // an op that, when run, updates the stored value
  std::cout << "the graph now holds: " << op_list(g.get_operations()) << "\n";
  std::cout << "nothing has been computed yet; a Session runs what we ask for:\n";
  {
    Session sess;  // on the default graph
    std::cout << "  matmul(a, b) = " << sess.run(product) << "\n";
    sess.run(initializer(v));
    sess.run(increment);
    std::cout << "  v after one increment = " << sess.run(v) << "\n";
  }
  // The guide's fourth bullet, Optimizer.minimize, adds gradient ops to the graph: section 9.

  // ---------------------------------------------------------------------------------------
  section("2. Naming operations");
  // The `name` argument names one op; name scopes prefix every op made inside them. Names
  // already used get "_1", "_2", ... (scopes too).
  Tensor c_0 = constant(Tensor(0), "c");  // => operation named "c"
  Tensor c_1 = constant(Tensor(2), "c");  // => "c_1": already-used names are uniquified
  Tensor c_2, c_3, c_4, c_5;
  {
    auto outer = name_scope("outer");
    c_2 = constant(Tensor(2), "c");  // => "outer/c"
    {
      auto inner = name_scope("inner");
      c_3 = constant(Tensor(3), "c");  // => "outer/inner/c": scopes nest like paths
    }
    c_4 = constant(Tensor(4), "c");  // => "outer/c_1": leaving a scope returns to the prefix
    {
      auto inner = name_scope("inner");
      c_5 = constant(Tensor(5), "c");  // => "outer/inner_1/c": scopes are uniquified too
    }
  }
  for (const Tensor& t : {c_0, c_1, c_2, c_3, c_4, c_5}) std::cout << t.name() << "\n";
  // A tensor is named "<op name>:<output index>".
  Tensor answer = constant(Tensor(42.0f), "answer");
  std::cout << "constant(42.0, \"answer\") -> " << answer.name() << "\n";
  Tensor answer_again = constant(Tensor(42.0f), "answer");
  std::cout << "a second \"answer\" -> " << answer_again.name() << "\n";

  // ---------------------------------------------------------------------------------------
  section("3. Placing operations on different devices");
  // A device scope records the device each op created inside it asks for:
  //   /job:<JOB_NAME>/task:<TASK_INDEX>/device:<DEVICE_TYPE>:<DEVICE_INDEX>
  // The Session places each op when it plans a run.
  int first = g.num_nodes();
  Tensor weights = random_normal({2, 3});  // no scope: the Session picks the best device
  Tensor img, result;
  {
    auto cpu = device("/device:CPU:0");
    // The guide decodes "img.jpg" here (tf.decode_jpeg(tf.read_file(...))); tapeflow has no
    // image or file ops, so a constant stands in for the decoded image.
    img = constant(Tensor({{1.f}, {2.f}, {3.f}}), "img");
  }
  {
    auto gpu = device("/device:GPU:0");
    result = matmul(weights, img);
  }
  print_ops_since(g, first);
  note("tapeflow has no image/file ops: a constant stands in for decode_jpeg(read_file(\"img.jpg\"))");
  {
    // This machine may have no GPU: soft placement runs the GPU-pinned matmul on the CPU.
    SessionOptions config;
    config.allow_soft_placement = true;
    Session sess(config);
    std::cout << "result (soft placement) = " << sess.run(result).shape().to_string() << " matrix\n";
  }

  // The parameter-server layout: variables on "/job:ps" tasks, the computation on "/job:worker".
  first = g.num_nodes();
  Tensor train_batch = placeholder(DType::kFloat32, {-1, 784}, "train_batch");
  // (std::optional only because the variables must be made inside the scopes; assigning a
  // Variable copies the handle.)
  std::optional<Variable> weights_1, biases_1, weights_2, biases_2;
  {
    auto ps0 = device("/job:ps/task:0");
    weights_1 = Variable(truncated_normal({784, 100}), "weights_1");
    biases_1 = Variable(zeros({100}), "biases_1");
  }
  {
    auto ps1 = device("/job:ps/task:1");
    weights_2 = Variable(truncated_normal({100, 10}), "weights_2");
    biases_2 = Variable(zeros({10}), "biases_2");
  }
  Tensor layer_1, layer_2;
  {
    auto worker = device("/job:worker");
    layer_1 = matmul(train_batch, *weights_1) + *biases_1;
    // The guide writes matmul(train_batch, weights_2) here, which cannot work ([?,784] x
    // [100,10]); the second layer takes the first layer's output.
    layer_2 = matmul(layer_1, *weights_2) + *biases_2;
  }
  print_ops_since(g, first);
  // Fed values are data, not ops: while a graph is being built zeros() would add a node, so a
  // batch is made from host values (NumPy's role in the guide).
  const Tensor batch(std::vector<float>(2 * 784, 0.5f), Shape{2, 784});
  {
    // This process is not a ps or worker task. Asking for those devices is an error...
    Session strict;
    try {
      strict.run(layer_2, {{train_batch, batch}});
    } catch (const InvalidArgumentError& e) {
      std::cout << "without soft placement: " << e.what() << "\n";
    }
    // ...unless soft placement may run them on a local device: what can run here does.
    SessionOptions config;
    config.allow_soft_placement = true;
    Session sess(config);
    sess.run(global_variables_initializer());
    std::cout << "with allow_soft_placement: layer_2 for a batch of 2 = "
              << sess.run(layer_2, {{train_batch, batch}}) << "\n";
  }
  note("tapeflow runs one process: /job:ps and /job:worker are recorded on each op but there is "
       "no cluster to send them to (no tf.train.ClusterSpec or tf.train.Server)");

  // replica_device_setter is a device function: used as a device scope, it puts variables
  // round-robin on the ps tasks and every other op on the worker.
  {
    auto setter = device(replica_device_setter(/*ps_tasks=*/3));
    Variable w_0(zeros({784, 100}), "w_0");  // placed on "/job:ps/task:0"
    Variable b_0(zeros({100}), "b_0");       // placed on "/job:ps/task:1"
    Variable w_1(zeros({100, 10}), "w_1");   // placed on "/job:ps/task:2"
    Variable b_1(zeros({10}), "b_1");        // placed on "/job:ps/task:0"
    Tensor input_data = placeholder(DType::kFloat32, {-1, 784}, "input_data");  // "/job:worker"
    Tensor layer_0 = matmul(input_data, w_0) + b_0;                             // "/job:worker"
    Tensor layer_1 = matmul(layer_0, w_1) + b_1;                                // "/job:worker"
    std::cout << "with device(replica_device_setter(3)):\n";
    for (const Variable* v : {&w_0, &b_0, &w_1, &b_1})
      std::cout << "  " << v->name() << " -> " << g.get_operation_by_name(v->name()).device() << "\n";
    for (const Tensor& t : {input_data, layer_0, layer_1})
      std::cout << "  " << producer(t).name() << " (" << producer(t).type() << ") -> " << producer(t).device() << "\n";
    // Placement happens when a Session plans a run: this process has no ps job, so the run fails
    // before anything runs, naming the first variable, what it asked for and the devices there are.
    Session strict;
    try {
      strict.run(layer_1, {{input_data, batch}});
    } catch (const InvalidArgumentError& e) {
      std::cout << "run without soft placement: " << std::string(e.what()).substr(0, 120) << "...\n";
    }
  }

  // ---------------------------------------------------------------------------------------
  section("4. Tensor-like objects");
  // Ops take tensors, and also things that convert to tensors: a Variable (read where a
  // tensor is needed), an initializer list, a plain C++ number.
  Variable m(Tensor({{2.f, 0.f}, {0.f, 2.f}}), "m");
  Tensor from_variable = matmul(a, m);  // the Variable becomes a read of it
  std::cout << "matmul(a, m) reads m through " << producer(from_variable).inputs()[1].name() << " ("
            << producer(producer(from_variable).inputs()[1]).type() << ")\n";
  Tensor from_list = matmul({{37.f, -23.f}}, {{1.f}, {2.f}});  // nested lists of numbers
  Tensor from_number = from_list * 2;                          // a number takes the tensor's dtype
  Tensor from_lists = stack({a, m, {{1.f, 1.f}, {1.f, 1.f}}});   // a list of tensor-like objects
  std::cout << "matmul({{37, -23}}, {{1}, {2}}) is " << from_list << "; times 2 is " << from_number << "\n";
  std::cout << "stack({a, m, {{1, 1}, {1, 1}}}) is " << from_lists << "\n";
  // Each use of a concrete tensor (data made outside the graph, NumPy's role in the guide)
  // adds a Const node. tapeflow's Const shares the tensor's buffer (no copy), but to add one
  // node only, convert it once with constant(). (ones() here would add a Fill op instead.)
  const Tensor big(std::vector<float>(1000 * 1000, 1.f), Shape{1000, 1000});
  Tensor use_1 = big + 1.f, use_2 = big * 2.f;
  const Operation const_1 = producer(producer(use_1).inputs()[0]);
  const Operation const_2 = producer(producer(use_2).inputs()[0]);
  std::cout << "big used twice: " << const_1.name() << " and " << const_2.name()
            << "; both share big's buffer: "
            << (const_1.node().value.shares_buffer_with(big) && const_2.node().value.shares_buffer_with(big)) << "\n";
  Tensor big_once = constant(big, "big");
  Tensor use_3 = big_once + 1.f, use_4 = big_once * 2.f;
  std::cout << "after constant(big): " << producer(use_3).inputs()[0].name() << " and "
            << producer(use_4).inputs()[0].name() << "\n";
  {
    Session sess;
    sess.run(initializer(m));
    auto r = sess.run({from_variable, from_list, from_number});
    std::cout << "values: " << r[0] << ", " << r[1] << ", " << r[2] << "\n";
  }

  // ---------------------------------------------------------------------------------------
  section("5. Creating a Session");
  {
    Session sess;  // an in-process session on the default graph; closes when it goes out of scope
    std::cout << "Session() runs the default graph: " << (sess.graph() == g ? "true" : "false") << "\n";
  }
  try {
    SessionOptions remote;
    remote.target = "grpc://example.org:2222";
    Session sess(remote);
  } catch (const UnimplementedError& e) {
    std::cout << "Session(\"grpc://example.org:2222\"): " << e.what() << "\n";
  }
  note("remote (grpc://) sessions are not implemented: tapeflow runs graphs in this process only");
  {
    // config: tapeflow's SessionOptions are the ConfigProto fields it supports.
    SessionOptions config;
    config.allow_soft_placement = true;      // CPU-only ops pinned to a GPU run on the CPU
    config.log_device_placement = true;      // each op's device, printed (to stderr) when planned
    config.gpu_options.allow_growth = true;  // stored for the CUDA allocator (no GPU here)
    Session sess(config);
    std::cout << "log_device_placement prints each op's device when a run is planned (stderr):\n" << std::flush;
    sess.run(product);
    std::cerr << std::flush;
  }
  note("ConfigProto's cluster_def and graph_options.optimizer_options have no tapeflow counterpart");

  // ---------------------------------------------------------------------------------------
  section("6. Session::run executes the subgraph its fetches need");
  Tensor x = constant(Tensor({{37.f, -23.f}, {1.f, 4.f}}));
  Variable w(random_uniform({2, 2}), "w");
  Tensor y = matmul(x, w);
  Tensor output = softmax(y);
  Operation init_op = initializer(w);
  {
    Session sess;
    sess.run(init_op);  // run the initializer of `w`
    // Evaluate `output`: only x, w's read, y and output run.
    std::cout << "output = " << sess.run(output) << "\n";
    // Evaluate `y` and `output`: y is computed once, for both (the trace counts the MatMuls).
    RunOptions trace;
    trace.trace_level = RunOptions::TraceLevel::kFullTrace;
    RunMetadata md;
    auto values = sess.run({y, output}, {}, {}, &trace, &md);
    std::cout << "y_val = " << values[0] << "\noutput_val = " << values[1] << "\n";
    int matmuls = 0;
    for (const NodeExecStats& n : md.step_stats.nodes) matmuls += n.op == "MatMul";
    std::cout << "MatMul ran " << matmuls << " time(s) for both fetches\n";
  }

  // ---------------------------------------------------------------------------------------
  section("7. Feeding values");
  // A placeholder is a value promised for later: a vector of three floats.
  Tensor px = placeholder(DType::kFloat32, {3});
  Tensor py = square(px);
  {
    Session sess;
    // Feeding a value changes the result that is returned when you evaluate `y`.
    std::cout << sess.run(py, {{px, {1.0f, 2.0f, 3.0f}}}) << "\n";  // => [1. 4. 9.]
    std::cout << sess.run(py, {{px, {0.0f, 0.0f, 5.0f}}}) << "\n";  // => [0. 0. 25.]
    // An InvalidArgumentError: y depends on the placeholder, so a value must be fed.
    try {
      sess.run(py);
    } catch (const InvalidArgumentError& e) {
      std::cout << "caught InvalidArgumentError: " << e.what() << "\n";
    }
    // The shape of 37.0 does not match the placeholder's (TensorFlow raises ValueError here;
    // tapeflow's error is an InvalidArgumentError, raised before anything runs).
    try {
      sess.run(py, {{px, 37.0}});
    } catch (const InvalidArgumentError& e) {
      std::cout << "caught InvalidArgumentError: " << e.what() << "\n";
    }
  }
  // Any tensor can be fed, not only placeholders: feeding `sum` cuts the graph there.
  Tensor sum = add(2, 5);
  Tensor times_3 = mul(sum, 3);
  {
    Session sess;
    std::cout << "add(2, 5) * 3 = " << sess.run(times_3) << "; feeding 15 for the sum: "
              << sess.run(times_3, {{sum, 15}}) << "\n";
  }

  // ---------------------------------------------------------------------------------------
  section("8. Run options and run metadata");
  Tensor traced = matmul({{37.0f, -23.0f}, {1.0f, 4.0f}}, random_uniform({2, 2}));
  {
    Session sess;
    RunOptions options;  // options for this run() call
    options.output_partition_graphs = true;
    options.trace_level = RunOptions::TraceLevel::kFullTrace;
    RunMetadata metadata;  // filled in by the run
    sess.run(traced, {}, options, &metadata);
    // The subgraphs that executed on each device.
    for (const PartitionGraph& p : metadata.partition_graphs) std::cout << p.to_string();
    // The timings of each operation that executed.
    std::cout << "step stats:\n" << metadata.step_stats.to_string();
  }

  // ---------------------------------------------------------------------------------------
  section("9. Visualizing your graph");
  // The guide passes sess.graph to a tf.summary.FileWriter and opens TensorBoard. tapeflow
  // writes no event files; Graph::to_string() lists the nodes (name = Type(inputs) device).
  note("tf.summary.FileWriter / TensorBoard are not available; printing Graph::to_string() instead");
  {
    Graph small;
    auto scope = small.as_default();
    Tensor sx = constant(Tensor({{37.f, -23.f}, {1.f, 4.f}}), "x");
    Variable sw(random_uniform({2, 2}), "w");
    Tensor sy = matmul(sx, sw);
    Tensor loss;
    {
      auto l = name_scope("loss");
      loss = reduce_mean(square(sy));
    }
    // The guide uses tf.train.AdagradOptimizer(0.01); tapeflow has SGD, Adam and RMSprop. The
    // train op computes the gradients in the graph (gradients() nodes) and updates w.
    nn::SGD optimizer(1e-4);
    Operation train_op = optimizer.minimize(loss);
    Session sess(small);
    sess.run(small.global_variables_initializer());
    std::cout << "loss before training: " << sess.run(loss).item<float>() << "\n";
    for (int i = 0; i < 1000; ++i) sess.run(train_op);
    std::cout << "loss after 1000 runs of " << train_op.name() << ": " << sess.run(loss).item<float>() << "\n";
    std::cout << "the graph has " << small.num_nodes() << " nodes; the forward part:\n";
    const std::string text = small.to_string();
    std::cout << text.substr(0, text.find("gradients/")) << "...\n";
  }

  // ---------------------------------------------------------------------------------------
  section("10. Programming with multiple graphs");
  Graph g_1;
  Tensor c, d;
  std::unique_ptr<Session> sess_1, sess_2;
  {
    auto scope = g_1.as_default();
    // Operations created in this scope are added to g_1. (The guide's constant is the string
    // "Node in g_1"; tapeflow has no string tensors, so it holds a number.)
    c = constant(Tensor(1.f), "c");
    // Sessions created in this scope run operations from g_1.
    sess_1 = std::make_unique<Session>();
  }
  Graph g_2;
  {
    auto scope = g_2.as_default();
    d = constant(Tensor(2.f), "d");
  }
  // Alternatively, pass a graph when constructing a Session: sess_2 runs operations from g_2.
  sess_2 = std::make_unique<Session>(g_2);
  note("tapeflow has no string tensors: c and d hold 1 and 2 instead of \"Node in g_1\" and \"Node in g_2\"");
  std::cout << "c.graph is g_1: " << (producer(c).graph() == g_1) << "\n";
  std::cout << "sess_1.graph is g_1: " << (sess_1->graph() == g_1) << "\n";
  std::cout << "d.graph is g_2: " << (producer(d).graph() == g_2) << "\n";
  std::cout << "sess_2.graph is g_2: " << (sess_2->graph() == g_2) << "\n";
  if (!(producer(c).graph() == g_1 && sess_1->graph() == g_1 && producer(d).graph() == g_2 &&
        sess_2->graph() == g_2)) {
    std::cout << "assertion failed: graphs\n";
    return 1;
  }
  std::cout << "sess_1.run(c) = " << sess_1->run(c) << ", sess_2.run(d) = " << sess_2->run(d) << "\n";
  try {
    sess_1->run(d);  // d is not in sess_1's graph
  } catch (const InvalidArgumentError& e) {
    std::cout << "sess_1.run(d): " << e.what() << "\n";
  }
  // Print all of the operations in the default graph (back to the one of sections 1-8).
  Graph current = get_default_graph();
  const std::vector<Operation> all_ops = current.get_operations();
  std::cout << "get_default_graph() is the graph of sections 1-8: " << (current == g) << "; its "
            << all_ops.size() << " operations:\n" << op_list(all_ops) << "\n";

  // ---------------------------------------------------------------------------------------
  section("11. Collections");
  // Creating a Variable adds it to the "global variables" and "trainable variables"
  // collections; optimizers and savers use them as their defaults.
  auto names = [](const std::vector<Variable>& vs) {
    std::string out;
    for (const Variable& var : vs) out += (out.empty() ? "" : ", ") + var.name();
    return out;
  };
  Variable step(Tensor(0), "global_step", /*trainable=*/false);
  std::cout << "global variables: " << names(g.global_variables()) << "\n";
  std::cout << "trainable variables: " << names(g.trainable_variables()) << "\n";
  // Any list of objects can be kept under a key of your own.
  g.add_to_collection("my_losses", output);
  g.add_to_collection("my_losses", std::string("a note"));
  std::cout << "collection \"my_losses\" holds " << g.get_collection("my_losses").size() << " items; first: "
            << std::get<Tensor>(g.get_collection("my_losses")[0]).name() << "\n";

  // ---------------------------------------------------------------------------------------
  section("12. Control dependencies");
  // Variables are mutable, so which value a read sees matters. A read made under
  // control_dependencies({assignment}) runs after the assignment and sees its result.
  Variable counter(Tensor(0.f), "v");  // tf.get_variable("v", shape=(), zeros_initializer())
  Tensor assignment = counter.assign_add(1.f);
  Tensor read_after;
  {
    auto deps = control_dependencies({assignment});
    read_after = counter.read();  // guaranteed to reflect v's value after the assign_add
  }
  {
    Session sess;
    sess.run(initializer(counter));
    std::cout << "read_value after assign_add: " << sess.run(read_after);
    std::cout << ", then " << sess.run(read_after) << "\n";
  }
  // tf.Print is an op too: it prints only when something that needs its output runs.
  Tensor t = constant(Tensor({1.f, 2.f}), "t");
  t = print(t, {t}, "t =");
  Tensor t_plus_1 = t + 1.f;
  {
    Session sess;
    std::cout << "evaluating t + 1 prints t (to stderr):\n" << std::flush;
    std::cout << "t + 1 = " << sess.run(t_plus_1) << "\n";
  }

  // ---------------------------------------------------------------------------------------
  section("13. InteractiveSession");
  {
    // An InteractiveSession is the default session while it lives: eval(tensor) and
    // run(operation) use it, as tensor.eval() and op.run() do in Python.
    InteractiveSession sess;
    Tensor a5 = constant(Tensor(5.0f));
    Tensor b6 = constant(Tensor(6.0f));
    Tensor c30 = a5 * b6;
    Variable xv(Tensor({1.0f, 2.0f}), "x");
    run(initializer(xv));  // x.initializer.run()
    std::cout << "c.eval() = " << eval(c30) << "\n";
    std::cout << "x.eval() = " << eval(xv.read()) << "\n";
    sess.close();
  }
  // Lazy loading: an op made inside a loop adds a node on every pass. Build it once instead.
  {
    Variable lx(Tensor(10), "lx"), ly(Tensor(20), "ly");
    Session sess;
    sess.run(variables_initializer({lx, ly}));
    const int before = g.num_nodes();
    for (int i = 0; i < 10; ++i) sess.run(add(lx, ly));
    std::cout << "ten runs of add(x, y) built in the loop added " << g.num_nodes() - before << " nodes\n";
    const int before_once = g.num_nodes();
    Tensor z = add(lx, ly);
    for (int i = 0; i < 10; ++i) sess.run(z);
    std::cout << "built once and run ten times: " << g.num_nodes() - before_once << " nodes; z = " << sess.run(z)
              << "\n";
  }

  // ---------------------------------------------------------------------------------------
  section("14. Where each node came from");
  {
    // Every node remembers the line of user code that created it (errors and Graph::to_string
    // print it), including the reads, initializers and assignments a Variable adds for you.
    const std::string this_file = "05_graphs_and_sessions.cc";
    int total = 0;
    std::vector<std::string> elsewhere;
    for (const Graph* graph : {&g, &g_1, &g_2}) {
      for (const Operation& op : graph->get_operations()) {
        ++total;
        const std::string file = op.location().file_name();
        if (file.size() < this_file.size() || file.compare(file.size() - this_file.size(), std::string::npos, this_file) != 0)
          elsewhere.push_back(op.name() + " (" + file + ":" + std::to_string(op.location().line()) + ")");
      }
    }
    const Operation c1 = g.get_operation_by_name("c_1");
    std::cout << "c_1 was created at " << this_file << ":" << c1.location().line() << "\n";
    if (elsewhere.empty()) {
      std::cout << "all " << total << " nodes of the three graphs were created by lines of " << this_file << "\n";
    } else {
      std::cout << elsewhere.size() << " of " << total << " nodes were created elsewhere:\n";
      for (const std::string& e : elsewhere) std::cout << "  " << e << "\n";
    }
  }

  // ---------------------------------------------------------------------------------------
  section("15. The graph leaves the process: a GraphDef");
  // to_graph_def is tf.Graph.as_graph_def(): TensorFlow's GraphDef, with TensorFlow's op types,
  // attrs and wire format, which write_graph_def puts in a file and another program (tapeflow's
  // or TensorFlow 1.x's) imports. Here the bytes are read straight back into a new graph.
  {
    const GraphDef def = to_graph_def(g);
    const std::string bytes = graph_def_to_binary(def);
    Graph back = graph_from_graph_def(graph_def_from_binary(bytes));
    Session here, there(back);
    const Tensor x_value({1.0f, 2.0f, 3.0f});
    const Tensor y_here = here.run(py, {{px, x_value}});
    const Tensor y_there = there.run(back.get_tensor_by_name(py.name()), {{back.get_tensor_by_name(px.name()), x_value}});
    const bool same = y_here.to_vector<float>() == y_there.to_vector<float>() &&
                      here.run(times_3).item<int32_t>() == there.run(back.get_tensor_by_name(times_3.name())).item<int32_t>();
    std::cout << "the default graph: " << def.node_size() << " nodes, " << bytes.size() << " bytes as a GraphDef\n"
              << "read back: " << py.name() << " = " << y_there << ", " << times_3.name() << " = "
              << there.run(back.get_tensor_by_name(times_3.name())) << (same ? " (bit-identical)" : " (DIFFERENT)") << "\n";
  }

  std::cout << "\ntutorial complete\n";
  return 0;
}
