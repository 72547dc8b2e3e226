// Note [TensorLists in a GraphDef] (graph/graph_def_tensor_arrays.h).
#include <deque>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "graph/graph_def_control_flow.h"
#include "graph/graph_def_tensor_arrays.h"
#include "graph/graph_def_v1_functions.h"

namespace tapeflow::graph_def_internal {

namespace {

constexpr int64_t kMaxRank = 32;  // an element shape's dims, more than any model uses

bool makes_list(std::string_view op) {
  return op == "TensorListReserve" || op == "TensorListFromTensor" || op == "EmptyTensorList";
}
// Ops that take a list as input 0 (and give one: SetItem, PushBack).
bool reads_list(std::string_view op) {
  return op == "TensorListSetItem" || op == "TensorListGetItem" || op == "TensorListStack" || op == "TensorListLength" ||
         op == "TensorListGather" || op == "TensorListPushBack";
}
bool gives_list(std::string_view op) { return op == "TensorListSetItem" || op == "TensorListPushBack"; }
bool is_while(std::string_view op) { return op == "While" || op == "StatelessWhile"; }
// Ops whose input k is their output k (a While's loop variables; IdentityN, which the inlining of
// a function call makes of its results).
bool passes_each(std::string_view op) { return is_while(op) || op == "IdentityN"; }

bool has_variant(const proto::NodeDef& n) {
  for (const auto& [key, v] : n.attr()) {
    if (v.type() == proto::DT_VARIANT) return true;
    for (int t : v.list().type())
      if (t == proto::DT_VARIANT) return true;
  }
  return false;
}

class ListRewrite {
 public:
  explicit ListRewrite(const GraphDef& def) : def_(def) {}

  absl::StatusOr<std::optional<GraphDef>> run() {
    bool any = false;
    for (const proto::NodeDef& n : def_.node()) any = any || makes_list(n.op()) || reads_list(n.op()) || has_variant(n);
    if (!any) return std::nullopt;
    TF_RETURN_IF_ERROR(index_.build(def_));
    if (!controls_last(index_)) return std::nullopt;  // the import refuses it, naming the node
    const size_t n = static_cast<size_t>(def_.node_size());
    readers_.resize(n);
    list_.assign(n, {});
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < index_.inputs[i].size(); ++k) {
        const V1Edge& e = index_.inputs[i][k];
        if (!e.control()) readers_[static_cast<size_t>(e.src)].push_back({static_cast<int>(i), static_cast<int>(k), e.index});
      }
    // Lists start where they are made, and at a placeholder a list passes through (a function's
    // argument, which build_new_body types as the buffer the caller passes).
    for (int i = 0; i < def_.node_size(); ++i) {
      const proto::NodeDef& nd = node(i);
      if (makes_list(nd.op())) {
        const proto::AttrValue* dtype = find_attr(nd, "element_dtype");
        if (dtype == nullptr) return node_error(nd, absl::StatusCode::kInvalidArgument, "attr 'element_dtype' is missing");
        mark(i, 0, dtype->type());
      }
      // The inputs that are lists: input 0 of a list op or of a DT_VARIANT Identity; input k of a
      // While or IdentityN whose T entry k is DT_VARIANT (a nested loop over the list).
      std::vector<int> list_inputs;
      if (reads_list(nd.op()) || (nd.op() == "Identity" && has_variant(nd))) list_inputs.push_back(0);
      if (passes_each(nd.op()))
        if (const proto::AttrValue* t = find_attr(nd, "T"))
          for (int k = 0; k < t->list().type_size(); ++k)
            if (t->list().type(k) == proto::DT_VARIANT) list_inputs.push_back(k);
      for (int k : list_inputs) {
        if (k >= num_data(i)) continue;
        const V1Edge& e = index_.inputs[static_cast<size_t>(i)][static_cast<size_t>(k)];
        const proto::AttrValue* dtype = find_attr(node(e.src), "dtype");
        if (node(e.src).op() == "Placeholder" && dtype != nullptr && dtype->type() != proto::DT_VARIANT)
          mark(e.src, 0, dtype->type());
      }
    }
    TF_RETURN_IF_ERROR(follow());
    return emit();
  }

 private:
  struct Reader {
    int node;
    int input;
    int output;
  };

  const proto::NodeDef& node(int i) const { return def_.node(i); }
  int num_data(int i) const {
    int k = 0;
    for (const V1Edge& e : index_.inputs[static_cast<size_t>(i)]) k += !e.control();
    return k;
  }
  void mark(int i, int output, proto::DataType dtype) {
    auto& outs = list_[static_cast<size_t>(i)];
    if (outs.size() <= static_cast<size_t>(output)) outs.resize(static_cast<size_t>(output) + 1, proto::DT_INVALID);
    if (outs[static_cast<size_t>(output)] != proto::DT_INVALID) return;
    outs[static_cast<size_t>(output)] = dtype;
    pending_.push_back({i, output});
  }
  proto::DataType list_dtype(int i, int output) const {
    const auto& outs = list_[static_cast<size_t>(i)];
    return static_cast<size_t>(output) < outs.size() ? outs[static_cast<size_t>(output)] : proto::DT_INVALID;
  }

