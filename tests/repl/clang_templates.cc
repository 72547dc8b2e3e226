// Built by clang++-22 against the g++-built libtapeflow (tests/repl/run_clang_templates.sh):
// every public accessor template a REPL or a clang-built program instantiates must link, which
// needs its definition in the header (Note [Accessor templates] in eager/tensor.h).
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/errors.h"
#include "eager/tensor.h"

using tapeflow::Tensor;

static int failures = 0;
#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) {                                                   \
      std::printf("FAIL: %s (line %d)\n", #cond, __LINE__);          \
      ++failures;                                                    \
    }                                                                \
  } while (0)

// An accessor's error names the caller's file and line (its defaulted std::source_location is
// filled in by clang here and read by the g++-built library).
static void check_location(const tapeflow::Error& e, int line) {
  std::printf("caught: %s\n", e.what());
  const std::string at = " (at clang_templates.cc:" + std::to_string(line) + ")";
  CHECK(std::string(e.what()).find(at) != std::string::npos);
  CHECK(e.location().line() == static_cast<unsigned>(line));
}

template <typename T> static void check_dtype(std::initializer_list<T> values) {
  Tensor t(values);
  std::vector<T> all = t.to_vector<T>();
  CHECK(all == std::vector<T>(values));
  CHECK(t.at<T>({1}) == *(values.begin() + 1));
  CHECK(Tensor(*values.begin()).item<T>() == *values.begin());
}

int main() {
  Tensor t = {{1.f, 2.f}, {3.f, 4.f}};
  CHECK(t.at<float>({1, 0}) == 3.f);
  CHECK(t.at<float>({0, 1}) == 2.f);
  CHECK((t.to_vector<float>() == std::vector<float>{1.f, 2.f, 3.f, 4.f}));
  CHECK(Tensor(2.5f).item<float>() == 2.5f);
  check_dtype<float>({1.f, 2.f});
  check_dtype<double>({1.5, -2.5});
  check_dtype<int32_t>({7, -8});
  check_dtype<int64_t>({int64_t(1) << 40, 3});
  check_dtype<uint8_t>({uint8_t(200), uint8_t(3)});
  check_dtype<bool>({true, false});
  // The errors are the library's typed ones, caught across the compilers, with the caller's line.
  int line = 0;
  try {
    line = __LINE__; (void)t.at<float>({2, 0});
    CHECK(!"at() out of range did not throw");
  } catch (const tapeflow::OutOfRangeError& e) {
    check_location(e, line);
  }
  try {
    line = __LINE__; (void)t.item<float>();
    CHECK(!"item() of 4 elements did not throw");
  } catch (const tapeflow::InvalidArgumentError& e) {
    check_location(e, line);
  }
  try {
    line = __LINE__; (void)t.to_vector<int32_t>();
    CHECK(!"to_vector with the wrong dtype did not throw");
  } catch (const tapeflow::InvalidArgumentError& e) {
    check_location(e, line);
  }
  std::printf(failures ? "clang templates: %d failures\n" : "clang templates: OK\n", failures);
  return failures ? 1 : 0;
}
