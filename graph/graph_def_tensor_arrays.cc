// Note [TensorArrays in a GraphDef] (graph/graph_def_tensor_arrays.h).
#include "graph/graph_def_tensor_arrays.h"

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "graph/graph_def_v1_functions.h"

namespace tapeflow::graph_def_internal {

namespace {

// The nodes a handle or a flow passes through unchanged; Switch gives it on both outputs.
bool passes_through(std::string_view op) {
  return op == "Enter" || op == "Exit" || op == "Merge" || op == "Switch" || op == "NextIteration" || op == "Identity";
}

struct ArrayOp {
  const char* tapeflow_type;
  int flow_input;      // the TensorFlow node's flow input (-1: none)
  bool gives_flow;     // output 0 is the next flow
  std::vector<int> kept;  // the TensorFlow inputs the tapeflow node keeps, after the flow
};

const ArrayOp* array_op(std::string_view op) {
  static const ArrayOp kWrite{"TensorArrayBufferWrite", 3, true, {1, 2}};
  static const ArrayOp kScatter{"TensorArrayBufferScatter", 3, true, {1, 2}};
  static const ArrayOp kRead{"TensorArrayBufferRead", 2, false, {1}};
  static const ArrayOp kGather{"TensorArrayBufferGather", 2, false, {1}};
  static const ArrayOp kSize{"TensorArrayBufferSize", 1, false, {}};
  static const ArrayOp kClose{"NoOp", -1, false, {}};
  if (op == "TensorArrayWriteV3") return &kWrite;
  if (op == "TensorArrayScatterV3") return &kScatter;
  if (op == "TensorArrayReadV3") return &kRead;
  if (op == "TensorArrayGatherV3") return &kGather;
  if (op == "TensorArraySizeV3") return &kSize;
  if (op == "TensorArrayCloseV3") return &kClose;
  return nullptr;
}

class Rewrite {
 public:
  explicit Rewrite(const GraphDef& def) : def_(def) {}

  absl::StatusOr<std::optional<GraphDef>> run() {
    bool any = false;
    for (const proto::NodeDef& n : def_.node()) any |= n.op() == "TensorArrayV3";
    if (!any) return std::nullopt;
    TF_RETURN_IF_ERROR(index_.build(def_));
    if (!controls_last(index_)) return std::nullopt;  // the import refuses it, naming the node
    const size_t n = static_cast<size_t>(def_.node_size());
    readers_.resize(n);
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < index_.inputs[i].size(); ++k) {
        const V1Edge& e = index_.inputs[i][k];
        if (!e.control()) readers_[static_cast<size_t>(e.src)].push_back({static_cast<int>(i), static_cast<int>(k), e.index});
      }
    handle_.assign(n, false);
    flow_dtype_.assign(n, proto::DT_INVALID);
    grows_.assign(n, false);
    carried_.assign(n, -1);
    handle_of_.assign(n, -1);
    flow_of_.assign(n, -1);
    for (int i = 0; i < def_.node_size(); ++i)
      if (def_.node(i).op() == "TensorArrayV3") TF_RETURN_IF_ERROR(start_array(i));
    TF_RETURN_IF_ERROR(follow_handles());
    TF_RETURN_IF_ERROR(follow_flows());
    for (int i = 0; i < def_.node_size(); ++i) {
      const int h = handle_of_[static_cast<size_t>(i)], f = flow_of_[static_cast<size_t>(i)];
      if (h >= 0 && f >= 0 && h != f)
        return node_error(node(i), absl::StatusCode::kInvalidArgument,
                          absl::StrCat("reads the handle of TensorArray '", node(h).name(), "' and the flow of '",
                                       node(f).name(), "'"));
    }
    find_stacks_and_unstacks();
    return emit();
  }

 private:
  struct Flow {
    int node;
    int output;
    proto::DataType dtype;
    bool dynamic;  // of a dynamic_size array
    int array;     // its TensorArrayV3
  };

  // TensorArray op i reads (the handle or the flow of) `array`; one op reads one array's.
  absl::Status read_by(int i, int array, std::vector<int>& of) {
    int& a = of[static_cast<size_t>(i)];
    if (a >= 0 && a != array)
      return node_error(node(i), absl::StatusCode::kInvalidArgument,
                        absl::StrCat("reads two TensorArrays, '", node(a).name(), "' and '", node(array).name(), "'"));
    a = array;
    return absl::OkStatus();
  }
  struct Reader {
    int node;
    int input;   // its input position
    int output;  // the output of the node read
  };

