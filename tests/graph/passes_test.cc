// Graph passes (graph/passes.h): prune, constant folding and common-subexpression
// elimination. Each test builds a graph, rewrites it, checks which nodes remain by name, and
// runs old and new graphs in Sessions with the same feeds, comparing values exactly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "graph/passes.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> names(const Graph& g) {
  std::vector<std::string> out;
  for (const Operation& op : g.get_operations()) out.push_back(op.name());
  return out;
}

std::vector<std::string> control_names(const Operation& op) {
  std::vector<std::string> out;
  for (const Operation& c : op.control_inputs()) out.push_back(c.name());
  return out;
}

template <typename Fn> std::string not_found_of(Fn fn) { return error_of<NotFoundError>(fn); }

// ---- prune ----

TEST(PruneTest, KeepsWhatFetchesAndTargetsNeedWithControlInputs) {
  Graph g;
  Tensor x, y, count, dead;
  Operation init;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {3}, "x");
    auto model = name_scope("model");
    Variable w(Tensor({1.f, 2.f, 3.f}), "w");
    Variable counter(Tensor(0.f), "counter", /*trainable=*/false);
    Tensor bump = counter.assign_add(1.f);
    {
      auto deps = control_dependencies({bump});
      y = x * w.read();
    }
    count = counter.read();
    {
      auto unused = name_scope("unused");
      dead = print(x + random_uniform({3}, 0, 1, DType::kFloat32, 7), {x}, "never printed");
    }
    init = g.global_variables_initializer();
  }
  EXPECT_THAT(names(g), ElementsAre("x", "model/w", "model/w/initial_value", "model/w/Assign", "model/counter",
                                    "model/counter/initial_value", "model/counter/Assign", "model/Const",
                                    "model/AssignAddVariableOp", "model/ReadVariableOp", "model/Mul",
                                    "model/ReadVariableOp_1", "model/unused/RandomUniform", "model/unused/Add",
                                    "model/unused/Print", "model/init"));

  PassResult r = prune(g, {y, count}, {init});
  EXPECT_EQ(r.nodes_before, 16);
  EXPECT_EQ(r.nodes_after, 13);
  // The update y depends on only through a control edge stays, and so does its Const.
  EXPECT_THAT(names(r.graph), ElementsAre("x", "model/w", "model/w/initial_value", "model/w/Assign",
                                          "model/counter", "model/counter/initial_value", "model/counter/Assign",
                                          "model/Const", "model/AssignAddVariableOp", "model/ReadVariableOp",
                                          "model/Mul", "model/ReadVariableOp_1", "model/init"));
  EXPECT_THAT(control_names(producer(r.map(y))), ElementsAre("model/AssignAddVariableOp"));
  EXPECT_EQ(r.map(y).name(), "model/Mul:0");
  EXPECT_THAT(not_found_of([&] { r.map(dead); }), HasSubstr("prune removed tensor 'model/unused/Print:0'"));
  EXPECT_FALSE(r.contains(producer(dead)));
  EXPECT_TRUE(r.contains(init));

  // Same values, and the control edge still runs the update: the counter counts both runs.
  Session old_sess(g), new_sess(r.graph);
  old_sess.run(init);
  new_sess.run(r.map(init));
  for (int run = 0; run < 2; ++run) {
    const Tensor feed({2.f, -1.f, 0.5f});
    EXPECT_EQ(new_sess.run(r.map(y), {{r.map(x), feed}}).to_vector<float>(),
              old_sess.run(y, {{x, feed}}).to_vector<float>());
  }
  EXPECT_EQ(old_sess.run(count).item<float>(), 2.f);
  EXPECT_EQ(new_sess.run(r.map(count)).item<float>(), 2.f);
}

