// OpDef: the one definition of an op. It states the op's inputs, its shape-and-dtype function
// (which accepts partially known shapes, so the graph builder uses it too) and its flags.
// Eager execution and graph building both read it; kernels are registered separately per
// device and dtype (devices/kernel_registry.h). Each op family defines its OpDefs in
// eager/ops/<family>.cc as constant-initialised globals, so no static initialiser is needed.
#pragma once

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/attr.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "devices/device.h"
#include "devices/kernel_registry.h"

namespace tapeflow {

struct TensorSpec {
  DType dtype;
  Shape shape;
};

using OutputSpecs = absl::InlinedVector<TensorSpec, 1>;  // one inline: most ops have one output, and a Node holds one

struct InferenceContext {
  const char* op;  // the API name, for messages
  absl::Span<const TensorSpec> inputs;
  const AttrMap& attrs;
};

// Returns the output dtypes and shapes, or InvalidArgument naming the offending input.
using ShapeFn = absl::StatusOr<OutputSpecs> (*)(const InferenceContext& ctx);

struct OpDef {
  const char* type;      // graph node type, "MatMul"
  const char* api_name;  // the public function, "matmul"; messages start with "[matmul]"
  int num_inputs;        // -1: variadic
  ShapeFn infer;
  int kernel_dtype_input = 0;  // whose dtype selects the kernel; -1: output 0's dtype
  int forward_input = -1;      // >= 0: output 0 is a view of this input's buffer (no kernel runs)
  bool elementwise = false;
  bool stateful = false;       // random ops: never folded or deduplicated
  bool differentiable = true;
  // Note [Data-dependent output shapes]: an output the shape function leaves with unknown dims
  // even for concrete inputs (Where's [n, rank]: n counts the true elements) gets no buffer
  // before the kernel runs; the kernel sets its shape and allocates it (Device::allocate_buffer).
  // Eager execution and the graph executor both honour this; other ops' outputs are allocated
  // from their inferred shapes, as before.
  bool kernel_allocates_output = false;
  // How a node of this op is written in TensorFlow's GraphDef where that differs from the
  // tapeflow node: TF's type attrs, attrs that TF passes as constant inputs, renamed attrs, and
  // the typed list of this op's own attrs. Null: no attrs, plus "T" = input 0's dtype when the
  // op has inputs. The grammar is Note [GraphDef form] in graph/graph_def.h; graph_def.cc is
  // its only reader, so the op's TensorFlow face is stated here, once, beside its definition.
  const char* tf_form = nullptr;

  // Resolved kernels, filled on first use (the registry is immutable after initialisation).
  mutable std::atomic<KernelFn> kernel_cache[kNumDeviceTypes][kNumDTypes] = {};
};

// Name -> OpDef for every built-in op, for graph deserialisation and registry-walking tests.
class OpRegistry {
 public:
  static OpRegistry& global();
  void add(const OpDef& op);
  const OpDef* find(std::string_view type) const;
  std::vector<const OpDef*> ops() const { return ops_; }

 private:
  std::vector<const OpDef*> ops_;            // in registration order
  std::vector<const OpDef*> sorted_by_type_; // find() bisects: importers look up every node's type
};

// Each op family's registration function (eager/ops/<family>.cc).
void register_unary_ops(OpRegistry& r);
void register_activation_ops(OpRegistry& r);
void register_binary_ops(OpRegistry& r);
void register_math_ops(OpRegistry& r);
void register_where_ops(OpRegistry& r);
void register_training_ops(OpRegistry& r);
void register_cast_ops(OpRegistry& r);
void register_segment_ops(OpRegistry& r);
void register_array_ops(OpRegistry& r);
void register_reduction_ops(OpRegistry& r);
void register_scan_ops(OpRegistry& r);
void register_matmul_ops(OpRegistry& r);
void register_random_ops(OpRegistry& r);
void register_creation_ops(OpRegistry& r);
void register_conv_ops(OpRegistry& r);
void register_pool_ops(OpRegistry& r);
void register_scatter_ops(OpRegistry& r);
void register_sorting_ops(OpRegistry& r);

// The kernel of `op` for a device type and dtype (cached in op.kernel_cache). Unimplemented,
// listing the dtypes that have kernels, when there is none. Eager execution and the graph
// executor both resolve kernels here.
absl::StatusOr<KernelFn> resolve_kernel(const OpDef& op, DeviceType device, DType dtype);

// Runs op.infer and checks every output shape it returns (Note [Checked sizes]): a dim below
// -1, or known dims whose product overflows int64, is InvalidArgument naming the output. Eager
// execution, graph building and the executor all infer through here.
absl::StatusOr<OutputSpecs> infer_outputs(const OpDef& op, const InferenceContext& ctx);

// ---- helpers for shape functions ----
absl::Status check_dtype_in(const InferenceContext& ctx, int input, std::string_view input_name,
                            std::initializer_list<DType> allowed);
OutputSpecs single_output(DType dtype, Shape shape);

}  // namespace tapeflow