  const proto::NodeDef& node(int i) const { return def_.node(i); }

  absl::Status start_array(int i) {
    const proto::NodeDef& ta = node(i);
    const proto::AttrValue* dynamic = find_attr(ta, "dynamic_size");
    const proto::AttrValue* shape = find_attr(ta, "element_shape");
    if (shape == nullptr || !shape->has_shape() || shape->shape().unknown_rank())
      return node_error(ta, absl::StatusCode::kUnimplemented,
                        "the TensorArray's element_shape has no rank; tapeflow holds a TensorArray as one tensor "
                        "[size, *element] and needs the element's rank (Note [TensorArrays in a GraphDef])");
    const proto::AttrValue* dtype = find_attr(ta, "dtype");
    if (dtype == nullptr) return node_error(ta, absl::StatusCode::kInvalidArgument, "attr 'dtype' is missing");
    handles_.push_back({i, 0, i});
    flows_.push_back({i, 1, dtype->type(), dynamic != nullptr && dynamic->b(), i});
    return absl::OkStatus();
  }

  // Every node a handle reaches: a TensorArray op reads it as input 0; a pass-through is removed.
  absl::Status follow_handles() {
    while (!handles_.empty()) {
      const auto [src, output, array] = handles_.front();
      handles_.pop_front();
      for (const Reader& r : readers_[static_cast<size_t>(src)]) {
        if (r.output != output) continue;
        const proto::NodeDef& reader = node(r.node);
        if (array_op(reader.op()) != nullptr && r.input == 0) {
          TF_RETURN_IF_ERROR(read_by(r.node, array, handle_of_));
          continue;
        }
        if (passes_through(reader.op()) && r.input == 0) {
          if (handle_[static_cast<size_t>(r.node)]) continue;
          handle_[static_cast<size_t>(r.node)] = true;
          handles_.push_back({r.node, 0, array});
          if (reader.op() == "Switch") handles_.push_back({r.node, 1, array});
          continue;
        }
        return node_error(reader, absl::StatusCode::kUnimplemented,
                          absl::StrCat("reads the handle of TensorArray '", node(array).name(),
                                       "'; tapeflow reads TensorArrays through their flow (Note [TensorArrays in a GraphDef])"));
      }
    }
    return absl::OkStatus();
  }

  // Every node a flow reaches, with the array's dtype: pass-throughs carry it, writes give the next.
  absl::Status follow_flows() {
    while (!flows_.empty()) {
      const Flow f = flows_.front();
      flows_.pop_front();
      for (const Reader& r : readers_[static_cast<size_t>(f.node)]) {
        if (r.output != f.output) continue;
        const proto::NodeDef& reader = node(r.node);
        const ArrayOp* op = array_op(reader.op());
        if (op != nullptr && r.input == op->flow_input) {
          TF_RETURN_IF_ERROR(read_by(r.node, f.array, flow_of_));
          if (op->gives_flow) TF_RETURN_IF_ERROR(carry(r.node, f, {0}));
          continue;
        }
        if (passes_through(reader.op()) && (r.input == 0 || reader.op() == "Merge")) {
          std::vector<int> outputs{0};
          if (reader.op() == "Switch") outputs.push_back(1);
          TF_RETURN_IF_ERROR(carry(r.node, f, outputs));
          continue;
        }
        return node_error(reader, absl::StatusCode::kUnimplemented,
                          absl::StrCat("reads the flow of a TensorArray (", node(f.node).name(), ":", f.output,
                                       "); tapeflow reads a flow only through TensorArray ops and control flow"));
      }
    }
    return absl::OkStatus();
  }

  // Node i carries flow f (a write: the next one) on `outputs`; a write into a dynamic_size
  // array may grow it.
  absl::Status carry(int i, const Flow& f, const std::vector<int>& outputs) {
    proto::DataType& d = flow_dtype_[static_cast<size_t>(i)];
    int& array = carried_[static_cast<size_t>(i)];
    if (array == f.array) return absl::OkStatus();
    if (array >= 0)
      return node_error(node(i), absl::StatusCode::kUnimplemented,
                        absl::StrCat("joins the flows of TensorArrays '", node(array).name(), "' and '", node(f.array).name(),
                                     "'; tapeflow follows each flow to one array"));
    array = f.array;
    d = f.dtype;
    grows_[static_cast<size_t>(i)] = f.dynamic;
    for (int o : outputs) flows_.push_back({i, o, f.dtype, f.dynamic, f.array});
    return absl::OkStatus();
  }

