#!/usr/bin/env python3
"""Writes the seed corpora of the libFuzzer targets (tests/fuzz/corpus/<target>/), each file in
the layout the other tool writes: NumPy's np.save header (format 1.0 and 2.0), the safetensors
layout of the Hugging Face library (8-byte little-endian header length, JSON header padded with
spaces to a multiple of 8, raw little-endian data) with tapeflow's CRC32C metadata, the IDX files
of MNIST (plain and gzip'd), and GraphDefs as TensorFlow 1.x prints them (text) and encodes them
(binary wire format, field numbers of graph.proto/node_def.proto/attr_value.proto). Run it from
anywhere; it rewrites the corpus folders. Pure standard library (no NumPy needed)."""
import gzip, json, os, struct

HERE = os.path.dirname(os.path.abspath(__file__))


def crc32c(data: bytes) -> int:  # Castagnoli, reflected 0x82F63B78
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def write(target, name, data: bytes):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- .npy (NumPy's format: magic, version, header length, dict literal padded to 64 bytes) ----
def npy(descr, shape, data, fortran=False, version=(1, 0)):
    shape_s = "(" + "".join(f"{d}, " for d in shape)[:-2] + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape_s)
    len_size = 2 if version == (1, 0) else 4
    pre = 6 + 2 + len_size
    pad = (64 - (pre + len(header) + 1) % 64) % 64
    header = header + " " * pad + "\n"
    hl = struct.pack("<H", len(header)) if len_size == 2 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes(version) + hl + header.encode("latin1") + data


write("npy", "f4_2x3", npy("<f4", (2, 3), struct.pack("<6f", 1, 2, 3, 4, 5, 6)))
write("npy", "f8_fortran", npy("<f8", (2, 2), struct.pack("<4d", 1, 3, 2, 4), fortran=True))
write("npy", "i8_scalar", npy("<i8", (), struct.pack("<q", -7)))
write("npy", "i4_vector", npy("<i4", (3,), struct.pack("<3i", 1, -2, 3)))
write("npy", "u1_empty", npy("|u1", (0, 4), b""))
write("npy", "b1", npy("|b1", (3,), b"\x01\x00\x01"))
write("npy", "f4_big_endian", npy(">f4", (2,), struct.pack(">2f", 1.5, -2.5)))
write("npy", "v2_header", npy("<f4", (1,), struct.pack("<f", 3.0), version=(2, 0)))


# ---- safetensors (+ tapeflow's "crc32c:<name>" metadata, 8 hex digits) ----
def safetensors(tensors, checksums=True, extra_meta=None):
    header, data = {}, b""
    meta = dict(extra_meta or {})
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [len(data), len(data) + len(raw)]}
        if checksums:
            meta["crc32c:" + name] = "%08x" % crc32c(raw)
        data += raw
    if meta:
        header["__metadata__"] = meta
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


write("safetensors", "two_tensors", safetensors({
    "dense/kernel": ("F32", (2, 2), struct.pack("<4f", 1, 2, 3, 4)),
    "dense/bias": ("F32", (2,), struct.pack("<2f", 0.5, -0.5))}))
write("safetensors", "ints_and_bool", safetensors({
    "step": ("I64", (), struct.pack("<q", 100)),
    "ids": ("I32", (3,), struct.pack("<3i", 1, 2, 3)),
    "mask": ("BOOL", (2,), b"\x01\x00"),
    "pixels": ("U8", (2, 2), bytes([0, 64, 128, 255]))}))
write("safetensors", "no_checksums_f64", safetensors({"x": ("F64", (2,), struct.pack("<2d", 1.0, 2.0))},
                                                     checksums=False, extra_meta={"format": "pt"}))
write("safetensors", "empty_tensor", safetensors({"e": ("F32", (0, 3), b"")}))
write("safetensors", "f16_unsupported", safetensors({"h": ("F16", (1,), b"\x00\x3c")}))


