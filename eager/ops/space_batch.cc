// SpaceToBatchND and BatchToSpaceND: OpDefs with their shape functions and the public API of
// eager/ops/space_batch.h. Kernels: devices/cpu/space_batch.cc.
#include "eager/ops/space_batch.h"

#include <string>

#include "core/checked_size.h"
#include "eager/context.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

using Ints = std::vector<int64_t>;
using shape_fns::ints_to_string;
using shape_fns::invalid;

// Both directions. Attributes block_shape and, flattened (before, after) pairs, paddings
// (SpaceToBatchND) or crops (BatchToSpaceND). Known dims are checked; unknown ones stay unknown.
template <bool kToBatch>
absl::StatusOr<OutputSpecs> space_batch_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  const char* margins_name = kToBatch ? "paddings" : "crops";
  const Ints& block = ctx.attrs.get<Ints>("block_shape");
  const Ints& margins = ctx.attrs.get<Ints>(margins_name);
  const int m = static_cast<int>(block.size()), rank = x.shape.rank();
  if (rank < m + 1)
    return invalid(ctx, "input of shape ", x.shape.to_string(), " must have rank at least ", m + 1,
                   " ([batch] + ", m, " spatial dims of block_shape ", ints_to_string(block), ")");
  if (static_cast<int>(margins.size()) != 2 * m)
    return invalid(ctx, margins_name, " has ", margins.size() / 2, " (", kToBatch ? "before, after" : "start, end",
                   ") pairs but block_shape ", ints_to_string(block), " has ", m, " entries");
  int64_t blocks = 1;  // prod(block_shape)
  for (int64_t b : block) {
    const std::optional<int64_t> p = b >= 1 ? checked_mul(blocks, b) : std::nullopt;
    if (!p) return invalid(ctx, "block_shape ", ints_to_string(block), " must hold positive sizes whose product fits in int64");
    blocks = *p;
  }
  for (int64_t v : margins)
    if (v < 0) return invalid(ctx, margins_name, " ", ints_to_string(margins), " must be non-negative");
  Shape out = x.shape;
  const int64_t batch = x.shape.dim(0);
  if constexpr (kToBatch) {
    const std::optional<int64_t> b = checked_mul(batch, blocks);
    if (batch >= 0 && !b) return invalid(ctx, "the batch ", batch, " times prod(block_shape) = ", blocks, " overflows");
    out.set_dim(0, batch < 0 ? kUnknownDim : *b);
  } else {
    if (batch >= 0 && batch % blocks != 0)
      return invalid(ctx, "the batch ", batch, " of input ", x.shape.to_string(),
                     " must be divisible by prod(block_shape) = ", blocks);
    out.set_dim(0, batch < 0 ? kUnknownDim : batch / blocks);
  }
  for (int i = 0; i < m; ++i) {
    const int64_t dim = x.shape.dim(i + 1), first = margins[2 * i], second = margins[2 * i + 1], bs = block[i];
    if (dim < 0) continue;  // stays unknown
    if constexpr (kToBatch) {
      std::optional<int64_t> padded = checked_add(dim, first);
      if (padded) padded = checked_add(*padded, second);
      if (!padded || *padded % bs != 0)
        return invalid(ctx, "spatial dim ", i, " of input ", x.shape.to_string(), " padded by (", first, ", ", second,
                       ") must be divisible by block_shape[", i, "] = ", bs);
      out.set_dim(i + 1, *padded / bs);
    } else {
      const std::optional<int64_t> full = checked_mul(dim, bs);
      if (!full || first > *full || second > *full - first)
        return invalid(ctx, "crops (", first, ", ", second, ") of spatial dim ", i, " exceed its size ",
                       full ? absl::StrCat(*full) : std::string("(overflows)"), " = ", dim, " * block_shape[", i, "]");
      out.set_dim(i + 1, *full - first - second);
    }
  }
  return single_output(x.dtype, std::move(out));
}

OpDef kSpaceToBatchND{.type = "SpaceToBatchND", .api_name = "space_to_batch_nd", .num_inputs = 1,
                      .infer = space_batch_shape<true>,
                      .tf_form = "T=in0 block_shape@ints paddings@pairs Tblock_shape=index Tpaddings=index"};
OpDef kBatchToSpaceND{.type = "BatchToSpaceND", .api_name = "batch_to_space_nd", .num_inputs = 1,
                      .infer = space_batch_shape<false>,
                      .tf_form = "T=in0 block_shape@ints crops@pairs Tblock_shape=index Tcrops=index"};

Tensor run(const OpDef& op, const Tensor& x, Ints block_shape, const char* margins_name,
           const std::vector<std::pair<int64_t, int64_t>>& margins, std::source_location loc) {
  Ints flat;
  flat.reserve(2 * margins.size());
  for (const auto& [first, second] : margins) {
    flat.push_back(first);
    flat.push_back(second);
  }
  const Tensor inputs[1] = {x};
  return execute_single(op, inputs, AttrMap{{"block_shape", std::move(block_shape)}, {margins_name, std::move(flat)}},
                        loc);
}

}  // namespace

void register_space_batch_ops(OpRegistry& r) {
  r.add(kSpaceToBatchND);
  r.add(kBatchToSpaceND);
}

std::vector<std::pair<int64_t, int64_t>> margin_pairs(const Ints& flat) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) out.emplace_back(flat[i], flat[i + 1]);
  return out;
}

Tensor space_to_batch_nd(const Tensor& x, Ints block_shape, const std::vector<std::pair<int64_t, int64_t>>& paddings,
                         std::source_location loc) {
  return run(kSpaceToBatchND, x, std::move(block_shape), "paddings", paddings, loc);
}

Tensor batch_to_space_nd(const Tensor& x, Ints block_shape, const std::vector<std::pair<int64_t, int64_t>>& crops,
                         std::source_location loc) {
  return run(kBatchToSpaceND, x, std::move(block_shape), "crops", crops, loc);
}

}  // namespace tapeflow
