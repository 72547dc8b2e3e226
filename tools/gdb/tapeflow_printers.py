# gdb pretty-printers for tapeflow: Tensor, Shape, DType, Variable, Operation, Graph and
# GradientTape. Embedded in libtapeflow.so (.debug_gdb_scripts, tools/gdb/gdb_scripts.S); gdb
# loads them when the library's folder is an auto-load safe path:
#
#   gdb -iex 'add-auto-load-safe-path /path/to/build' ./my_program
#   (gdb) print t
#   $1 = tapeflow.Tensor([[1. 2.] [3. 4.]], shape=[2,2], dtype=float32, device=CPU:0)
#
# The printers only read memory (no function calls in the program), so they work on a core
# file as well as on a live process. They read libstdc++ (std::shared_ptr, std::unique_ptr,
# std::vector, std::string, std::optional) and Abseil 20220623 (InlinedVector, raw_hash_set)
# layouts through their field names. Classes a user's program knows only by name come from the
# library's own debug info (Note [Debug info] in CMakeLists.txt).
import math
import struct

import gdb
import gdb.printing

MAX_VALUES = 10  # elements a Tensor or Variable shows before "..."

# ---- libstdc++ and Abseil ----------------------------------------------------------------


def _string(v):
    """std::string (the C++11 ABI) as a Python str."""
    n = int(v["_M_string_length"])
    return v["_M_dataplus"]["_M_p"].string(length=n, errors="replace") if n else ""


def _shared(v):
    """The pointer a std::shared_ptr holds (may be null)."""
    return v["_M_ptr"]


def _unique_ptrs(v, pointee):
    """The pointers in a std::vector<std::unique_ptr<pointee>> (default deleter). Read as an
    array of plain pointers: such a unique_ptr is one pointer (the empty deleter takes no
    space), and a program's debug info often declares its type without defining it."""
    array = pointee.pointer().pointer()
    start, finish = v["_M_impl"]["_M_start"].cast(array), v["_M_impl"]["_M_finish"].cast(array)
    return start, int(finish - start)


def _vector_size(v):
    impl = v["_M_impl"]
    return int(impl["_M_finish"] - impl["_M_start"])


def _member(pointer, name):
    """Member `name` of the object `pointer` points to, read at its offset. Dereferencing a
    pointer to a class with virtual functions makes gdb look up the object's dynamic type,
    which warns when the RTTI symbol is local to the library (CpuDevice)."""
    for field in pointer.type.strip_typedefs().target().strip_typedefs().fields():
        if field.name == name:
            address = int(pointer) + field.bitpos // 8
            return gdb.Value(address).cast(field.type.pointer()).dereference()
    raise gdb.error("no member %s" % name)


def _optional(v):
    """The value of a std::optional, or None when it is empty."""
    payload = v["_M_payload"]
    return payload["_M_payload"]["_M_value"] if bool(payload["_M_engaged"]) else None


def _inlined_vector(v):
    """The elements of an absl::InlinedVector (Abseil 20220623). Its storage_ keeps
    (size << 1 | is_allocated) in metadata_ (a CompressedTuple after the empty allocator) and a
    union data_: {allocated_data, allocated_capacity} or the inline bytes."""
    storage = v["storage_"]
    meta = storage["metadata_"]
    try:
        tag = int(meta["value"])  # CompressedTuple's Storage<size_t, 1>::value
    except gdb.error:
        tag = int(meta.address.cast(gdb.lookup_type("unsigned long").pointer()).dereference())
    size, allocated = tag >> 1, tag & 1
    if size > 4096:  # an uninitialised or overwritten vector: do not read a gigabyte of it
        raise gdb.error("implausible InlinedVector size %d" % size)
    data = storage["data_"]
    pointer = data["allocated"]["allocated_data"]
    if not allocated:
        pointer = data["inlined"]["inlined_data"].address.cast(pointer.type)
    return [(pointer + i).dereference() for i in range(size)]


# ---- tapeflow values ---------------------------------------------------------------------

# dtype name -> (struct format, byte size); names as dtype_name() spells them.
_ELEMENT = {"float32": ("f", 4), "float64": ("d", 8), "int32": ("i", 4), "int64": ("q", 8),
            "uint8": ("B", 1), "bool": ("?", 1)}


def _enumerator(v):
    """An enum value's enumerator name without its scope ("kFloat32"), or None."""
    value = int(v)
    for field in v.type.strip_typedefs().fields():
        if field.enumval == value:
            return field.name.split("::")[-1]
    return None