TEST(PruneTest, CarriesCollectionsVariablesAndFeedMarksForWhatRemains) {
  Graph g;
  Tensor x, y, z;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {}, "x");
    Variable kept(Tensor(2.f), "kept");
    Variable gone(Tensor(3.f), "gone");
    y = x * kept.read();
    z = x * gone.read();
    g.add_to_collection(GraphKeys::kLosses, y);
    g.add_to_collection(GraphKeys::kLosses, z);
    g.add_to_collection("notes", std::string("hello"));
    g.prevent_feeding(y, "y is computed, never given");
  }
  PassResult r = prune(g, {y});
  ASSERT_EQ(r.graph.global_variables().size(), 1u);
  EXPECT_EQ(r.graph.global_variables()[0].name(), "kept");
  EXPECT_EQ(r.graph.trainable_variables().size(), 1u);
  auto losses = r.graph.get_collection(GraphKeys::kLosses);
  ASSERT_EQ(losses.size(), 1u);
  EXPECT_EQ(std::get<Tensor>(losses[0]).name(), r.map(y).name());
  EXPECT_EQ(std::get<std::string>(r.graph.get_collection("notes").at(0)), "hello");
  EXPECT_FALSE(r.graph.is_feedable(r.map(y)));
  EXPECT_EQ(r.graph.why_not_feedable(r.map(y)), "y is computed, never given");  // the reason travels too
  EXPECT_TRUE(r.graph.is_feedable(r.map(x)));
  EXPECT_EQ(r.graph.state()->variable_nodes().size(), 1u);
}

TEST(PruneTest, RejectsTensorsOfOtherGraphsAndMapsOnlyItsSource) {
  Graph g, other;
  Tensor a, b;
  {
    auto scope = g.as_default();
    a = constant(Tensor(1.f), "a");
  }
  {
    auto scope = other.as_default();
    b = constant(Tensor(2.f), "b");
  }
  EXPECT_THAT(error_of([&] { prune(g, {b}); }), HasSubstr("[prune] fetch 'b:0' is not a tensor of this graph"));
  EXPECT_THAT(error_of([&] { prune(g, {}, {producer(b)}); }),
              HasSubstr("[prune] the target is not an operation of this graph"));
  EXPECT_THAT(error_of([&] { prune(g, {Tensor(3.f)}); }), HasSubstr("[prune] fetch"));
  PassResult r = prune(g, {a});
  EXPECT_THAT(error_of([&] { r.map(b); }), HasSubstr("[PassResult.map] the tensor is not a tensor of the graph"));
  EXPECT_THAT(error_of([&] { r.map(producer(b)); }), HasSubstr("[PassResult.map] the operation is not"));
  // The new graph's tensors are not the source's either.
  EXPECT_THAT(error_of([&] { r.map(r.map(a)); }), HasSubstr("[PassResult.map]"));
  EXPECT_EQ(prune(g, {}).nodes_after, 0);
}

// Note [Passes and variables] in graph/passes.h: a Variable stays bound to the graph that made
// it, so these two calls are refused on a rewritten graph. Enabled once GraphState can bind a
// copied variable node (see the report of the passes branch).
TEST(PruneTest, RewrittenGraphInitializesAndFetchesItsVariables) {
  Graph g;
  Tensor y;
  std::optional<Variable> v;
  {
    auto scope = g.as_default();
    v.emplace(Tensor(4.f), "w");
    y = v->read() * 2.f;
  }
  PassResult r = fold_constants(g);
  Session sess(r.graph);
  sess.run(r.graph.global_variables_initializer());
  EXPECT_EQ(sess.run(r.map(y)).item<float>(), 8.f);
  EXPECT_EQ(sess.run(*v).item<float>(), 4.f);
}

TEST(PruneTest, TheOldInitializerMapsToo) {
  Graph g;
  Tensor y, w_value;
  Operation init;
  {
    auto scope = g.as_default();
    Variable w(Tensor(4.f), "w");
    y = w.read() * 2.f;
    w_value = w.read();
    init = g.global_variables_initializer();
  }
  PassResult r = fold_constants(g);
  Session sess(r.graph);
  sess.run(r.map(init));
  EXPECT_EQ(sess.run(r.map(y)).item<float>(), 8.f);
  EXPECT_EQ(sess.run(r.map(w_value)).item<float>(), 4.f);
}

// ---- constant folding ----

