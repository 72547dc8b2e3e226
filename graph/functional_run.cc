// Running If, While and Case nodes: Note [Functional control flow] (graph/functional_ops.h).
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "graph/executor.h"
#include "graph/functional_ops.h"

namespace tapeflow {

struct FunctionalPlans {
  std::vector<std::shared_ptr<const FunctionBody>> bodies;  // the node's functions, in its order
  // One per body, shared by every node that runs the same body (nested bodies reach the same
  // function along many paths: compiling each path apart would be exponential in the nesting).
  std::vector<std::shared_ptr<const Plan>> plans;
};

namespace {

// The plans one top-level Plan::compile made, by body (compile_functional recurses through
// Plan::compile for nested bodies).
struct CompiledBodies {
  absl::flat_hash_map<const FunctionBody*, std::shared_ptr<const Plan>> plans;
};
thread_local CompiledBodies* compiled_bodies = nullptr;

const char* role_of(FunctionalKind kind, size_t body) {
  switch (kind) {
    case FunctionalKind::kIf: return body == 0 ? "then_branch" : "else_branch";
    case FunctionalKind::kWhile: return body == 0 ? "cond" : "body";
    default: return "branch";
  }
}

std::string describe_function(const Node& node, size_t body) {
  const FunctionBody& b = *node.functions()[body];
  return absl::StrCat(role_of(functional_kind(node.op), body), " '", b.name, "' of ", describe_node(node));
}

[[noreturn]] void fail(const Node& node, absl::StatusCode code, const std::string& message) {
  throw_status(absl::Status(code, absl::StrCat("[", node.op->api_name, "] ", message, "\n  in ", describe_node(node))), node.loc);
}

// `what` (values a body takes or gives) against the specs they must fit.
void check_values(const Node& node, const std::vector<Tensor>& values, absl::Span<const TensorSpec> specs,
                  const std::string& what) {
  if (values.size() != specs.size())
    fail(node, absl::StatusCode::kInvalidArgument, absl::StrCat(what, ": ", values.size(), " values for ", specs.size()));
  for (size_t k = 0; k < values.size(); ++k)
    if (values[k].dtype() != specs[k].dtype || !values[k].shape().is_compatible_with(specs[k].shape))
      fail(node, absl::StatusCode::kInvalidArgument,
           absl::StrCat(what, ": value ", k, " is ", dtype_name(values[k].dtype()), " ", values[k].shape().to_string(),
                        " where ", dtype_name(specs[k].dtype), " ", specs[k].shape.to_string(), " is expected"));
}

}  // namespace

std::shared_ptr<const FunctionalPlans> compile_functional(const Node& node, const SessionOptions& options,
                                                          const std::vector<Device*>& devices, std::source_location loc) {
  std::optional<CompiledBodies> owned;
  if (compiled_bodies == nullptr) compiled_bodies = &owned.emplace();
  struct Release {
    std::optional<CompiledBodies>& owned;
    ~Release() { if (owned) compiled_bodies = nullptr; }
  } release{owned};
  auto plans = std::make_shared<FunctionalPlans>();
  plans->bodies = node.functions();
  for (size_t b = 0; b < plans->bodies.size(); ++b) {
    const FunctionBody& body = *plans->bodies[b];
    if (const auto it = compiled_bodies->plans.find(&body); it != compiled_bodies->plans.end()) {
      plans->plans.push_back(it->second);
      continue;
    }
    Plan::Request request;
    request.feeds = body.args;
    for (const TensorRef& r : body.results) {
      Plan::FetchSpec fetch;
      fetch.ref = r;
      request.fetches.push_back(std::move(fetch));
    }
    if (body.call >= 0) request.targets = {body.call};
    try {
      std::shared_ptr<const Plan> plan = Plan::compile(body.graph, request, options, loc, &devices);
      compiled_bodies->plans.emplace(&body, plan);
      plans->plans.push_back(std::move(plan));
    } catch (Error& e) {
      e.add_context(absl::StrCat("(compiling ", describe_function(node, b), ")"));
      throw;
    }
  }
  return plans;
}

std::vector<Tensor> run_functional(const FunctionalPlans& plans, const Node& node, std::vector<Tensor> inputs,
                                   SessionState& state, const RunOptions* options,
                                   std::optional<std::chrono::steady_clock::time_point> deadline) {
  const FunctionalKind kind = functional_kind(node.op);
  auto run_body = [&](size_t b, const std::vector<Tensor>& args) {
    const FunctionBody& body = *plans.bodies[b];
    check_values(node, args, arg_specs(body), absl::StrCat("the arguments of ", role_of(kind, b), " '", body.name, "'"));
    // The run's deadline holds inside the body too (its own run counts from its own start).
    std::optional<RunOptions> inner;
    if (deadline) {
      inner = *options;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      inner->timeout_in_ms = std::max<int64_t>(1, left.count());
    }
    try {
      return plans.plans[b]->run(args, state.body_state(&body), {}, inner ? &*inner : options, nullptr, node.loc);
    } catch (Error& e) {
      e.add_context(absl::StrCat("(in ", describe_function(node, b), ")"));
      throw;
    }
  };
  if (kind == FunctionalKind::kWhile) {
    std::vector<Tensor> vars = std::move(inputs);
    for (int64_t iteration = 0;; ++iteration) {
      if (deadline && std::chrono::steady_clock::now() > *deadline)
        fail(node, absl::StatusCode::kDeadlineExceeded,
             absl::StrCat("the loop ran past the run's timeout of ", options->timeout_in_ms, " ms (", iteration,
                          " iterations done)"));
      if (!truth_value(run_body(0, vars)[0])) break;
      vars = run_body(1, vars);
    }
    check_values(node, vars, node.outputs, "the loop's results");
    return vars;
  }
  const size_t branch = kind == FunctionalKind::kIf ? (truth_value(inputs[0]) ? 0 : 1)
                                                    : static_cast<size_t>(case_branch(inputs[0], static_cast<int>(plans.plans.size())));
  inputs.erase(inputs.begin());
  std::vector<Tensor> results = run_body(branch, inputs);
  check_values(node, results, node.outputs,
               absl::StrCat("the results of ", role_of(kind, branch), " '", plans.bodies[branch]->name, "'"));
  return results;
}

}  // namespace tapeflow
