// tapeflow: an eager-first tensor runtime. Include this one header.
//
//   #include <tapeflow/tapeflow.h>
//   using namespace tapeflow;
//   Tensor a = {{1.f, 2.f}, {3.f, 4.f}};
//   std::cout << matmul(a, a) + 1;
//
// xtensor and Eigen conversions are not included here (they are heavy): include
// "eager/interop.h" yourself.
#pragma once

#include "core/dtype.h"
#include "core/errors.h"
#include "core/shape.h"
#include "data/dataset.h"
#include "data/fashion_mnist.h"
#include "data/idx.h"
#include "devices/device_manager.h"
#include "devices/device_spec.h"
#include "eager/context.h"
#include "eager/operand.h"
#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/cast.h"
#include "eager/ops/creation.h"
#include "eager/ops/conv.h"
#include "eager/ops/loss.h"
#include "eager/ops/matmul.h"
#include "eager/ops/nn.h"
#include "eager/ops/pool.h"
#include "eager/ops/random.h"
#include "eager/ops/reduction.h"
#include "eager/ops/segment.h"
#include "eager/ops/training.h"
#include "eager/ops/unary.h"
#include "eager/ops/where.h"
#include "eager/tensor.h"
#include "eager/variable.h"
#include "graph/function.h"
#include "graph/gradients.h"
#include "graph/graph.h"
#include "graph/graph_context.h"
#include "graph/graph_ops.h"
#include "graph/passes.h"
#include "graph/scopes.h"
#include "graph/session.h"
#include "nn/adam.h"
#include "nn/conv_layers.h"
#include "nn/initializers.h"
#include "nn/module.h"
#include "nn/optimizer.h"
#include "nn/rmsprop.h"
#include "nn/sgd.h"
#include "saving/crc32c.h"
#include "saving/file_io.h"
#include "saving/safetensors.h"
#include "saving/saver.h"
#include "tape/gradient_registry.h"
#include "tape/gradient_tape.h"
