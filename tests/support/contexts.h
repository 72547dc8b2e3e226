// Runs one op call in the three contexts an op must work in: eagerly, traced by function(),
// and in a Session over placeholders whose shapes may have unknown dims. Shared by the
// conv_variants, batch_norm and resize suites.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "graph/function.h"
#include "graph/graph_context.h"
#include "graph/graph_ops.h"
#include "graph/session.h"
#include "tests/support/test_util.h"

namespace tapeflow {

using OpFn = std::function<Tensor(const std::vector<Tensor>&)>;

// f(inputs) traced and run through a Session must equal f run eagerly. The Session's graph is
// built over placeholders of `partial` shapes (unknown dims allowed); the symbolic output must
// have `symbolic_shape`. Up to three inputs.
inline void expect_same_in_every_context(const OpFn& f, const std::vector<Tensor>& inputs,
                                         const std::vector<Shape>& partial, const Shape& symbolic_shape,
                                         double tol = 1e-6) {
  const Tensor eager = f(inputs);
  Tensor traced;
  if (inputs.size() == 1) {
    auto t = function([&](const Tensor& a) { return f({a}); });
    traced = t(inputs[0]);
  } else if (inputs.size() == 2) {
    auto t = function([&](const Tensor& a, const Tensor& b) { return f({a, b}); });
    traced = t(inputs[0], inputs[1]);
  } else {
    auto t = function([&](const Tensor& a, const Tensor& b, const Tensor& c) { return f({a, b, c}); });
    traced = t(inputs[0], inputs[1], inputs[2]);
  }
  expect_close(traced, eager, tol);
  Graph g;
  std::vector<Tensor> holders;
  Tensor out;
  {
    auto scope = g.as_default();
    for (size_t i = 0; i < inputs.size(); ++i) holders.push_back(placeholder(inputs[i].dtype(), partial[i]));
    out = f(holders);
  }
  EXPECT_EQ(out.shape(), symbolic_shape);
  FeedList feeds;
  for (size_t i = 0; i < inputs.size(); ++i) feeds.push_back({holders[i], inputs[i]});
  Session sess(g);
  expect_close(sess.run(out, feeds), eager, tol);
}

}  // namespace tapeflow