TEST(FoldConstantsTest, FoldsOnlyTheConstantPartOfXTimesTwoPlusThree) {
  Graph g;
  Tensor x, sum, y, two;
  {
    auto scope = g.as_default();
    auto calc = name_scope("calc");
    x = placeholder(DType::kFloat32, {2}, "x");
    two = constant(Tensor(2.f), "two");
    {
      auto d = device("/device:CPU:0");
      sum = two + constant(Tensor(3.f), "three");
    }
    y = x * sum;
  }
  EXPECT_THAT(names(g), ElementsAre("calc/x", "calc/two", "calc/three", "calc/Add", "calc/Mul"));
  PassResult r = fold_constants(g);
  EXPECT_EQ(r.nodes_before, 5);
  EXPECT_EQ(r.nodes_after, 3);
  EXPECT_EQ(g.num_nodes(), 5);  // the source is left as it was
  EXPECT_THAT(names(r.graph), ElementsAre("calc/x", "calc/Add", "calc/Mul"));
  const Operation folded = producer(r.map(sum));
  EXPECT_EQ(folded.type(), "Const");
  EXPECT_EQ(folded.device(), producer(sum).device());
  EXPECT_EQ(folded.location().line(), producer(sum).location().line());
  EXPECT_EQ(folded.node().value.item<float>(), 5.f);
  EXPECT_EQ(producer(r.map(y)).type(), "Mul");
  EXPECT_THAT(not_found_of([&] { r.map(two); }), HasSubstr("fold_constants removed tensor 'calc/two:0'"));

  Session old_sess(g), new_sess(r.graph);
  const Tensor feed({1.5f, -2.f});
  EXPECT_EQ(new_sess.run(r.map(y), {{r.map(x), feed}}).to_vector<float>(),
            old_sess.run(y, {{x, feed}}).to_vector<float>());
}

TEST(FoldConstantsTest, NeverFoldsRandomStatefulOrGraphOps) {
  Graph g;
  Tensor rand2, printed, doubled;
  {
    auto scope = g.as_default();
    rand2 = random_uniform({3}, 0, 1, DType::kFloat32, 7) * 2.f;       // random: not folded
    printed = print(constant(Tensor(1.f)) + 1.f, {}, "side effect");  // the Add folds, the Print stays
    Variable v(Tensor(3.f), "v");
    doubled = v.read() * 2.f;                                         // a read: not folded
  }
  EXPECT_THAT(names(g), ElementsAre("RandomUniform", "Const", "Mul", "Const_1", "Const_2", "Add", "Print", "v",
                                    "v/initial_value", "v/Assign", "ReadVariableOp", "Const_3", "Mul_1"));
  PassResult r = fold_constants(g);
  EXPECT_EQ(r.nodes_after, r.nodes_before - 2);
  EXPECT_THAT(names(r.graph), ElementsAre("RandomUniform", "Const", "Mul", "Add", "Print", "v", "v/initial_value",
                                          "v/Assign", "ReadVariableOp", "Const_3", "Mul_1"));
  EXPECT_EQ(producer(r.map(rand2)).type(), "Mul");
  EXPECT_EQ(producer(r.map(printed)).type(), "Print");
  EXPECT_EQ(producer(r.map(printed)).inputs()[0].name(), "Add:0");

  Session old_sess(g), new_sess(r.graph);
  testing::internal::CaptureStderr();
  auto old_values = old_sess.run({rand2, printed});
  const std::string old_printed = testing::internal::GetCapturedStderr();
  testing::internal::CaptureStderr();
  auto new_values = new_sess.run({r.map(rand2), r.map(printed)});
  const std::string new_printed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(new_values[0].to_vector<float>(), old_values[0].to_vector<float>());  // same seeds, first run
  EXPECT_EQ(new_values[1].item<float>(), 2.f);
  EXPECT_EQ(old_printed, "side effect\n");
  EXPECT_EQ(new_printed, old_printed);
}

