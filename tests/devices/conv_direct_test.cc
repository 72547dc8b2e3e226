// Each instruction-set copy of the small-K convolution loops (Note [Explicit ISA variants]) gives
// the reference product, not only the copy this machine would pick.
#include "devices/cpu/conv_direct.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tapeflow::cpu {
namespace {

struct Case {
  int64_t pixels, k, cout;
};
// Channel counts below, at and past the 32-wide blocks; pixel counts with and without a tail of
// the 4-pixel blocks; tap counts with and without a tail of the 4-tap blocks.
const Case kCases[] = {{1, 1, 1}, {4, 25, 32}, {7, 25, 31}, {13, 9, 33}, {16, 27, 64}, {5, 32, 40}, {9, 3, 96}};

std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

class SmallKIsaTest : public ::testing::TestWithParam<SmallKIsa> {
 protected:
  void SetUp() override {
    if (!small_k_isa_supported(GetParam())) {
      GTEST_SKIP() << "this CPU has no " << small_k_isa_name(GetParam()) << "; that copy cannot run here";
    }
  }
};

TEST_P(SmallKIsaTest, ForwardMatchesTheReferenceProduct) {
  for (const Case& c : kCases) {
    const auto cols = random_values(c.pixels * c.k, 1), filter = random_values(c.k * c.cout, 2);
    std::vector<float> out(static_cast<size_t>(c.pixels * c.cout), NAN);
    small_k_forward_with(GetParam(), cols.data(), filter.data(), out.data(), c.pixels, c.k, c.cout);
    for (int64_t p = 0; p < c.pixels; ++p) {
      for (int64_t o = 0; o < c.cout; ++o) {
        double want = 0;
        for (int64_t t = 0; t < c.k; ++t) want += double{cols[p * c.k + t]} * filter[t * c.cout + o];
        ASSERT_NEAR(out[p * c.cout + o], want, 1e-5) << "pixels=" << c.pixels << " k=" << c.k << " cout=" << c.cout
                                                    << " at pixel " << p << ", channel " << o;
      }
    }
  }
}

TEST_P(SmallKIsaTest, FilterGradAccumulatesTheReferenceProduct) {
  for (const Case& c : kCases) {
    const auto cols = random_values(c.pixels * c.k, 3), dout = random_values(c.pixels * c.cout, 4);
    std::vector<float> dfilter(static_cast<size_t>(c.k * c.cout), 0.5f);  // accumulates onto what is there
    small_k_filter_grad_with(GetParam(), cols.data(), dout.data(), dfilter.data(), c.pixels, c.k, c.cout);
    for (int64_t t = 0; t < c.k; ++t) {
      for (int64_t o = 0; o < c.cout; ++o) {
        double want = 0.5;
        for (int64_t p = 0; p < c.pixels; ++p) want += double{cols[p * c.k + t]} * dout[p * c.cout + o];
        ASSERT_NEAR(dfilter[t * c.cout + o], want, 1e-5) << "pixels=" << c.pixels << " k=" << c.k
                                                         << " cout=" << c.cout << " at tap " << t << ", channel " << o;
      }
    }
  }
}

TEST(SmallKIsaChoiceTest, TheChosenCopyIsTheWidestThisCpuSupports) {
  const SmallKIsa chosen = small_k_isa();
  EXPECT_TRUE(small_k_isa_supported(chosen));
  EXPECT_TRUE(small_k_isa_supported(SmallKIsa::kBaseline));
  if (small_k_isa_supported(SmallKIsa::kAvx512)) {
    EXPECT_EQ(chosen, SmallKIsa::kAvx512);
  } else if (small_k_isa_supported(SmallKIsa::kAvx2)) {
    EXPECT_EQ(chosen, SmallKIsa::kAvx2);
  } else {
    EXPECT_EQ(chosen, SmallKIsa::kBaseline);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryCopy, SmallKIsaTest,
                         ::testing::Values(SmallKIsa::kAvx512, SmallKIsa::kAvx2, SmallKIsa::kBaseline),
                         [](const ::testing::TestParamInfo<SmallKIsa>& info) {
                           switch (info.param) {
                             case SmallKIsa::kAvx512: return std::string("Avx512");
                             case SmallKIsa::kAvx2: return std::string("Avx2");
                             case SmallKIsa::kBaseline: return std::string("Baseline");
                           }
                           return std::string("Unknown");
                         });

}  // namespace
}  // namespace tapeflow::cpu