  // Each list goes on through what passes it: SetItem and PushBack, Identity, a While (input k
  // is loop variable k, output k).
  absl::Status follow() {
    while (!pending_.empty()) {
      const auto [src, output] = pending_.front();
      pending_.pop_front();
      const proto::DataType dtype = list_dtype(src, output);
      for (const Reader& r : readers_[static_cast<size_t>(src)]) {
        if (r.output != output) continue;
        const proto::NodeDef& reader = node(r.node);
        if (reads_list(reader.op()) && r.input == 0) {
          if (gives_list(reader.op())) mark(r.node, 0, dtype);
        } else if (reader.op() == "Identity") {
          mark(r.node, 0, dtype);
        } else if (passes_each(reader.op())) {
          mark(r.node, r.input, dtype);
        }
      }
    }
    return absl::OkStatus();
  }

  // An element_shape input as a shape: a Const int32/int64 vector (-1 for an unknown dim); a
  // scalar -1 (unknown rank) or anything else is refused.
  absl::StatusOr<proto::TensorShapeProto> element_shape(int i, int input) const {
    const V1Edge& e = index_.inputs[static_cast<size_t>(i)][static_cast<size_t>(input)];
    const proto::NodeDef& c = node(e.src);
    const proto::AttrValue* v = find_attr(c, "value");
    if (c.op() != "Const" || v == nullptr || !v->has_tensor())
      return node_error(node(i), absl::StatusCode::kUnimplemented,
                        "the list's element_shape must be a Const (tapeflow holds a list as one tensor [size, *element])");
    const proto::TensorProto& t = v->tensor();
    if (t.dtype() != proto::DT_INT32 && t.dtype() != proto::DT_INT64)
      return node_error(node(i), absl::StatusCode::kInvalidArgument, "the list's element_shape must be int32 or int64");
    if (t.tensor_shape().dim_size() != 1)
      return node_error(node(i), absl::StatusCode::kUnimplemented,
                        "the list's element_shape has no rank; tapeflow holds a list as one tensor [size, *element] "
                        "and needs the element's rank (Note [TensorLists in a GraphDef])");
    const int64_t rank = t.tensor_shape().dim(0).size();
    if (rank < 0 || rank > kMaxRank)  // checked first: a hostile length is refused, not expanded
      return node_error(node(i), absl::StatusCode::kInvalidArgument,
                        absl::StrCat("the list's element_shape has ", rank, " dims; tapeflow takes at most ", kMaxRank));
    absl::StatusOr<Tensor> value = tensor_from_proto(t);  // TensorFlow's rules: tensor_content, the short form
    if (!value.ok())
      return node_error(node(i), value.status().code(),
                        absl::StrCat("the list's element_shape: ", value.status().message()));
    std::vector<int64_t> dims;
    if (t.dtype() == proto::DT_INT32)
      for (int32_t d : value->to_vector<int32_t>()) dims.push_back(d);
    else
      dims = value->to_vector<int64_t>();
    proto::TensorShapeProto shape;
    for (int64_t d : dims) shape.add_dim()->set_size(d < 0 ? -1 : d);
    return shape;
  }

