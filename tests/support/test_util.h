// Helpers shared by the test suites.
#pragma once

#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "core/errors.h"
#include "eager/ops/cast.h"
#include "eager/tensor.h"

namespace tapeflow {

// A fresh directory under the test's temporary folder, removed with everything in it when the
// object goes: `ScopedTempDir tmp("saver"); tmp.path() + "/ckpt"`.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(const std::string& prefix) {
    std::string tmpl = ::testing::TempDir() + "tapeflow_" + prefix + "_XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed for " << tmpl;
    path_ = tmpl;
  }
  ~ScopedTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs fn and returns the message of the E (InvalidArgumentError by default) it throws, or a
// marker string that no expectation matches when it throws another exception or nothing.
template <typename E = InvalidArgumentError, typename Fn> std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception of the expected type";
}

// |a - b| <= tol * max(1, |b|), elementwise, with equal shapes and dtypes.
inline void expect_close(const Tensor& actual, const Tensor& expected, double tol = 1e-6) {
  ASSERT_TRUE(actual.defined());
  ASSERT_EQ(actual.shape(), expected.shape());
  ASSERT_EQ(actual.dtype(), expected.dtype());
  const std::vector<double> a = cast(actual, DType::kFloat64).to_vector<double>();
  const std::vector<double> e = cast(expected, DType::kFloat64).to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], e[i], tol * std::max(1.0, std::abs(e[i]))) << "element " << i;
}

}  // namespace tapeflow
