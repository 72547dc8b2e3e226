#include "eager/ops/matmul.h"

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/context.h"

namespace tapeflow {

namespace {

const char* flag(bool b) { return b ? "true" : "false"; }

// Attributes: transpose_a, transpose_b. Unknown dims (-1) are accepted anywhere.
absl::StatusOr<OutputSpecs> matmul_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "a", {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}));
  const TensorSpec& a = ctx.inputs[0];
  const TensorSpec& b = ctx.inputs[1];
  if (a.dtype != b.dtype)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] inputs 'a' and 'b' must have the same dtype, got ",
                                                   dtype_name(a.dtype), " and ", dtype_name(b.dtype)));
  for (const auto& [spec, name] : {std::pair{&a, "a"}, std::pair{&b, "b"}}) {
    if (spec->shape.rank() < 2)
      return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] input '", name, "' must have rank >= 2, got shape ",
                                                     spec->shape.to_string()));
  }
  const bool ta = ctx.attrs.get<bool>("transpose_a"), tb = ctx.attrs.get<bool>("transpose_b");
  const int ra = a.shape.rank(), rb = b.shape.rank();
  const int64_t m = a.shape.dim(ta ? ra - 1 : ra - 2), ka = a.shape.dim(ta ? ra - 2 : ra - 1);
  const int64_t kb = b.shape.dim(tb ? rb - 1 : rb - 2), n = b.shape.dim(tb ? rb - 2 : rb - 1);
  if (ka >= 0 && kb >= 0 && ka != kb)
    return absl::InvalidArgumentError(absl::StrCat(
        "[", ctx.op, "] inner dimensions do not match: 'a' ", a.shape.to_string(), " (transpose_a=", flag(ta),
        ") has ", ka, " columns but 'b' ", b.shape.to_string(), " (transpose_b=", flag(tb), ") has ", kb, " rows"));
  const Shape batch_a(a.shape.dims().subspan(0, ra - 2)), batch_b(b.shape.dims().subspan(0, rb - 2));
  auto batch = broadcast_shapes(batch_a, batch_b);
  if (!batch.ok())
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] batch dimensions of 'a' ", a.shape.to_string(),
                                                   " and 'b' ", b.shape.to_string(),
                                                   " cannot be broadcast: ", batch.status().message()));
  Shape out = *std::move(batch);
  out.push_back(m);
  out.push_back(n);
  return single_output(a.dtype, std::move(out));
}

OpDef kMatMul{.type = "MatMul", .api_name = "matmul", .num_inputs = 2, .infer = matmul_shape,
    .tf_form = "T=in0 transpose_a:bool=false transpose_b:bool=false"};

}  // namespace

void register_matmul_ops(OpRegistry& r) { r.add(kMatMul); }

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b, std::source_location loc) {
  const Tensor inputs[2] = {a, b};
  return execute_single(kMatMul, inputs, AttrMap{{"transpose_a", transpose_a}, {"transpose_b", transpose_b}}, loc);
}

}  // namespace tapeflow
