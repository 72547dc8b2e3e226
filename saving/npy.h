// .npy: NumPy's array file format, as a pair of pure functions over bytes plus a file edge.
//
//   std::string bytes = encode_npy(logits);            // what np.save writes
//   Tensor t = decode_npy(as_bytes(bytes), "x.npy");   // what np.load reads
//   write_npy(logits, "out.npy");                      // atomic (saving/file_io.h)
//   Tensor images = read_npy("images.npy");
//
// Layout (the published format, versions 1.0, 2.0 and 3.0; Note [npy layout]):
//   "\x93NUMPY" major minor | header length (u16 LE for 1.0, u32 LE for 2.0/3.0) | header | data
//   header: a Python dict literal, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//           padded with spaces and ended by '\n' so the data starts at a multiple of 64.
// dtypes: '<f4' float32, '<f8' float64, '<i4' int32, '<i8' int64, '|u1' uint8, '|b1' bool
// ('>' big-endian and '=' native are read too; 'fortran_order': True arrays are transposed
// into row-major order on read). The writer writes version 1.0 (2.0 when the header needs it),
// little-endian, C order, exactly as NumPy does.
//
// The reader treats its input as hostile: a malformed file is a DataLossError (damaged bytes:
// bad magic, truncated data, a header that does not parse) or an InvalidArgumentError (a
// well-formed file tapeflow cannot hold: complex, float16, object or structured dtypes), each
// starting with "[npy] <file>:"; a shape too large is a ResourceExhaustedError checked against
// max_tensor_bytes() before anything is allocated. It never reads outside its span.
//
// Pure and thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "eager/tensor.h"

namespace tapeflow {

// The .npy bytes of a concrete tensor (any device; copied to the host).
// InvalidArgumentError for an empty or symbolic tensor.
std::string encode_npy(const Tensor& tensor);

// The tensor a .npy file holds, on `device` (null: the default device). `file` names it in
// errors.
Tensor decode_npy(std::span<const std::byte> bytes, std::string_view file = "<memory>", Device* device = nullptr);

// The file edge: write atomically; read the whole file (NotFoundError etc. from file_io).
void write_npy(const Tensor& tensor, const std::string& path);
Tensor read_npy(const std::string& path, Device* device = nullptr);

// The NumPy descr of a dtype ("<f4", "|u1", ...).
const char* npy_descr(DType dtype);

}  // namespace tapeflow
