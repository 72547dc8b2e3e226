// What the REPL does with one input ("cell"): the classification and the source rewrites, as
// plain string functions (no clang), so they are unit-tested on their own.
//
// Note [REPL cells]: clang-repl's own handling of three kinds of input is what the REPL works
// around (all seen with clang 22):
// - a top-level statement that contains a lambda crashes clang (mangling a lambda whose context
//   is a TopLevelStmtDecl), and an exception escaping a statement aborts the process. So each
//   statement and each bare expression becomes the body of a fresh function
//   `void __tf_cell_N()`, called through tapeflow_repl::run, which catches and reports.
// - a global whose type depends on a lambda (`auto f = function([](...) {...});`) has internal
//   linkage; the next input's module gets its own zero-filled copy, so `f(t)` in a later input
//   sees an object that was never constructed. An `inline` variable gives the closure type the
//   variable's (external) linkage, so `auto` declarations are made inline.
// - a lambda in a global's initializer cannot have a capture-default; REPL globals need no
//   capture, so a top-level `[&]` or `[=]` in a declaration becomes `[]`.
// Declarations stay at global scope, so the session keeps them; an exception thrown by a
// declaration's initializer is caught around the interpreter call (see repl.cc).
#pragma once

#include <string>
#include <string_view>

namespace tapeflow_repl {

enum class CellKind {
  kEmpty,
  kCommand,      // %help, %quit, ...
  kDirective,    // #include and other preprocessor lines: passed through
  kExpression,   // no trailing ';' or '}': its value is printed
  kStatement,    // runs inside a guarded function
  kDeclaration,  // stays at global scope
};

std::string_view trim(std::string_view s);

// The input with each comment replaced by a space (string and character literals kept).
std::string strip_comments(std::string_view input);

CellKind classify(std::string_view input);

// True while brackets, braces or parentheses are open, or a string literal is (the reader then
// asks for another line).
bool needs_more(std::string_view input);

// The declaration with `inline` added to `auto` variables and top-level capture-defaults removed.
std::string rewrite_declaration(std::string_view input);

// The code for a statement or expression cell number n (see Note [REPL cells]). `#line 1` keeps
// the user's line and column numbers in diagnostics and in tapeflow's error locations.
std::string wrap_statement(std::string_view input, int n);
std::string wrap_expression(std::string_view input, int n);

}  // namespace tapeflow_repl
