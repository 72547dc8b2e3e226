// The program tests/gdb/run_gdb_test.sh debugs: one object of each type the gdb pretty-printers
// show, alive in main's frame when inspect_here() is called, and an op that throws.
//
//   gdb_subject          builds the objects, calls inspect_here() (the test breaks there)
//   gdb_subject throw    also runs an add whose shapes do not broadcast (the test catches the throw)
//
// Built with -O0 -g whatever the build type, so main's locals stay visible to gdb.
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string_view>
#include <vector>

#include <tapeflow/tapeflow.h>

using namespace tapeflow;

// A frame to stop in: the test's breakpoint, and where it writes the core file.
[[gnu::noinline]] void inspect_here() { asm volatile("" ::: "memory"); }

[[gnu::noinline]] Tensor bad_op(const Tensor& a) {
  Tensor b = {1.f, 2.f, 3.f};
  return a + b;  // gdb-test: throws here ([add] [2,2] and [3] do not broadcast)
}

int main(int argc, char** argv) {
  const bool throw_mode = argc > 1 && std::string_view(argv[1]) == "throw";

  Tensor t = {{1.f, 2.f}, {3.f, 4.f}};
  std::vector<int32_t> counts(12);
  std::iota(counts.begin(), counts.end(), 0);
  Tensor big(counts, Shape{3, 4});  // more values than a printer shows
  Tensor empty;
  Tensor tiny = 1e-5;  // a float64 scalar, in NumPy's scientific style
  Tensor mask = {true, false};
  Shape s{2, -1, 3};
  Shape wide{1, 2, 3, 4, 5, 6};  // more dims than Shape keeps inline: InlinedVector's heap storage
  Variable v(Tensor{0.5f, -1.f}, "w");

  Graph g;
  Tensor x;
  Operation op;
  {
    auto as_default = g.as_default();
    auto on_cpu = device("/device:CPU:0");
    x = placeholder(DType::kFloat32, {-1, 3}, "x");
    op = producer(x);
  }

  GradientTape tape(/*persistent=*/true);
  tape.watch(t);
  Tensor y = t * t;

  inspect_here();

  if (throw_mode) {
    try {
      bad_op(t);
    } catch (const InvalidArgumentError& e) {
      std::printf("caught: %s\n", e.what());
    }
  }
  std::printf("%s\n", y.to_string().c_str());
  return 0;
}
