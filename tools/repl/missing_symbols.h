// Note [Missing symbols]: an input that calls a function nothing defines (`extern int
// nowhere(); int k = nowhere();`) compiles, and then the JIT cannot link it ("Symbols not found:
// [ _Z7nowherev ]"). ORC fails the whole module, including the inline functions and template
// instantiations clang emitted there first; clang does not emit those again, so every later
// input that used one failed too, and Interpreter::Undo only turns "failed" into "not found"
// (tried with clang 22). So the REPL checks an input's module before running it: each function
// it declares and nobody defines gets a private body in that module that throws
// std::runtime_error naming it. The input then runs up to the call and fails like any other
// error; the session and everything compiled so far stay usable, and a later definition of the
// function is used by later inputs (the stub is private to the module that made it).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"

namespace llvm {
class Module;
}

namespace tapeflow_repl {

// Gives each function that `module` declares, uses and `resolvable` cannot find a body that
// calls throw_missing_symbol(its demangled name). Returns the demangled names it stubbed.
std::vector<std::string> stub_missing_functions(llvm::Module& module,
                                                const std::function<bool(llvm::StringRef)>& resolvable);

// Throws std::runtime_error("nothing defines NAME ..."); the stubs call it by address (in-process).
[[noreturn]] void throw_missing_symbol(const char* name);

}  // namespace tapeflow_repl
