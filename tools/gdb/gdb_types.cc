// The class layouts the gdb pretty-printers (tapeflow_printers.py, embedded next to this file)
// read, kept in libtapeflow.so even when the library is built with line tables only.
// Note [Debug info] in CMakeLists.txt: gcc describes a class with virtual functions only in the
// object that holds its vtable, so a user's program built with -g knows GraphState,
// GradientTape and Device by name only. This TU is built with -g2 and
// -femit-class-debug-always (-fstandalone-debug for clang), so gdb finds their full
// definitions here. It holds no code; the one variable below exists only to be described.
#include "devices/device.h"
#include "eager/tensor.h"
#include "eager/variable.h"
#include "graph/graph.h"
#include "tape/gradient_tape.h"

namespace tapeflow::gdb_types {

// Every type a printer reads through a pointer or by name. Add one here when a printer starts
// reading a new class that users' programs may only declare.
struct Anchor {
  const Tensor* tensor;
  const TensorImpl* tensor_impl;
  const DeviceTensor* device_tensor;
  const Buffer* buffer;
  const Device* device;
  const Shape* shape;
  const Variable* variable;
  const Graph* graph;
  const GraphState* graph_state;
  const Node* node;
  const Operation* operation;
  const OpDef* op_def;
  const DeviceSpec* device_spec;
  const GradientTape* tape;
};

[[gnu::used]] const Anchor* const anchor = nullptr;

}  // namespace tapeflow::gdb_types