  // The value of an int32 Const of one element.
  std::optional<int64_t> int_const(int i) const {
    const proto::NodeDef& n = node(i);
    const proto::AttrValue* v = find_attr(n, "value");
    if (n.op() != "Const" || v == nullptr || !v->has_tensor() || v->tensor().dtype() != proto::DT_INT32) return std::nullopt;
    const absl::StatusOr<Tensor> t = tensor_from_proto(v->tensor());
    if (!t.ok() || t->num_elements() != 1) return std::nullopt;
    return t->to_vector<int32_t>()[0];
  }
  const V1Edge& data_input(int i, int k) const { return index_.inputs[static_cast<size_t>(i)][static_cast<size_t>(k)]; }
  // Node i's data inputs (control inputs come after them).
  int num_data(int i) const {
    int n = 0;
    for (const V1Edge& e : index_.inputs[static_cast<size_t>(i)]) n += !e.control();
    return n;
  }
  bool same(const V1Edge& a, const V1Edge& b) const { return a.src == b.src && a.index == b.index; }

  // A Range(0, limit, 1) node read as input k of node i: its limit's node, else -1.
  int range_limit(int i, int k) {
    const V1Edge& e = data_input(i, k);
    const proto::NodeDef& r = node(e.src);
    if (r.op() != "Range" || e.index != 0 || num_data(e.src) < 3) return -1;
    if (int_const(data_input(e.src, 0).src) != 0 || int_const(data_input(e.src, 2).src) != 1) return -1;
    for (int k : {0, 2}) dropped_.push_back(data_input(e.src, k).src);
    dropped_.push_back(e.src);
    return data_input(e.src, 1).src;
  }

  // TensorArray.stack() is GatherV3(h, Range(0, SizeV3(h, flow), 1), flow): the buffer itself.
  // unstack(value) is ScatterV3(h, Range(0, shape(value)[0], 1), value, flow): the value's rows
  // into the buffer. Their Ranges (whose limits are known only at run time, where tapeflow's
  // Range takes constants) and what only they read are dropped.
  void find_stacks_and_unstacks() {
    for (int i = 0; i < def_.node_size(); ++i) {
      const proto::NodeDef& n = node(i);
      const size_t before = dropped_.size();
      if (n.op() == "TensorArrayGatherV3" && num_data(i) == 3) {
        const int limit = range_limit(i, 1);
        if (limit >= 0 && node(limit).op() == "TensorArraySizeV3" && num_data(limit) == 2 &&
            same(data_input(limit, 1), data_input(i, 2))) {
          stack_.insert(i);
          dropped_.push_back(limit);
          continue;
        }
      }
      if (n.op() == "TensorArrayScatterV3" && num_data(i) == 4) {
        const int limit = range_limit(i, 1);
        if (limit >= 0 && node(limit).op() == "StridedSlice" && num_data(limit) == 4) {
          const V1Edge& shape = data_input(limit, 0);
          const proto::AttrValue* shrink = find_attr(node(limit), "shrink_axis_mask");
          if (node(shape.src).op() == "Shape" && num_data(shape.src) == 1 &&
              same(data_input(shape.src, 0), data_input(i, 2)) && shrink != nullptr && shrink->i() == 1 &&
              int_const(data_input(limit, 1).src) == 0) {
            unstack_.insert(i);
            for (int k = 0; k < 4; ++k) dropped_.push_back(data_input(limit, k).src);
            dropped_.push_back(limit);
            continue;
          }
        }
      }
      dropped_.resize(before);  // not the pattern: its Range stays
    }
    // What the patterns read goes when nothing else reads it.
    std::vector<std::vector<int>> readers(static_cast<size_t>(def_.node_size()));
    for (int i = 0; i < def_.node_size(); ++i)
      for (const V1Edge& e : index_.inputs[static_cast<size_t>(i)]) readers[static_cast<size_t>(e.src)].push_back(i);
    gone_.assign(static_cast<size_t>(def_.node_size()), false);
    for (bool changed = true; changed;) {
      changed = false;
      for (int c : dropped_) {
        if (gone_[static_cast<size_t>(c)]) continue;
        bool unread = true;
        for (int r : readers[static_cast<size_t>(c)])
          unread = unread && (gone_[static_cast<size_t>(r)] || ((stack_.contains(r) || unstack_.contains(r)) &&
                                                                 data_input(r, 1).src == c));
        if (unread) gone_[static_cast<size_t>(c)] = changed = true;
      }
    }
  }

  // `in` of a kept node, renamed: a TensorArrayV3's flow is its buffer, output 0.
  std::string renamed(const std::string& in, const V1Edge& e) const {
    if (e.control() || e.index != 1 || node(e.src).op() != "TensorArrayV3") return in;
    return node(e.src).name();
  }

