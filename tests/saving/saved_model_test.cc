// Saved models: an eagerly trained MLP, traced, saved, loaded back and run through its
// signature gives the eager outputs bit for bit; signatures describe their tensors; the bundle's
// files and their failures (typed errors naming the file); freezing replaces variables by
// constants and survives a GraphDef round trip.
#include "saving/saved_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "graph/graph_def.h"
#include "graph/graph_ops.h"
#include "saving/file_io.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string make_temp_dir() {
  std::string tmpl = ::testing::TempDir() + "tapeflow_saved_model_XXXXXX";
  EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

// Same dtype, shape and bytes.
void expect_bitwise_equal(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  const std::vector<float> x = a.to_vector<float>(), y = b.to_vector<float>();
  ASSERT_EQ(x.size(), y.size());
  EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)), 0);
}

// A small MLP trained a few eager steps with fixed seeds, and its traced predict function.
struct SavedModelTest : ::testing::Test {
  void SetUp() override {
    set_seed(3);
    x = random_normal({16, 4});
    y = random_normal({16, 3});
    model(x);  // builds the weights
    nn::SGD opt(0.05);
    for (int step = 0; step < 5; ++step) {
      GradientTape tape;
      Tensor loss = reduce_mean(square(model(x) - y));
      std::vector<Variable> vars = model.trainable_variables();
      opt.apply_gradients(tape.gradient(loss, vars), vars);
    }
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  ConcreteFunction& predict_fn() { return predict.get_concrete_function({{DType::kFloat32, {-1, 4}}}); }

  std::string root = make_temp_dir();
  std::string dir = root + "/mlp";
  Tensor x, y;
  nn::Sequential model{{nn::Dense(8, nn::Activation::kRelu), nn::Dense(3)}};
  Function<std::function<Tensor(const Tensor&)>> predict{
      std::function<Tensor(const Tensor&)>([this](const Tensor& in) { return model(in); }), {.name = "predict"}};
};

TEST_F(SavedModelTest, LoadedSignatureMatchesEagerModelBitForBit) {
  save_model(dir, {{"serve", predict_fn()}});
  const Tensor eager = model(x);
  LoadedModel loaded = load_model(dir);
  const std::map<std::string, Tensor> out = loaded.signature("serve").run({{"args_0", x}});
  ASSERT_EQ(out.size(), 1u);
  expect_bitwise_equal(out.at("output_0"), eager);
  // Another batch size through the unknown batch dim.
  const Tensor x2 = random_normal({5, 4});
  expect_bitwise_equal(loaded.signature("serve").run({{"args_0", x2}}).at("output_0"), model(x2));
  // Later training does not reach the loaded copy.
  model.trainable_variables()[0].assign_add(1.f);
  expect_bitwise_equal(loaded.signature("serve").run({{"args_0", x}}).at("output_0"), eager);
}

TEST_F(SavedModelTest, SignaturesDescribeTheirTensorsAndTheBundleHasThreeFiles) {
  ConcreteFunction& cf = predict_fn();
  save_model(dir, {{"serve", cf}, {"predict", cf}});
  for (const char* f : {"graph.pb", "variables.safetensors", "saved_model.pb"})
    EXPECT_TRUE(fs::is_regular_file(dir + "/" + f)) << f;
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 3);
  EXPECT_EQ(std::distance(fs::directory_iterator(root), fs::directory_iterator()), 1);  // no tmp dir left

  LoadedModel loaded = load_model(dir);
  EXPECT_EQ(loaded.tapeflow_version(), tapeflow_version());
  ASSERT_EQ(loaded.signatures().size(), 2u);
  const Signature& s = loaded.signature("serve");
  ASSERT_EQ(s.inputs().size(), 1u);
  const TensorInfo& in = s.inputs().at("args_0");
  EXPECT_EQ(in.dtype, DType::kFloat32);
  EXPECT_EQ(in.shape, Shape({-1, 4}));
  EXPECT_EQ(in.tensor.name(), "serve/args_0:0");
  const TensorInfo& out = s.outputs().at("output_0");
  EXPECT_EQ(out.dtype, DType::kFloat32);
  EXPECT_EQ(out.shape, Shape({-1, 3}));
  EXPECT_EQ(loaded.variables().size(), 8u);  // 2 layers x (kernel, bias) x 2 signatures
  expect_bitwise_equal(loaded.signature("predict").run({{"args_0", x}}).at("output_0"), model(x));
}