def dtype_name(v):
    """A DType enumerator's name as tapeflow spells it: kFloat32 -> "float32"."""
    name = _enumerator(v)
    if name is None:
        return "<dtype %d>" % int(v)
    return name[1:].lower() if name.startswith("k") else name


def shape_dims(v):
    return [int(d) for d in _inlined_vector(v["dims_"])]


def shape_string(dims):
    return "[" + ",".join("?" if d < 0 else str(d) for d in dims) + "]"


def _format_number(x):
    """NumPy's default float style for one value: "1.", "0.25", "1.e-05"."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x != 0 and (abs(x) >= 1e16 or abs(x) < 1e-4):
        mantissa, exponent = ("%.8e" % x).split("e")
        return mantissa.rstrip("0") + "e" + exponent
    return ("%.8f" % x).rstrip("0")


def _format_values(values, dims, total):
    """NumPy-style nested rows of the first values; "..." where the rest are left out."""
    cells = [_format_number(x) if isinstance(x, float) else
             ("True" if x is True else "False" if x is False else str(x)) for x in values]
    out, state = [], {"next": 0, "stopped": False}

    def emit(dim):
        if dim == len(dims):
            if state["next"] == len(cells) and total > len(cells):
                out.append("...")
                state["stopped"] = True
            else:
                out.append(cells[state["next"]])
                state["next"] += 1
            return
        out.append("[")
        for i in range(dims[dim]):
            if state["stopped"]:
                break
            if i:
                out.append(" ")
            emit(dim + 1)
        out.append("]")

    emit(0)
    return "".join(out)


def _device(device_ptr):
    """(short name "CPU:0", host readable) for a Device*."""
    name = _string(_member(device_ptr, "name_"))
    short = name.split("/device:")[-1] if "/device:" in name else name
    return short, _enumerator(_member(device_ptr, "type_")) != "kGPU"


def device_tensor_values(dt, limit=MAX_VALUES):
    """NumPy-style text of a DeviceTensor's first values, or why they cannot be shown."""
    dims = shape_dims(dt["shape"])
    dtype = dtype_name(dt["dtype"])
    buffer = _shared(dt["buffer"])
    if not buffer:
        return "<no buffer>"
    _, host = _device(_member(buffer, "device_"))
    if not host:
        return "<device memory>"
    if dtype not in _ELEMENT:
        return "<%s values>" % dtype
    fmt, size = _ELEMENT[dtype]
    total = math.prod(dims)
    count = min(total, limit)
    address = int(_member(buffer, "data_")) + int(dt["offset"])
    raw = gdb.selected_inferior().read_memory(address, count * size) if count else b""
    values = list(struct.unpack("<%d%s" % (count, fmt), bytes(raw)))
    if fmt in "fd":
        values = [float(x) for x in values]
    return _format_values(values, dims, total)


def _graph_state(ptr):
    """A GraphBase* as a GraphState*, through the vtable's RTTI. (gdb finds no dynamic type
    for shared_ptr's element_type* typedef: cast to the plain pointer type first.)"""
    ptr = ptr.cast(gdb.lookup_type("tapeflow::GraphBase").pointer())
    state = ptr.cast(ptr.dynamic_type)
    if state.type.strip_typedefs().target().strip_typedefs().tag != "tapeflow::GraphState":
        raise gdb.error("not a GraphState")
    return state


def graph_node(state, index):
    """Node `index` of the GraphState `state` points to."""
    start, count = _unique_ptrs(_member(state, "nodes_"), gdb.lookup_type("tapeflow::Node"))
    if not 0 <= index < count:
        raise gdb.error("node %d out of range" % index)
    return (start + index).dereference().dereference()


def tensor_string(v):
    impl = _shared(v["impl_"])
    if not impl:
        return "tapeflow.Tensor(<empty>)"
    impl = impl.dereference()
    dt = impl["data"]
    meta = "shape=%s, dtype=%s" % (shape_string(shape_dims(dt["shape"])), dtype_name(dt["dtype"]))
    graph = _shared(impl["symbolic"]["graph"])
    if graph:
        node, output = int(impl["symbolic"]["node"]), int(impl["symbolic"]["output"])
        try:
            name = "%s:%d" % (_string(graph_node(_graph_state(graph), node)["name"]), output)
        except gdb.error:
            name = "node %d:%d" % (node, output)
        return "tapeflow.Tensor(<symbolic '%s'>, %s)" % (name, meta)
    buffer = _shared(dt["buffer"])
    if not buffer:
        return "tapeflow.Tensor(<no storage yet>, %s)" % meta
    device, _ = _device(_member(buffer, "device_"))
    return "tapeflow.Tensor(%s, %s, device=%s)" % (device_tensor_values(dt), meta, device)