TEST(FoldConstantsTest, FoldsWholeChainsAndDropsWhatTheyLeaveUnused) {
  Graph g;
  Tensor x, y, leaf, prod;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {}, "x");
    Tensor a = constant(Tensor({1.f, 2.f, 3.f}), "a");
    Tensor b = constant(Tensor({4.f, 5.f, 6.f}), "b");
    prod = a * b;
    y = x + (reduce_sum(prod) + 1.f);
    leaf = a - b;  // nothing consumes it: folded, kept
  }
  EXPECT_THAT(names(g), ElementsAre("x", "a", "b", "Mul", "Sum", "Const", "Add", "Add_1", "Sub"));
  PassResult r = fold_constants(g);
  EXPECT_EQ(r.nodes_after, 4);
  EXPECT_THAT(names(r.graph), ElementsAre("x", "Add", "Add_1", "Sub"));
  EXPECT_EQ(producer(r.map(leaf)).type(), "Const");
  EXPECT_EQ(producer(r.map(y)).inputs()[1].name(), "Add:0");
  EXPECT_THAT(not_found_of([&] { r.map(prod); }), HasSubstr("removed tensor 'Mul:0'"));

  Session old_sess(g), new_sess(r.graph);
  EXPECT_EQ(new_sess.run(r.map(y), {{r.map(x), 0.25f}}).item<float>(), old_sess.run(y, {{x, 0.25f}}).item<float>());
  EXPECT_EQ(new_sess.run(r.map(y), {{r.map(x), 0.25f}}).item<float>(), 33.25f);
  EXPECT_EQ(new_sess.run(r.map(leaf)).to_vector<float>(), old_sess.run(leaf).to_vector<float>());

  // Kept ops are folded but not dropped.
  FoldOptions keep_prod;
  keep_prod.keep = {producer(prod)};
  PassResult kept = fold_constants(g, keep_prod);
  EXPECT_THAT(names(kept.graph), ElementsAre("x", "Mul", "Add", "Add_1", "Sub"));
  EXPECT_THAT(Session(kept.graph).run(kept.map(prod)).to_vector<float>(), ElementsAre(4.f, 10.f, 18.f));
}

TEST(FoldConstantsTest, AFoldedConstKeepsTheControlInputsOfWhatItReplaces) {
  Graph g;
  Tensor k, count;
  Operation init;
  {
    auto scope = g.as_default();
    Variable counter(Tensor(0.f), "counter");
    Tensor bump = counter.assign_add(1.f);
    {
      auto deps = control_dependencies({bump});
      k = constant(Tensor(2.f), "two") * 3.f;
    }
    count = counter.read();
    init = g.global_variables_initializer();
  }
  EXPECT_THAT(control_names(producer(g.get_tensor_by_name("two:0"))), ElementsAre("AssignAddVariableOp"));
  PassResult r = fold_constants(g);
  // "two", the weak 3 and the Mul become one Const that still runs after the update.
  EXPECT_EQ(r.nodes_after, r.nodes_before - 2);
  EXPECT_EQ(producer(r.map(k)).type(), "Const");
  EXPECT_THAT(control_names(producer(r.map(k))), ElementsAre("AssignAddVariableOp"));
  Session old_sess(g), new_sess(r.graph);
  old_sess.run(init);
  new_sess.run(r.map(init));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(old_sess.run(k).item<float>(), 6.f);
    EXPECT_EQ(new_sess.run(r.map(k)).item<float>(), 6.f);
  }
  EXPECT_EQ(new_sess.run(r.map(count)).item<float>(), old_sess.run(count).item<float>());
  EXPECT_EQ(new_sess.run(r.map(count)).item<float>(), 3.f);
}

TEST(FoldConstantsTest, LeavesFailingAndOversizedNodesToRunTime) {
  Graph g;
  Tensor bad, big, small;
  {
    auto scope = g.as_default();
    bad = gather(constant(Tensor({1.f, 2.f, 3.f})), constant(Tensor({5})));  // index out of range
    big = constant(Tensor({1.f, 2.f, 3.f})) + constant(Tensor({1.f, 1.f, 1.f}));
    small = constant(Tensor(1.f)) + constant(Tensor(2.f));
  }
  FoldOptions options;
  options.max_constant_bytes = 8;
  PassResult r = fold_constants(g, options);
  EXPECT_EQ(r.nodes_after, r.nodes_before - 2);  // only `small` folds
  EXPECT_EQ(producer(r.map(bad)).type(), "GatherV2");
  EXPECT_EQ(producer(r.map(big)).type(), "Add");
  EXPECT_EQ(producer(r.map(small)).type(), "Const");
  Session old_sess(g), new_sess(r.graph);
  EXPECT_THAT(error_of([&] { old_sess.run(bad); }), HasSubstr("[gather]"));
  EXPECT_THAT(error_of([&] { new_sess.run(r.map(bad)); }), HasSubstr("[gather]"));
  EXPECT_EQ(new_sess.run(r.map(big)).to_vector<float>(), old_sess.run(big).to_vector<float>());
  EXPECT_EQ(new_sess.run(r.map(small)).item<float>(), 3.f);
}

