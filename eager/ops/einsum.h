// einsum: Einstein summation, as tf.einsum.
//
//   einsum("ij,jk->ik", a, b);     // matmul
//   einsum("bij,bjk->bik", a, b);  // batch matmul
//   einsum("ij->ji", a);           // transpose
//   einsum("i,j->ij", u, v);       // outer product
//   einsum("i,i->", u, v);         // dot product
//   einsum("ij->", a);             // sum of all elements
//   einsum("ij,jk", a, b);         // implicit output: labels seen once, alphabetical ("ik")
//   einsum("...b,bc->...c", x, w); // "..." for the dims no letter names (Keras' EinsumDense)
//   einsum("ii->i", m);            // a letter repeated in one operand: the diagonal
//   einsum("ii", m);               // the trace
//   einsum("ij,jk,kl->il", {a, b, c});  // three or more: two at a time, left to right
//
// Note [einsum is a composite]: einsum has no OpDef and no kernel. The equation is read at
// call time and turned into primitives: reduce_sum for labels of one operand that appear
// nowhere else, transpose and reshape to [batch, free, contracted] blocks, matmul, reshape and
// transpose to the output order. So its gradient comes from those primitives, it traces into
// a graph unchanged, and a GraphDef shows Sum / Transpose / Reshape / MatMul nodes, not Einsum.
// A TensorFlow GraphDef's Einsum node is read as this composite (Note [Composites in a
// GraphDef], graph/graph_def_composites.h).
//
// "..." stands for the dims of an operand that its letters do not name, aligned from the right
// and broadcast between the operands (a dim of 1 against another size); in an implicit output
// they come first; an explicit output must place them with its own "..." when they are any
// (Note [einsum's ellipsis]).
// A letter repeated within one operand takes the diagonal of those dims, whose size must then
// be known (Note [einsum's repeated labels]).
//
// Labels are ASCII letters. A bad equation (wrong operand count, a label of the output that no
// operand has, a repeated output label, a '.' outside one "...", sizes of one label that
// differ) is an InvalidArgumentError starting "[einsum]" that says which.
// Operand dtypes are those of matmul (float32, float64, int32, int64).
#pragma once

#include <source_location>
#include <string_view>
#include <vector>

#include "eager/tensor.h"

namespace tapeflow {

Tensor einsum(std::string_view equation, const Tensor& a,
              std::source_location loc = std::source_location::current());
Tensor einsum(std::string_view equation, const Tensor& a, const Tensor& b,
              std::source_location loc = std::source_location::current());
// Any number of operands (Note [einsum of three or more]).
Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands,
              std::source_location loc = std::source_location::current());

}  // namespace tapeflow