def device_spec_string(spec):
    """DeviceSpec::to_string(), from the fields."""
    out = ""
    for key, field in (("job", "job"), ("replica", "replica"), ("task", "task")):
        value = _optional(spec[field])
        if value is not None:
            out += "/%s:%s" % (key, _string(value) if key == "job" else int(value))
    device_type = _optional(spec["device_type"])
    if device_type is not None:
        index = _optional(spec["device_index"])
        out += "/device:%s:%s" % (_string(device_type), "*" if index is None else int(index))
    return out


def shared_device_spec_string(shared):
    """SharedDeviceSpec::to_string(): "" when it holds none."""
    spec = _shared(shared["spec_"])
    return device_spec_string(spec.dereference()) if spec else ""


# ---- printers ----------------------------------------------------------------------------


class _Printer:
    """Base: to_string() calls text(), and an unreadable object (a bad pointer, a core file
    without that memory) prints as such instead of an error in the middle of a struct."""

    def __init__(self, val):
        self.val = val

    def to_string(self):
        try:
            return self.text()
        except (gdb.error, gdb.MemoryError, ValueError, OverflowError) as e:
            return "<tapeflow %s: unreadable: %s>" % (type(self).__name__[:-7], e)


class TensorPrinter(_Printer):
    def text(self):
        return tensor_string(self.val)


class ShapePrinter(_Printer):
    def text(self):
        return shape_string(shape_dims(self.val))


class DTypePrinter(_Printer):
    def text(self):
        return dtype_name(self.val)


class VariablePrinter(_Printer):
    def text(self):
        state = _shared(self.val["state_"])
        if not state:
            return "tapeflow.Variable(<empty>)"
        # Variable::State is defined in variable.cc: look up its layout in the library.
        state = state.cast(gdb.lookup_type("tapeflow::Variable::State").pointer()).dereference()
        head = "tapeflow.Variable('%s', shape=%s, dtype=%s" % (
            _string(state["name"]), shape_string(shape_dims(state["shape"])), dtype_name(state["dtype"]))
        if _optional(state["graph"]) is not None:
            return head + ", <graph variable>)"
        impl = _shared(state["value"]["impl_"])
        if not impl:
            return head + ", <no value>)"
        device, _ = _device(state["device"]) if state["device"] else ("?", True)
        return "%s, device=%s, value=%s)" % (head, device, device_tensor_values(impl.dereference()["data"]))


class OperationPrinter(_Printer):
    def text(self):
        state = _shared(self.val["graph_"])
        if not state:
            return "tapeflow.Operation(<empty>)"
        node = graph_node(state, int(self.val["node_"]))
        op = node["op"]
        op_type = op.dereference()["type"].string() if op else "?"
        return "tapeflow.Operation('%s', type=%s, device='%s')" % (
            _string(node["name"]), op_type, shared_device_spec_string(node["requested_device"]))


class GraphPrinter(_Printer):
    def text(self):
        state = _shared(self.val["state_"])
        if not state:
            return "tapeflow.Graph(<empty>)"
        _, count = _unique_ptrs(_member(state, "nodes_"), gdb.lookup_type("tapeflow::Node"))
        return "tapeflow.Graph(nodes=%d)" % count


class GradientTapePrinter(_Printer):
    """recorded_ops: the records a gradient() call would walk (0 again once a non-persistent
    tape has answered); watched: tensors passed to watch() plus variables read while recording."""

    def text(self):
        v = self.val
        watched = _vector_size(v["watched_"]) + int(v["variable_reads_"]["size_"])
        return "tapeflow.GradientTape(recorded_ops=%d, watched=%d, persistent=%s)" % (
            _vector_size(v["records_"]), watched, "true" if bool(v["persistent_"]) else "false")


def build_pretty_printer():
    pp = gdb.printing.RegexpCollectionPrettyPrinter("tapeflow")
    for name, printer in (("Tensor", TensorPrinter), ("Shape", ShapePrinter), ("DType", DTypePrinter),
                          ("Variable", VariablePrinter), ("Operation", OperationPrinter),
                          ("Graph", GraphPrinter), ("GradientTape", GradientTapePrinter)):
        pp.add_printer(name, "^tapeflow::%s$" % name, printer)
    return pp


gdb.printing.register_pretty_printer(gdb.current_objfile(), build_pretty_printer(), replace=True)
