// Writes a small saved model and .npy files for the end-to-end tests of the `tapeflow` tool
// and of the find_package programs (tests/tools/cli_test.sh, scripts/install_test.sh):
//
//   make_test_bundle OUT_DIR
//
//   OUT_DIR/model/                  signatures "serve": args_0 float32 [?,3] -> output_0 =
//                                   args_0 @ w + b (float32 [?,2]), output_1 = argmax (int64);
//                                   "add": args_0, args_1 int32 [?] -> output_0 = their sum
//   OUT_DIR/x.npy                   [[1, 1, 1], [1, 0, -1]]
//   OUT_DIR/expected_output_0.npy   the eager results for x (what the tool must write)
//   OUT_DIR/expected_output_1.npy
//   OUT_DIR/outer/                  signature "serve": args_0 int32 [?] -> output_0 = the outer
//                                   sum x[:, None] + x[None, :], int32 [?,?]: n inputs ask for
//                                   n * n outputs, so a run can fail in the middle of the graph
// with w = [[1, 2], [3, 4], [5, 6]] and b = [0.5, -0.5], so output_0 is [[9.5, 11.5], [-3.5, -4.5]].
#include <filesystem>
#include <iostream>

#include "saving/npy.h"
#include "tapeflow.h"

using namespace tapeflow;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_test_bundle OUT_DIR\n";
    return 2;
  }
  const std::string out = argv[1];
  try {
    std::filesystem::create_directories(out);
    Variable w(Tensor({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}}), "w");
    Variable b(Tensor({0.5f, -0.5f}), "b");
    auto model = [&](const Tensor& x) { return matmul(x, w) + b; };
    auto serve = function(
        [&](const Tensor& x) {
          Tensor y = model(x);
          return std::vector<Tensor>{y, argmax(y, 1)};
        },
        {.name = "serve"});
    auto add_fn = function([](const Tensor& a, const Tensor& c) { return a + c; }, {.name = "add"});
    save_model(out + "/model",
               {{"serve", serve.get_concrete_function({{DType::kFloat32, {-1, 3}}})},
                {"add", add_fn.get_concrete_function({{DType::kInt32, {-1}}, {DType::kInt32, {-1}}})}},
               {.overwrite = true});
    auto outer = function([](const Tensor& v) { return reshape(v, {-1, 1}) + reshape(v, {1, -1}); }, {.name = "outer"});
    save_model(out + "/outer", {{"serve", outer.get_concrete_function({{DType::kInt32, {-1}}})}}, {.overwrite = true});
    // Control flow decided at run time (cond, while_loop): the bundle's library holds the bodies.
    auto looped_fn = [](const Tensor& v) {
      const Tensor h = cond(greater(reduce_sum(v), 0.f), [&] { return v * 2.f; }, [&] { return v; });
      return while_loop([](const std::vector<Tensor>& s) { return less(reduce_sum(s[0]), 100.f); },
                        [](const std::vector<Tensor>& s) { return std::vector<Tensor>{s[0] * 2.f}; }, {h},
                        {.maximum_iterations = 10})[0];
    };
    auto looped = function(looped_fn, {.name = "looped"});
    save_model(out + "/looped", {{"serve", looped.get_concrete_function({{DType::kFloat32, {-1, 3}}})}}, {.overwrite = true});
    const Tensor x({{1.f, 1.f, 1.f}, {1.f, 0.f, -1.f}});
    write_npy(x, out + "/x.npy");
    write_npy(looped_fn(x), out + "/expected_looped.npy");
    const Tensor y = model(x);
    write_npy(y, out + "/expected_output_0.npy");
    write_npy(argmax(y, 1), out + "/expected_output_1.npy");
    std::cout << "wrote " << out << "/model\n";
  } catch (const Error& e) {
    std::cerr << "make_test_bundle: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