# ---- IDX (MNIST's layout: 0x00 0x00, type code, rank, big-endian u32 dims, big-endian data) ----
def idx(code, dims, raw):
    return bytes([0, 0, code, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + raw


images = idx(0x08, (2, 3, 3), bytes(range(18)))
write("idx", "images_u8", images)
write("idx", "images_u8.gz", gzip.compress(images, mtime=0))
write("idx", "labels_u8", idx(0x08, (4,), bytes([9, 0, 0, 3])))
write("idx", "floats", idx(0x0D, (2,), struct.pack(">2f", 1.5, -2.0)))
write("idx", "doubles", idx(0x0E, (1, 1), struct.pack(">d", 3.25)))
write("idx", "shorts_ints", idx(0x0B, (2,), struct.pack(">2h", -1, 300)) )
write("idx", "ints", idx(0x0C, (2,), struct.pack(">2i", -70000, 5)))
write("idx", "signed_bytes_scalar", idx(0x09, (), b"\xff"))

# ---- GraphDef: the first byte picks the format (0: binary, 1: text) ----
TEXT_GRAPHS = {
    "mlp_frozen": '''node {
  name: "x"
  op: "Placeholder"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: -1 } dim { size: 3 } } } }
}
node {
  name: "w"
  op: "Const"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } dim { size: 2 } }
    float_val: 0.5 float_val: -1 float_val: 2 float_val: 0.25 float_val: 1 float_val: 3 } } }
}
node {
  name: "b"
  op: "Const"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
    tensor_content: "\\000\\000\\200?\\000\\000\\000\\300" } } }
}
node {
  name: "MatMul"
  op: "MatMul"
  input: "x"
  input: "w"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "transpose_a" value { b: false } }
  attr { key: "transpose_b" value { b: false } }
}
node {
  name: "BiasAdd"
  op: "BiasAdd"
  input: "MatMul"
  input: "b"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "data_format" value { s: "NHWC" } }
}
node {
  name: "Relu"
  op: "Relu"
  input: "BiasAdd"
  attr { key: "T" value { type: DT_FLOAT } }
}
node {
  name: "Softmax"
  op: "Softmax"
  input: "Relu"
  attr { key: "T" value { type: DT_FLOAT } }
}
node {
  name: "init"
  op: "NoOp"
  input: "^Softmax"
}
versions { producer: 27 }
''',
    "shapes": '''node {
  name: "x"
  op: "Placeholder"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 2 } dim { size: 3 } } } }
}
node {
  name: "perm"
  op: "Const"
  attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 1 int_val: 0 } } }
}
node {
  name: "t"
  op: "Transpose"
  input: "x"
  input: "perm"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "Tperm" value { type: DT_INT32 } }
}
node {
  name: "axis"
  op: "Const"
  attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } }
}
node {
  name: "mean"
  op: "Mean"
  input: "t"
  input: "axis"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "Tidx" value { type: DT_INT32 } }
  attr { key: "keep_dims" value { b: false } }
}
node {
  name: "r"
  op: "Rsqrt"
  input: "mean"
  attr { key: "T" value { type: DT_FLOAT } }
  device: "/device:CPU:0"
}
''',
    "split_pack_pad": '''node {
  name: "x"
  op: "Placeholder"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: -1 } dim { size: 6 } } } }
}
node {
  name: "split/split_dim"
  op: "Const"
  attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } }
}
node {
  name: "split"
  op: "Split"
  input: "split/split_dim"
  input: "x"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "num_split" value { i: 3 } }
}
node {
  name: "stack"
  op: "Pack"
  input: "split"
  input: "split:2"
  attr { key: "N" value { i: 2 } }
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "axis" value { i: -1 } }
}
node {
  name: "unstack"
  op: "Unpack"
  input: "stack"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "axis" value { i: 2 } }
  attr { key: "num" value { i: 2 } }
}
node {
  name: "Pad/paddings"
  op: "Const"
  attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } dim { size: 2 } } int_val: 0 int_val: 0 int_val: 1 int_val: 2 } } }
}
node {
  name: "Pad"
  op: "Pad"
  input: "unstack:1"
  input: "Pad/paddings"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "Tpaddings" value { type: DT_INT32 } }
}
node {
  name: "Shape"
  op: "Shape"
  input: "Pad"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "out_type" value { type: DT_INT32 } }
}
node {
  name: "LogSoftmax"
  op: "LogSoftmax"
  input: "Pad"
  attr { key: "T" value { type: DT_FLOAT } }
  experimental_debug_info { original_node_names: "log_softmax" }
}
library {
  function {
    signature { name: "f" input_arg { name: "a" type: DT_FLOAT } output_arg { name: "b" type: DT_FLOAT } }
    node_def { name: "n" op: "Neg" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
    ret { key: "b" value: "n:y:0" }
    arg_attr { key: 0 value { attr { key: "_user_specified_name" value { s: "a" } } } }
  }
  gradient { function_name: "f" gradient_func: "g" }
}
versions { producer: 27 }
''',
    # Keras' Flatten: a Reshape whose shape the import folds from Shape, StridedSlice and Pack.
    "keras_flatten": '''node {
  name: "x"
  op: "Placeholder"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } dim { size: 3 } } } }
}
node {
  name: "flatten/Shape"
  op: "Shape"
  input: "x"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "out_type" value { type: DT_INT32 } }
}
node {
  name: "flatten/strided_slice/stack"
  op: "Const"
  attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 0 } } }
}
node {
  name: "flatten/strided_slice/stack_1"
  op: "Const"
  attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 1 } } }
}
node {
  name: "flatten/strided_slice"
  op: "StridedSlice"
  input: "flatten/Shape"
  input: "flatten/strided_slice/stack"
  input: "flatten/strided_slice/stack_1"
  input: "flatten/strided_slice/stack_1"
  attr { key: "Index" value { type: DT_INT32 } }
  attr { key: "T" value { type: DT_INT32 } }
  attr { key: "shrink_axis_mask" value { i: 1 } }
}
node {
  name: "flatten/Reshape/shape/1"
  op: "Const"
  attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 6 } } }
}
node {
  name: "flatten/Reshape/shape"
  op: "Pack"
  input: "flatten/strided_slice"
  input: "flatten/Reshape/shape/1"
  attr { key: "N" value { i: 2 } }
  attr { key: "T" value { type: DT_INT32 } }
}
node {
  name: "flatten/Reshape"
  op: "Reshape"
  input: "x"
  input: "flatten/Reshape/shape"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "Tshape" value { type: DT_INT32 } }
}
''',
}


# A minimal protobuf wire encoder for the binary seeds: varint, length-delimited fields.
def varint(n):
    n &= (1 << 64) - 1
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def field(num, wire, payload):
    key = varint((num << 3) | wire)
    if wire == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload


def attr_entry(key, value):  # map<string, AttrValue> attr = 5 in NodeDef
    return field(5, 2, field(1, 2, key.encode()) + field(2, 2, value))


DT_FLOAT, DT_INT32 = 1, 3
type_attr = lambda t: field(6, 0, t)                   # AttrValue.type = 6
bool_attr = lambda b: field(5, 0, 1 if b else 0)       # AttrValue.b = 5


def shape_proto(dims):  # TensorShapeProto.dim = 2 { size = 1 }
    return b"".join(field(2, 2, field(1, 0, d)) for d in dims)


def node(name, op, inputs=(), attrs=(), device=""):
    out = field(1, 2, name.encode()) + field(2, 2, op.encode())
    for i in inputs:
        out += field(3, 2, i.encode())
    if device:
        out += field(4, 2, device.encode())
    for k, v in attrs:
        out += attr_entry(k, v)
    return field(1, 2, out)  # GraphDef.node = 1


const_tensor = (field(1, 0, DT_FLOAT) + field(2, 2, shape_proto([2])) +   # dtype = 1, tensor_shape = 2
                field(4, 2, struct.pack("<2f", 2.0, 3.0)))                  # tensor_content = 4
binary = (node("x", "Placeholder", attrs=[("dtype", type_attr(DT_FLOAT)), ("shape", field(7, 2, shape_proto([-1, 2])))])
          + node("c", "Const", attrs=[("dtype", type_attr(DT_FLOAT)), ("value", field(8, 2, const_tensor))])
          + node("y", "Mul", inputs=["x", "c"], attrs=[("T", type_attr(DT_FLOAT))])
          + node("z", "AddV2", inputs=["y", "y"], attrs=[("T", type_attr(DT_FLOAT))])
          + node("n", "NoOp", inputs=["^z"])
          + field(4, 2, field(1, 0, 27)))  # versions = 4 { producer = 1 }
write("graph_def", "binary_mul_add", b"\x00" + binary)
for name, text in TEXT_GRAPHS.items():
    write("graph_def", "text_" + name, b"\x01" + text.encode())
print("corpus written under", os.path.join(HERE, "corpus"))