TEST_F(SavedModelTest, RunChecksFeedsByNameDtypeAndShape) {
  save_model(dir, {{"serve", predict_fn()}});
  LoadedModel loaded = load_model(dir);
  const Signature& s = loaded.signature("serve");
  EXPECT_THAT(error_of([&] { s.run({{"x", x}}); }),
              AllOf(HasSubstr("[load_model] signature 'serve': unknown input 'x'"), HasSubstr("args_0")));
  EXPECT_THAT(error_of([&] { s.run({}); }), HasSubstr("input 'args_0' is not fed"));
  EXPECT_THAT(error_of([&] { s.run({{"args_0", cast(x, DType::kInt32)}}); }),
              AllOf(HasSubstr("input 'args_0'"), HasSubstr("int32")));
  EXPECT_THAT(error_of([&] { s.run({{"args_0", random_normal({2, 5})}}); }), HasSubstr("[2,5]"));
  EXPECT_THAT(error_of<NotFoundError>([&] { loaded.signature("train"); }),
              AllOf(HasSubstr("[load_model]"), HasSubstr("no signature 'train'"), HasSubstr("serve")));
}

TEST_F(SavedModelTest, SavingOverABundleNeedsOverwrite) {
  save_model(dir, {{"serve", predict_fn()}});
  EXPECT_THAT(error_of<AlreadyExistsError>([&] { save_model(dir, {{"serve", predict_fn()}}); }),
              HasSubstr("[save_model]"));
  model.trainable_variables()[1].assign_add(1.f);
  save_model(dir, {{"serve", predict_fn()}}, {.overwrite = true});
  expect_bitwise_equal(load_model(dir).signature("serve").run({{"args_0", x}}).at("output_0"), model(x));
  EXPECT_EQ(std::distance(fs::directory_iterator(root), fs::directory_iterator()), 1);
}

// The names in `root`: the bundle and nothing beside it (no "mlp.tmp-*", "mlp.old-*").
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Note [Saved model bundle]: an overwrite swaps the two directories in one step, so a reader
// looking at `dir` all along never finds it missing (the old rename-aside-then-in left a moment
// without it, and a crash there left no bundle at all).
TEST_F(SavedModelTest, OverwriteNeverLeavesTheDirectoryMissing) {
  ConcreteFunction& cf = predict_fn();
  save_model(dir, {{"serve", cf}});
  std::atomic<bool> done{false};
  std::atomic<int> looks{0}, missing{0};
  std::thread watcher([&] {
    const std::string meta = dir + "/saved_model.pb";
    while (!done.load()) {
      struct stat st {};
      if (::stat(meta.c_str(), &st) != 0) ++missing;
      ++looks;
    }
  });
  for (int i = 0; i < 20; ++i) {
    model.trainable_variables()[1].assign_add(0.25f);
    save_model(dir, {{"serve", cf}}, {.overwrite = true});
  }
  done = true;
  watcher.join();
  EXPECT_EQ(missing.load(), 0) << "of " << looks.load() << " looks";
  EXPECT_GT(looks.load(), 0);
  expect_bitwise_equal(load_model(dir).signature("serve").run({{"args_0", x}}).at("output_0"), model(x));
  EXPECT_THAT(names_in(root), ElementsAre("mlp"));
}

