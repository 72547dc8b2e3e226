#include "missing_symbols.h"

#include <cstdint>
#include <stdexcept>

#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace tapeflow_repl {

void throw_missing_symbol(const char* name) {
  throw std::runtime_error(std::string("nothing defines ") + name +
                           ": it is declared but not defined, and no loaded library has it (define it, or "
                           "load its library with %lib)");
}

std::vector<std::string> stub_missing_functions(llvm::Module& module,
                                                const std::function<bool(llvm::StringRef)>& resolvable) {
  std::vector<std::string> stubbed;
  for (llvm::Function& f : module) {
    if (!f.isDeclaration() || f.isIntrinsic() || f.use_empty() || resolvable(f.getName())) continue;
    const std::string name = llvm::demangle(f.getName().str());
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(module.getContext(), "entry", &f));
    llvm::FunctionType* type = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy()}, false);
    llvm::Value* callee = b.CreateIntToPtr(b.getInt64(reinterpret_cast<uintptr_t>(&throw_missing_symbol)), b.getPtrTy());
    b.CreateCall(type, callee, {b.CreateGlobalString(name)});
    b.CreateUnreachable();
    // Private to this module, and unwindable: the exception passes through it to the caller.
    f.setLinkage(llvm::GlobalValue::InternalLinkage);
    f.setVisibility(llvm::GlobalValue::DefaultVisibility);
    f.setDLLStorageClass(llvm::GlobalValue::DefaultStorageClass);
    f.removeFnAttr(llvm::Attribute::NoUnwind);
    f.setUWTableKind(llvm::UWTableKind::Default);
    stubbed.push_back(name);
  }
  return stubbed;
}

}  // namespace tapeflow_repl
