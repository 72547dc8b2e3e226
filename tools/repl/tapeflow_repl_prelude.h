// The code tapeflow-repl runs in the interpreter before the first input (compiled by clang, and
// precompiled into the build's tapeflow_repl.pch): tapeflow itself, the guard every statement
// and expression runs under, and how a bare expression's value is printed (Note [REPL cells] in
// cell.h). show() gets a Held value, or a Marker for a void expression, from the comma trick of
// wrap_expression().
//
// A session runs `#include <tapeflow/tapeflow.h>` first and then this header, which needs only
// the layers below (scripts/check_layers.sh: tools/ does not include the umbrella header).
#pragma once

#include <cstdlib>
#include <cxxabi.h>
#include <iostream>
#include <memory>
#include <ranges>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "core/dtype.h"
#include "core/shape.h"
#include "eager/tensor.h"
#include "eager/variable.h"
#include "graph/graph.h"
#include "tape/gradient_tape.h"

namespace tapeflow_repl {

inline std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string s = (status == 0 && d) ? d : name;
  std::free(d);
  return s;
}

inline void report(const std::exception& e) {
  std::string type = demangle(typeid(e).name());
  if (type.rfind("tapeflow::", 0) == 0) type.erase(0, 10);
  std::cout.flush();
  std::cerr << type << ": " << e.what() << std::endl;
}

inline int run(void (*cell)()) {
  int rc = 0;
  try {
    cell();
  } catch (const std::exception& e) {
    report(e);
    rc = 1;
  } catch (...) {
    std::cout.flush();
    std::cerr << "error: an exception that is not a std::exception" << std::endl;
    rc = 1;
  }
  std::cout.flush();
  return rc;
}

struct Marker {};
template <class T> struct Held { T&& value; };
template <class T> Held<T> operator,(T&& value, Marker) { return Held<T>{std::forward<T>(value)}; }

// A Variable whose declaration threw keeps zero-filled storage (a null state) and has no
// "defined" test of its own; reading it would dereference null.
inline bool unconstructed(const tapeflow::Variable& v) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(&v);
  for (size_t i = 0; i < sizeof v; ++i)
    if (p[i]) return false;
  return true;
}

template <class T> void print(std::ostream& os, const T& v) {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, tapeflow::Variable>) {
    if (unconstructed(v)) os << "<tapeflow.Variable: not initialised>";
    else os << v;
  } else if constexpr (std::is_same_v<U, bool>) {
    os << (v ? "true" : "false");
  } else if constexpr (std::is_same_v<U, tapeflow::Shape>) {
    os << v.to_string();
  } else if constexpr (std::is_same_v<U, tapeflow::DType>) {
    os << tapeflow::dtype_name(v);
  } else if constexpr (std::is_same_v<U, tapeflow::Graph>) {
    os << "<Graph: " << v.num_nodes() << " nodes; " << v.describe() << ">";
  } else if constexpr (std::is_same_v<U, tapeflow::Operation>) {
    if (!v.defined()) os << "<Operation: empty>";
    else os << "<Operation '" << v.name() << "' type=" << v.type() << " device='" << v.device() << "'>";
  } else if constexpr (std::is_same_v<U, tapeflow::GradientTape>) {
    tapeflow::TapeStats s = v.stats();
    os << "<GradientTape: " << (v.persistent() ? "persistent, " : "") << s.recorded_ops << " recorded ops, "
       << s.saved_tensors << " saved tensors (" << s.saved_bytes << " bytes)>";
  } else if constexpr (std::is_same_v<U, std::string> || std::is_same_v<U, std::string_view>) {
    os << '"' << v << '"';
  } else if constexpr (requires { os << v; }) {
    os << v;
  } else if constexpr (std::ranges::range<const U>) {
    os << "[";
    bool first = true;
    constexpr bool kArithmetic = std::is_arithmetic_v<std::remove_cvref_t<std::ranges::range_value_t<const U>>>;
    for (const auto& e : v) {
      if (!first) os << (kArithmetic ? ", " : ",\n ");
      first = false;
      print(os, e);
    }
    os << "]";
  } else {
    os << "(" << demangle(typeid(U).name()) << ") @" << static_cast<const void*>(std::addressof(v));
  }
}

inline void show(Marker) {}
template <class T> void show(Held<T> h) {
  // `std::cout << x` as an input: the stream it gives back is not worth printing.
  if constexpr (!std::is_base_of_v<std::ios_base, std::remove_cvref_t<T>>) {
    print(std::cout, h.value);
    std::cout << std::endl;
  }
}

// %who: one row per Tensor or Variable; other globals print nothing.
inline void who_row(const char* name, const tapeflow::Tensor& t) {
  std::cout << name << "  Tensor    ";
  if (t.defined()) std::cout << tapeflow::dtype_name(t.dtype()) << " " << t.shape().to_string() << "\n";
  else std::cout << "(empty)\n";
}
inline void who_row(const char* name, const tapeflow::Variable& v) {
  if (unconstructed(v)) {
    std::cout << name << "  Variable  (not initialised)\n";
    return;
  }
  std::cout << name << "  Variable  " << tapeflow::dtype_name(v.dtype()) << " " << v.shape().to_string()
            << "  '" << v.name() << "'\n";
}
template <class T> void who_row(const char*, const T&) {}

}  // namespace tapeflow_repl