// Two threads of one process saving one `dir` at once used one temporary name ("<dir>.tmp-<pid>")
// and removed each other's files. Each save now has its own; with overwrite every save
// succeeds, without it the first wins and the others are AlreadyExistsError. Either way the
// bundle left is complete and loads.
TEST_F(SavedModelTest, ThreadsSavingOneDirectoryAtOnceLeaveALoadableBundle) {
  ConcreteFunction& cf = predict_fn();
  const Tensor expected = model(x);
  constexpr int kThreads = 4;
  for (const bool overwrite : {true, false}) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    std::vector<std::string> errors(kThreads);
    std::vector<int> already_exists(kThreads, 0);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        ++ready;
        while (ready.load() < kThreads) {
        }  // start together
        for (int i = 0; i < (overwrite ? 5 : 1); ++i) {
          try {
            save_model(dir, {{"serve", cf}}, {.overwrite = overwrite});
          } catch (const AlreadyExistsError& e) {
            ++already_exists[t];
            if (overwrite) errors[t] += e.message() + "\n";
          } catch (const Error& e) {
            errors[t] += e.message() + "\n";
          }
        }
      });
    for (std::thread& t : threads) t.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t << ", overwrite " << overwrite;
    if (!overwrite) {
      EXPECT_EQ(std::count(already_exists.begin(), already_exists.end(), 1), kThreads - 1);
    }
    expect_bitwise_equal(load_model(dir).signature("serve").run({{"args_0", x}}).at("output_0"), expected);
    EXPECT_THAT(names_in(root), ElementsAre("mlp")) << "overwrite " << overwrite;
  }
}

TEST_F(SavedModelTest, FailedSaveLeavesNoDirectory) {
  // The parent does not exist: creating the temporary directory fails.
  const std::string nested = root + "/missing/mlp";
  EXPECT_THAT(error_of<NotFoundError>([&] { save_model(nested, {{"serve", predict_fn()}}); }),
              HasSubstr("[save_model]"));
  EXPECT_FALSE(fs::exists(root + "/missing"));
  // A bad signature name fails before anything is written.
  EXPECT_THAT(error_of([&] { save_model(dir, {{"a b", predict_fn()}}); }), HasSubstr("signature name 'a b'"));
  EXPECT_EQ(std::distance(fs::directory_iterator(root), fs::directory_iterator()), 0);
}

TEST_F(SavedModelTest, DamagedBundlesAreTypedErrorsNamingTheFile) {
  EXPECT_THAT(error_of<NotFoundError>([&] { load_model(root + "/nothing"); }),
              AllOf(HasSubstr("[load_model]"), HasSubstr("nothing")));
  save_model(dir, {{"serve", predict_fn()}});
  {
    std::ofstream(dir + "/saved_model.pb", std::ios::binary | std::ios::trunc) << "\xff\xff\xff\xff garbage";
  }
  EXPECT_THAT(error_of<DataLossError>([&] { load_model(dir); }),
              AllOf(HasSubstr("[load_model]"), HasSubstr("saved_model.pb")));

  save_model(dir, {{"serve", predict_fn()}}, {.overwrite = true});
  {
    std::ofstream(dir + "/graph.pb", std::ios::binary | std::ios::trunc) << "\xff\xff\xff\xff garbage";
  }
  EXPECT_THAT(error_of<DataLossError>([&] { load_model(dir); }),
              AllOf(HasSubstr("[load_model]"), HasSubstr("graph.pb")));

  save_model(dir, {{"serve", predict_fn()}}, {.overwrite = true});
  fs::remove(dir + "/variables.safetensors");
  EXPECT_THAT(error_of<NotFoundError>([&] { load_model(dir); }),
              AllOf(HasSubstr("[load_model]"), HasSubstr("variables.safetensors")));

  save_model(dir, {{"serve", predict_fn()}}, {.overwrite = true});
  {
    std::ofstream(dir + "/variables.safetensors", std::ios::binary | std::ios::trunc) << "short";
  }
  EXPECT_THAT(error_of<DataLossError>([&] { load_model(dir); }),
              AllOf(HasSubstr("[load_model]"), HasSubstr("variables.safetensors")));
}

// A program with no tracing code: only load_model and run. The bundle outlives the model.
TEST_F(SavedModelTest, LoadsWithoutTheModel) {
  save_model(dir, {{"serve", predict_fn()}});
  const Tensor expected = model(x);
  LoadedModel loaded = load_model(dir);
  LoadedModel moved = std::move(loaded);  // signatures keep working after a move
  expect_bitwise_equal(moved.signature("serve").run({{"args_0", x}}).at("output_0"), expected);
}

