// Shape functions shared by several op families (the elementwise ones). Each checks dtypes
// and shapes and names the offending input in its error.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "eager/op_def.h"

namespace tapeflow::shape_fns {

inline constexpr std::initializer_list<DType> kNumeric = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                                          DType::kInt64, DType::kUInt8};
inline constexpr std::initializer_list<DType> kFloating = {DType::kFloat32, DType::kFloat64};

// One output like input 0 (its dtype and shape) after checking its dtype is one of `dtypes`;
// errors name the input as `input_name`. The elementwise unary ops and activations use it.
absl::StatusOr<OutputSpecs> like_input(const InferenceContext& ctx, const char* input_name,
                                       std::initializer_list<DType> dtypes);

// Broadcasts inputs a and b (same dtype required) and names them in errors.
absl::StatusOr<Shape> broadcast_inputs(const InferenceContext& ctx, int a, const char* a_name, int b,
                                       const char* b_name);

// InvalidArgumentError "[op] <args...>" for a shape function's error.
template <typename... Args>
absl::Status invalid(const InferenceContext& ctx, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] ", args...));
}

// "[1,2,3]" for messages.
inline std::string ints_to_string(const std::vector<int64_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, ","), "]");
}

}  // namespace tapeflow::shape_fns