// ---- common-subexpression elimination ----

TEST(CseTest, MergesTwinsAndTheChainsThatBecomeTwins) {
  Graph g;
  Tensor a, b, t1, t2, u;
  {
    auto scope = g.as_default();
    auto f = name_scope("f");
    a = placeholder(DType::kFloat32, {2}, "a");
    b = placeholder(DType::kFloat32, {2}, "b");
    Tensor s1 = a + b;
    Tensor s2 = a + b;
    t1 = s1 * 2.f;
    t2 = s2 * 2.f;
    u = t1 + t2;
  }
  EXPECT_THAT(names(g), ElementsAre("f/a", "f/b", "f/Add", "f/Add_1", "f/Const", "f/Mul", "f/Const_1", "f/Mul_1",
                                    "f/Add_2"));
  PassResult r = eliminate_common_subexpressions(g);
  EXPECT_EQ(r.nodes_before, 9);
  EXPECT_EQ(r.nodes_after, 6);
  EXPECT_THAT(names(r.graph), ElementsAre("f/a", "f/b", "f/Add", "f/Const", "f/Mul", "f/Add_2"));
  EXPECT_EQ(r.map(t2).name(), "f/Mul:0");
  EXPECT_EQ(r.map(producer(t2)), producer(r.map(t1)));
  EXPECT_EQ(producer(r.map(u)).inputs()[1].name(), "f/Mul:0");

  Session old_sess(g), new_sess(r.graph);
  const Tensor va({1.f, 2.5f}), vb({-3.f, 0.125f});
  auto old_values = old_sess.run({t1, t2, u}, {{a, va}, {b, vb}});
  const std::vector<Tensor> mapped = r.map(std::vector<Tensor>{t1, t2, u});
  auto new_values = new_sess.run({mapped[0], mapped[1], mapped[2]}, {{r.map(a), va}, {r.map(b), vb}});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(new_values[i].to_vector<float>(), old_values[i].to_vector<float>());
}

TEST(CseTest, NeverMergesRandomPlaceholderPrintOrVariableOps) {
  Graph g;
  Tensor r1, r2, p1, p2, read1, read2;
  Operation init;
  {
    auto scope = g.as_default();
    set_seed(5);
    r1 = random_uniform({3}, 0, 1, DType::kFloat32, 7);
    set_seed(5);
    r2 = random_uniform({3}, 0, 1, DType::kFloat32, 7);
    set_seed(std::nullopt);
    p1 = placeholder(DType::kFloat32, {}, "p");
    p2 = placeholder(DType::kFloat32, {}, "p");
    print(p1, {}, "hi");
    print(p1, {}, "hi");
    Variable v(Tensor(1.f), "v");
    read1 = v.read();
    read2 = v.read();
    init = g.global_variables_initializer();
  }
  EXPECT_EQ(producer(r1).attrs().to_string(), producer(r2).attrs().to_string());
  PassResult r = eliminate_common_subexpressions(g);
  EXPECT_EQ(r.nodes_after, r.nodes_before);
  EXPECT_EQ(names(r.graph), names(g));
  EXPECT_NE(r.map(r1).name(), r.map(r2).name());

  Session old_sess(g), new_sess(r.graph);
  auto old_values = old_sess.run({r1, r2});
  auto new_values = new_sess.run({r.map(r1), r.map(r2)});
  EXPECT_EQ(new_values[0].to_vector<float>(), old_values[0].to_vector<float>());
  EXPECT_EQ(new_values[1].to_vector<float>(), old_values[1].to_vector<float>());
  new_sess.run(r.map(init));
  EXPECT_EQ(new_sess.run(r.map(read2)).item<float>(), 1.f);
}