  GraphDef emit() const {
    GraphDef out;
    *out.mutable_versions() = def_.versions();
    *out.mutable_library() = def_.library();
    for (int i = 0; i < def_.node_size(); ++i) {
      if (handle_[static_cast<size_t>(i)] || gone_[static_cast<size_t>(i)]) continue;
      const proto::NodeDef& n = node(i);
      const std::vector<V1Edge>& edges = index_.inputs[static_cast<size_t>(i)];
      proto::NodeDef* m = out.add_node();
      m->set_name(n.name());
      m->set_device(n.device());
      std::vector<std::string> data;
      std::vector<std::string> control;
      for (int k = 0; k < n.input_size(); ++k) {
        const V1Edge& e = edges[static_cast<size_t>(k)];
        if (e.control()) {
          if (!handle_[static_cast<size_t>(e.src)]) control.push_back(n.input(k));
        } else {
          data.push_back(renamed(n.input(k), e));
        }
      }
      const ArrayOp* op = array_op(n.op());
      if (stack_.contains(i)) {
        m->set_op("Identity");
        m->add_input(data[2]);
        (*m->mutable_attr())["T"].set_type(find_attr(n, "dtype") ? find_attr(n, "dtype")->type() : proto::DT_FLOAT);
      } else if (unstack_.contains(i)) {
        m->set_op("TensorArrayBufferUnstack");
        m->add_input(data[3]);
        m->add_input(data[2]);
        if (grows_[static_cast<size_t>(i)]) (*m->mutable_attr())["_grow"].set_b(true);
      } else if (n.op() == "TensorArrayV3") {
        m->set_op("TensorArrayBuffer");
        if (!data.empty()) m->add_input(data[0]);
        (*m->mutable_attr())["dtype"] = *find_attr(n, "dtype");
        (*m->mutable_attr())["element_shape"] = *find_attr(n, "element_shape");
      } else if (op != nullptr) {
        m->set_op(op->tapeflow_type);
        if (op->flow_input >= 0 && op->flow_input < static_cast<int>(data.size())) m->add_input(data[static_cast<size_t>(op->flow_input)]);
        for (int k : op->kept)
          if (k < static_cast<int>(data.size())) m->add_input(data[static_cast<size_t>(k)]);
        if (op->gives_flow && grows_[static_cast<size_t>(i)]) (*m->mutable_attr())["_grow"].set_b(true);  // tapeflow's "grow"
      } else {
        m->set_op(n.op());
        *m->mutable_attr() = n.attr();
        for (const std::string& in : data) m->add_input(in);
        if (flow_dtype_[static_cast<size_t>(i)] != proto::DT_INVALID) {
          (*m->mutable_attr())["T"].set_type(flow_dtype_[static_cast<size_t>(i)]);
          m->mutable_attr()->erase("_output_shapes");
        }
      }
      for (const std::string& c : control) m->add_input(c);
      keep_colocations(*m, index_, [&](int k) { return !handle_[static_cast<size_t>(k)] && !gone_[static_cast<size_t>(k)]; });
    }
    return out;
  }


  const GraphDef& def_;
  V1Index index_;
  std::vector<std::vector<Reader>> readers_;  // each node's data readers
  std::vector<bool> handle_;                  // a node a handle passes through: removed
  std::vector<proto::DataType> flow_dtype_;   // a node a flow passes through or a write: the array's dtype
  std::vector<bool> grows_;                   // ... of a dynamic_size array
  std::vector<int> carried_;                  // a node a flow passes through or a write: the array's TensorArrayV3
  std::vector<int> handle_of_, flow_of_;      // a TensorArray op: the array whose handle / flow it reads
  struct Handle {
    int node;
    int output;
    int array;  // its TensorArrayV3
  };
  std::deque<Handle> handles_;                // to follow
  std::deque<Flow> flows_;
  absl::flat_hash_set<int> stack_, unstack_;  // GatherV3 / ScatterV3 nodes of those patterns
  std::vector<int> dropped_;                  // what the patterns read, to drop when nothing else does
  std::vector<bool> gone_;
};

}  // namespace

absl::StatusOr<std::optional<GraphDef>> rewrite_tensor_arrays(const GraphDef& def) { return Rewrite(def).run(); }

bool is_tensor_array_type(std::string_view type) { return type == "TensorArrayV3" || array_op(type) != nullptr; }

}  // namespace tapeflow::graph_def_internal