  absl::StatusOr<std::optional<GraphDef>> emit() {
    GraphDef out;
    *out.mutable_versions() = def_.versions();
    *out.mutable_library() = def_.library();
    bool changed = false;
    for (int i = 0; i < def_.node_size(); ++i) {
      const proto::NodeDef& n = node(i);
      proto::NodeDef* m = out.add_node();
      *m = n;
      std::vector<std::string> data, control;
      for (const std::string& in : n.input()) (in.starts_with("^") ? control : data).push_back(in);
      auto set_inputs = [&](std::initializer_list<int> kept) {
        m->clear_input();
        for (int k : kept)
          if (k < static_cast<int>(data.size())) m->add_input(data[static_cast<size_t>(k)]);
        for (const std::string& c : control) m->add_input(c);
      };
      const proto::DataType dtype = list_dtype(i, 0);
      const proto::AttrValue* element = find_attr(n, "element_dtype");
      const proto::DataType element_dtype = element != nullptr ? element->type() : proto::DT_INVALID;
      auto retype = [&](const char* op) {
        m->set_op(op);
        m->clear_attr();
        changed = true;
      };
      if (n.op() == "TensorListReserve" && num_data(i) == 2) {
        TF_ASSIGN_OR_RETURN(proto::TensorShapeProto shape, element_shape(i, 0));
        retype("TensorArrayBuffer");
        (*m->mutable_attr())["dtype"].set_type(element_dtype);
        *(*m->mutable_attr())["element_shape"].mutable_shape() = shape;
        set_inputs({1});
      } else if (n.op() == "EmptyTensorList" && num_data(i) == 2) {
        TF_ASSIGN_OR_RETURN(proto::TensorShapeProto shape, element_shape(i, 0));
        retype("TensorArrayBuffer");
        (*m->mutable_attr())["dtype"].set_type(element_dtype);
        *(*m->mutable_attr())["element_shape"].mutable_shape() = shape;
        proto::NodeDef& zero = *out.add_node();
        zero.set_name(absl::StrCat(n.name(), "/tapeflow_empty"));
        zero.set_op("Const");
        (*zero.mutable_attr())["dtype"].set_type(proto::DT_INT32);
        proto::TensorProto& z = *(*zero.mutable_attr())["value"].mutable_tensor();
        z.set_dtype(proto::DT_INT32);
        z.add_int_val(0);
        for (const std::string& c : control) zero.add_input(c);
        m->clear_input();
        m->add_input(zero.name());
      } else if ((n.op() == "TensorListFromTensor" || n.op() == "TensorListStack") && num_data(i) == 2) {
        retype("Identity");  // a tensor is the buffer of its rows, and a buffer its stack
        (*m->mutable_attr())["T"].set_type(element_dtype);
        set_inputs({0});
      } else if (n.op() == "TensorListSetItem" && num_data(i) == 3) {
        retype("TensorArrayBufferWrite");
        if (const proto::AttrValue* resize = find_attr(n, "resize_if_index_out_of_bounds"); resize != nullptr && resize->b())
          (*m->mutable_attr())["_grow"].set_b(true);
        set_inputs({0, 1, 2});
      } else if (n.op() == "TensorListPushBack" && num_data(i) == 2) {
        proto::NodeDef& size = *out.add_node();
        size.set_name(absl::StrCat(n.name(), "/tapeflow_size"));
        size.set_op("TensorArrayBufferSize");
        size.add_input(data[0]);
        retype("TensorArrayBufferWrite");
        (*m->mutable_attr())["_grow"].set_b(true);
        m->clear_input();
        m->add_input(data[0]);
        m->add_input(size.name());
        m->add_input(data[1]);
        for (const std::string& c : control) m->add_input(c);
      } else if (n.op() == "TensorListGetItem" && num_data(i) == 3) {
        retype("TensorArrayBufferRead");
        set_inputs({0, 1});
      } else if (n.op() == "TensorListGather" && num_data(i) == 3) {
        retype("TensorArrayBufferGather");
        set_inputs({0, 1});
      } else if (n.op() == "TensorListLength" && num_data(i) == 1) {
        retype("TensorArrayBufferSize");
        set_inputs({0});
      } else if (n.op() == "Identity" && dtype != proto::DT_INVALID) {
        (*m->mutable_attr())["T"].set_type(dtype);
        m->mutable_attr()->erase("_output_shapes");
        changed = true;
      } else if (passes_each(n.op())) {
        proto::AttrValue* t = m->mutable_attr()->contains("T") ? &(*m->mutable_attr())["T"] : nullptr;
        proto::AttrValue* shapes = m->mutable_attr()->contains("output_shapes") ? &(*m->mutable_attr())["output_shapes"] : nullptr;
        for (int k = 0; t != nullptr && k < t->list().type_size(); ++k) {
          const proto::DataType d = list_dtype(i, k);
          if (d == proto::DT_INVALID) continue;
          t->mutable_list()->set_type(k, d);
          if (shapes != nullptr && k < shapes->list().shape_size()) {
            shapes->mutable_list()->mutable_shape(k)->Clear();
            shapes->mutable_list()->mutable_shape(k)->set_unknown_rank(true);
          }
          changed = true;
        }
        m->mutable_attr()->erase("_output_shapes");
      }
    }
    if (!changed) return std::nullopt;
    return out;
  }

  const GraphDef& def_;
  V1Index index_;
  std::vector<std::vector<Reader>> readers_;
  std::vector<std::vector<proto::DataType>> list_;  // per node output: the element dtype of the list it is
  std::deque<std::pair<int, int>> pending_;
};

}  // namespace

absl::StatusOr<std::optional<GraphDef>> rewrite_tensor_lists(const GraphDef& def) { return ListRewrite(def).run(); }

bool rewritten_op_type(std::string_view type) {
  return makes_list(type) || reads_list(type) || is_tensor_array_type(type) || is_v1_control_flow_type(type);
}

}  // namespace tapeflow::graph_def_internal