TEST(CseTest, AttrsDevicesControlInputsAndConstBytesMustAllMatch) {
  Graph g;
  std::vector<Tensor> outs;
  {
    auto scope = g.as_default();
    Tensor x = placeholder(DType::kFloat32, {2, 2}, "x");
    outs.push_back(reduce_sum(x, {0}));                    // Sum
    outs.push_back(reduce_sum(x, {1}));                    // Sum_1: other axes
    {
      auto d = device("/device:CPU:0");
      outs.push_back(reduce_sum(x, {0}));                  // Sum_2: other device
    }
    {
      auto deps = control_dependencies({producer(outs[0])});
      outs.push_back(reduce_sum(x, {1}));                  // Sum_3: other control inputs
    }
    outs.push_back(constant(Tensor(0.f), "zero"));
    outs.push_back(constant(Tensor(-0.f), "minus_zero"));  // other bytes
    outs.push_back(constant(Tensor(0), "int_zero"));       // other dtype
    outs.push_back(constant(Tensor({1.f, 2.f}), "row"));
    outs.push_back(constant(Tensor({1.f, 2.f}), "row_again"));       // merged into "row"
    outs.push_back(constant(Tensor({{1.f}, {2.f}}), "column"));      // other shape
    outs.push_back(reduce_sum(x, {0}));                    // Sum_4: merged into Sum
  }
  PassResult r = eliminate_common_subexpressions(g);
  EXPECT_EQ(r.nodes_after, r.nodes_before - 2);
  EXPECT_THAT(names(r.graph), ElementsAre("x", "Sum", "Sum_1", "Sum_2", "Sum_3", "zero", "minus_zero", "int_zero",
                                          "row", "column"));
  EXPECT_EQ(r.map(outs[8]).name(), "row:0");
  EXPECT_EQ(r.map(outs[10]).name(), "Sum:0");

  Session old_sess(g), new_sess(r.graph);
  const Tensor feed({{1.f, 2.f}, {3.f, 4.f}});
  auto old_values = old_sess.run(std::vector<Fetch>(outs.begin(), outs.end()), {{g.get_tensor_by_name("x:0"), feed}});
  std::vector<Fetch> new_fetches;
  for (const Tensor& t : outs) new_fetches.push_back(r.map(t));
  auto new_values = new_sess.run(new_fetches, {{r.graph.get_tensor_by_name("x:0"), feed}});
  for (size_t i = 0; i < outs.size(); ++i) EXPECT_EQ(new_values[i].to_string(), old_values[i].to_string()) << i;
}

TEST(CseTest, KeptOpsAreNotMergedAway) {
  Graph g;
  Tensor s1, s2, s3;
  {
    auto scope = g.as_default();
    Tensor a = placeholder(DType::kFloat32, {}, "a");
    s1 = a * a;
    s2 = a * a;
    s3 = a * a;
  }
  PassResult r = eliminate_common_subexpressions(g, {producer(s2)});
  EXPECT_THAT(names(r.graph), ElementsAre("a", "Mul", "Mul_1"));
  EXPECT_EQ(r.map(s3).name(), "Mul:0");
  EXPECT_EQ(r.map(s2).name(), "Mul_1:0");
}

// ---- passes together ----

TEST(PassChainTest, FoldThenCseThenPruneComposesTheMaps) {
  Graph g;
  Tensor x, y, z;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    Tensor c1 = constant(Tensor(1.f)) + constant(Tensor(2.f));   // folds to 3
    Tensor c2 = constant(Tensor(4.f)) - constant(Tensor(1.f));   // folds to 3 as well
    y = x * c1 + x * c2;                                         // CSE merges the two products
    z = print(x, {x}, "unused");                                 // pruned
  }
  PassResult folded = fold_constants(g);
  PassResult merged = eliminate_common_subexpressions(folded.graph);
  PassResult pruned = prune(merged.graph, {merged.map(folded.map(y))});
  PassResult all = chain(chain(folded, merged), pruned);
  EXPECT_EQ(all.nodes_before, g.num_nodes());
  EXPECT_EQ(all.nodes_after, pruned.graph.num_nodes());
  EXPECT_THAT(names(all.graph), ElementsAre("x", "Add", "Mul", "Add_1"));
  EXPECT_FALSE(all.contains(producer(z)));
  Session old_sess(g), new_sess(all.graph);
  const Tensor feed({0.5f, -1.f});
  EXPECT_EQ(new_sess.run(all.map(y), {{all.map(x), feed}}).to_vector<float>(),
            old_sess.run(y, {{x, feed}}).to_vector<float>());
  EXPECT_THAT(error_of([&] { chain(merged, folded); }), HasSubstr("[chain]"));
}

}  // namespace
}  // namespace tapeflow