TEST_F(SavedModelTest, CapturedTensorsAreSavedToo) {
  const Tensor shift = random_normal({3});  // more than one element: captured by reference
  auto shifted = function([&](const Tensor& in) { return model(in) + shift; });
  save_model(dir, {{"serve", shifted.get_concrete_function({{DType::kFloat32, {-1, 4}}})}});
  expect_bitwise_equal(load_model(dir).signature("serve").run({{"args_0", x}}).at("output_0"), model(x) + shift);
}

TEST_F(SavedModelTest, FreezeReplacesVariablesByConstants) {
  ConcreteFunction& cf = predict_fn();
  FrozenGraph frozen = freeze(cf.graph(), nullptr, cf.outputs());
  for (const Operation& op : frozen.graph.get_operations()) {
    EXPECT_NE(op.node().op, &kVarHandleOp) << op.node().name;
    EXPECT_NE(op.node().op, &kReadVariableOp) << op.node().name;
  }
  Session sess(frozen.graph);
  const Tensor input = frozen.graph.get_tensor_by_name("args_0:0");
  expect_bitwise_equal(sess.run(frozen.outputs[0], {{input, x}}), model(x));

  // Its GraphDef round-trips: same nodes, same outputs.
  const GraphDef def = to_graph_def(frozen.graph);
  Graph back = graph_from_graph_def(graph_def_from_binary(graph_def_to_binary(def)));
  EXPECT_EQ(graph_def_to_text(to_graph_def(back)), graph_def_to_text(def));
  Session sess2(back);
  expect_bitwise_equal(
      sess2.run(back.get_tensor_by_name(frozen.outputs[0].name()), {{back.get_tensor_by_name("args_0:0"), x}}),
      model(x));
}

TEST_F(SavedModelTest, FreezeALoadedModelUsesItsSession) {
  save_model(dir, {{"serve", predict_fn()}});
  LoadedModel loaded = load_model(dir);
  const Signature& s = loaded.signature("serve");
  FrozenGraph frozen = freeze(loaded.graph(), &loaded.session(), {s.outputs().at("output_0").tensor});
  EXPECT_TRUE(frozen.graph.global_variables().empty());
  Session sess(frozen.graph);
  expect_bitwise_equal(sess.run(frozen.outputs[0], {{frozen.graph.get_tensor_by_name("args_0:0"), x}}), model(x));
  EXPECT_THAT(error_of([&] { freeze(loaded.graph(), nullptr, {s.outputs().at("output_0").tensor}); }),
              HasSubstr("[freeze]"));
}

// A node TensorFlow colocated with a variable ("_class": "loc:@w") keeps its other
// constraints when frozen, but not the one naming the handle freeze removes: the frozen
// GraphDef must import (TensorFlow rejects a colocation with an unknown node).
TEST(FreezeTest, DropsColocationWithTheVariablesItRemoves) {
  Graph g = graph_from_graph_def(graph_def_from_text(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: 2 } } } } }
    node { name: "w" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: 2 } } } } attr { key: "shared_name" value { s: "w" } } }
    node { name: "w/init" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 2 } } } }
    node { name: "w/Assign" op: "AssignVariableOp" input: "w" input: "w/init" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "w/read" op: "ReadVariableOp" input: "w" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "anchor" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "y" op: "Mul" input: "x" input: "w/read" attr { key: "T" value { type: DT_FLOAT } }
      attr { key: "_class" value { list { s: "loc:@anchor" s: "loc:@w" } } } })pb"));
  Session sess(g);
  sess.run(g.get_operation_by_name("w/Assign"));
  FrozenGraph frozen = freeze(g, &sess, {g.get_tensor_by_name("y:0"), g.get_tensor_by_name("anchor:0")});
  EXPECT_THAT(frozen.graph.get_operation_by_name("y").node().colocate_with(), ElementsAre("anchor"));
  Session fs(frozen.graph);
  EXPECT_THAT(fs.run(frozen.outputs[0], {{frozen.graph.get_tensor_by_name("x:0"), {1.f, 3.f}}}).to_vector<float>(),
              ElementsAre(2.f, 6.f));
}

}  // namespace
}  // namespace tapeflow
