// tapeflow-repl: an interactive C++ prompt with libtapeflow loaded, built on clang's
// incremental interpreter (clang::Interpreter, the library behind clang-repl).
//
//   ./build/tapeflow-repl                 # or the installed bin/tapeflow-repl
//   tapeflow> Tensor a = {{1.f, 2.f}, {3.f, 4.f}};
//   tapeflow> a + 1                        (no ';': the value is printed)
//
// Each input is one cell (more lines are read while brackets are open or a line ends in '\').
// cell.h says how cells are classified and rewritten (Note [REPL cells]).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "cell.h"
#include "missing_symbols.h"
#include "clang/AST/Decl.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Interpreter/IncrementalExecutor.h"
#include "clang/Interpreter/Interpreter.h"
#include "llvm/LineEditor/LineEditor.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/ManagedStatic.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "repl_config.h"

namespace fs = std::filesystem;

namespace tapeflow_repl {
namespace {

constexpr const char* kHelp = R"(tapeflow-repl: C++20 with tapeflow loaded (#include <tapeflow/tapeflow.h>).
  expr            an input without a trailing ';' prints its value
  stmt;  decl;    statements run, declarations stay for the rest of the session
  An exception (a tapeflow error or any std::exception) prints its type and message; the
  session and all its variables go on. More lines are read while a bracket is open or a line
  ends in '\'.
Commands:
  %help           this text
  %who            the Tensors and Variables defined so far, with dtypes and shapes
  %time INPUT     runs INPUT and prints its wall time (compiling included)
  %include FILE   #include "FILE"
  %lib PATH       loads a shared library
  %quit           leaves (so does end of input, Ctrl-D)
)";

// What a session includes first; tools/repl/CMakeLists.txt precompiles the same two lines.
constexpr const char* kSessionStart = "#include <tapeflow/tapeflow.h>\n#include <tapeflow_repl_prelude.h>\n";

struct Options {
  bool using_namespace = true;
  bool echo = false;
  std::string library;                // libtapeflow.so to load
  std::vector<std::string> includes;  // -I
  std::vector<std::string> extra;     // --Xcc=...
  std::string pch;                    // tapeflow_repl.pch, when there is one
  bool no_pch = false;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);)
    if (!part.empty()) out.push_back(part);
  return out;
}

// clang refuses a precompiled header older than a header it was made from (and the interpreter
// then crashes), so the build's dependency file (PCH.d, make syntax) is checked first.
bool pch_stale(const fs::path& pch) {
  std::ifstream deps(pch.string() + ".d");
  if (!deps) return false;
  std::error_code ec;
  const auto built = fs::last_write_time(pch, ec);
  if (ec) return true;
  for (std::string word; deps >> word;) {
    if (word == "\\" || word.back() == ':') continue;
    auto t = fs::last_write_time(word, ec);
    if (ec || t > built) {
      std::cerr << "tapeflow-repl: " << word << " changed since " << pch.filename().string()
                << " was made; parsing the headers instead (rebuild the tapeflow-repl target to refresh it)\n";
      return true;
    }
  }
  return false;
}

// Build tree (the executable beside libtapeflow.so) or an installed prefix (bin/ beside lib/
// and include/): the paths are found relative to the executable, so an install can move.
void default_paths(Options& o) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  fs::path dir = exe.parent_path();
  if (!ec && fs::exists(dir / TAPEFLOW_REPL_LIB_NAME) && fs::exists(dir / "CMakeCache.txt")) {
    o.library = (dir / TAPEFLOW_REPL_LIB_NAME).string();
    for (const auto& i : split(TAPEFLOW_REPL_BUILD_INCLUDES, ';')) o.includes.push_back(i);
    o.pch = TAPEFLOW_REPL_BUILD_PCH;
  } else {
    fs::path prefix = ec ? fs::path(TAPEFLOW_REPL_INSTALL_PREFIX) : dir.parent_path();
    o.library = (prefix / TAPEFLOW_REPL_INSTALL_LIBDIR / TAPEFLOW_REPL_LIB_NAME).string();
    o.includes.push_back((prefix / TAPEFLOW_REPL_INSTALL_INCLUDEDIR).string());
    o.includes.push_back((prefix / TAPEFLOW_REPL_INSTALL_INCLUDEDIR / "tapeflow").string());
    o.pch = (prefix / TAPEFLOW_REPL_INSTALL_LIBDIR / "tapeflow" / "tapeflow_repl.pch").string();
  }
  if (!fs::exists(o.pch) || pch_stale(o.pch)) o.pch.clear();
  for (const auto& i : split(TAPEFLOW_REPL_DEP_INCLUDES, ';')) o.includes.push_back(i);
}

std::string error_text(llvm::Error err) {
  std::string text;
  llvm::handleAllErrors(std::move(err), [&](const llvm::ErrorInfoBase& e) {
    if (!text.empty()) text += "; ";
    text += e.message();
  });
  return text;
}

std::string exception_type() {
  const std::type_info* t = abi::__cxa_current_exception_type();
  if (!t) return "exception";
  int status = 0;
  char* d = abi::__cxa_demangle(t->name(), nullptr, nullptr, &status);
  std::string s = (status == 0 && d) ? d : t->name();
  std::free(d);
  if (s.rfind("tapeflow::", 0) == 0) s.erase(0, 10);
  return s;
}

class Repl {
 public:
  Repl(std::unique_ptr<clang::Interpreter> interp, Options opts)
      : interp_(std::move(interp)), opts_(std::move(opts)) {}

  // Runs source text in the interpreter; false (and a message) on failure.
  bool execute(const std::string& code, bool track_names = false) {
    std::fflush(stdout);
    auto ptu = interp_->Parse(code);
    if (!ptu) return fail(ptu.takeError());
    if (ptu->TheModule)  // Note [Missing symbols]
      stub_missing_functions(*ptu->TheModule, [&](llvm::StringRef name) { return resolvable(name); });
    // Note [Initializer exceptions]: a statement's exception is caught in the cell's own code
    // (tapeflow_repl::run); a declaration's initializer runs in the interpreter's global
    // constructors, so its exception unwinds through the JIT's frames (clang::Interpreter
    // registers their unwind tables) and clang's and ORC's (built with unwind tables, without
    // cleanups: what they allocated for this call leaks) into this handler. With clang 22 the
    // initializer is not run again and later inputs, declarations included, work (checked by
    // tests/repl/features.repl); the variable keeps its zero-filled storage (an empty Tensor).
    try {
      if (llvm::Error err = interp_->Execute(*ptu)) return fail_execution(std::move(err));
    } catch (const std::exception& e) {
      std::cout.flush();
      std::cerr << exception_type() << ": " << e.what() << std::endl;
      note_unset(*ptu, track_names);
      return false;
    } catch (...) {
      std::cout.flush();
      std::cerr << "error: an exception that is not a std::exception" << std::endl;
      note_unset(*ptu, track_names);
      return false;
    }
    if (track_names) track(*ptu);
    return true;
  }

  // The globals a declaration cell declared (for %who).
  std::vector<std::string> declared(clang::PartialTranslationUnit& ptu) {
    std::vector<std::string> out;
    if (!ptu.TUPart) return out;
    for (clang::Decl* d : ptu.TUPart->decls()) {
      auto* var = llvm::dyn_cast<clang::VarDecl>(d);
      // `extern int x;` declares what another input or library defines: not a variable of ours.
      if (!var || !var->getIdentifier() || var->hasExternalStorage()) continue;
      std::string name = var->getNameAsString();
      if (name.rfind("__tf", 0) != 0) out.push_back(name);
    }
    return out;
  }

  void track(clang::PartialTranslationUnit& ptu) {
    for (const auto& name : declared(ptu)) {
      bool seen = false;
      for (const auto& n : names_) seen = seen || n == name;
      if (!seen) names_.push_back(name);
    }
  }

  // A declaration whose initializer threw still declares its variable (C++ has no way back):
  // say so, as the value is the zero-filled storage (an empty Tensor, a null handle).
  void note_unset(clang::PartialTranslationUnit& ptu, bool track_names) {
    if (!track_names) return;
    for (const auto& name : declared(ptu))
      std::cerr << "note: '" << name << "' stays declared but was not initialised (an empty handle)" << std::endl;
    track(ptu);
  }

  // One user input. Returns false to quit.
  bool cell(const std::string& input) {
    std::string_view s = trim(input);
    switch (classify(s)) {
      case CellKind::kEmpty:
        return true;
      case CellKind::kCommand:
        return command(std::string(s));
      case CellKind::kDirective:
        execute(std::string(s) + "\n");
        return true;
      case CellKind::kDeclaration:
        execute(rewrite_declaration(s), /*track_names=*/true);
        return true;
      case CellKind::kStatement:
        execute(wrap_statement(s, ++cells_));
        return true;
      case CellKind::kExpression:
        execute(wrap_expression(s, ++cells_));
        return true;
    }
    return true;
  }

  bool start() {
    if (llvm::Error err = interp_->LoadDynamicLibrary(opts_.library.c_str())) {
      std::cerr << "tapeflow-repl: cannot load " << opts_.library << ": " << error_text(std::move(err)) << "\n";
      return false;
    }
    if (!execute(kSessionStart)) return false;
    if (opts_.using_namespace && !execute("using namespace tapeflow;")) return false;
    return true;
  }

  bool echo() const { return opts_.echo; }

 private:
  bool fail(llvm::Error err) {
    std::string text = error_text(std::move(err));
    // clang has printed the diagnostics already.
    if (text != "Parsing failed.") std::cerr << "error: " << text << std::endl;
    return false;
  }

  // True when the JIT can find `name` (an earlier input's definition, libtapeflow, the process).
  bool resolvable(llvm::StringRef name) {
    auto addr = interp_->getSymbolAddress(name);
    if (addr) return true;
    llvm::consumeError(addr.takeError());
    return false;
  }

  // An input the JIT could not link or run although its functions were checked (Note [Missing
  // symbols]): a variable nothing defines (`extern int nothing; nothing`). Its module failed as a
  // whole; running the pending initialisers once more clears the failed one, so the next input
  // does not fail on it. What that input compiled first stays unusable, so say what to do.
  bool fail_execution(llvm::Error err) {
    std::string text = error_text(std::move(err));
    // ORC lists the failed symbols in hash order (it varies from run to run): JIT session error
    // has named what is missing just above.
    if (text.rfind("Failed to materialize symbols", 0) == 0) text = "the JIT could not link this input";
    std::cerr << "error: " << text << std::endl;
    if (auto engine = interp_->getExecutionEngine()) llvm::consumeError(engine->runCtors());
    else llvm::consumeError(engine.takeError());
    std::cerr << "note: this input could not be linked and did not run; earlier variables and code still work, "
                 "but a later input that needs code compiled first here fails the same way (then %quit and "
                 "start again)" << std::endl;
    return false;
  }

  bool command(const std::string& line) {
    std::string name = line.substr(0, line.find_first_of(" \t"));
    std::string arg(trim(std::string_view(line).substr(name.size())));
    if (name == "%quit" || name == "%q" || name == "%exit") return false;
    if (name == "%help") {
      std::cout << kHelp << std::flush;
    } else if (name == "%lib") {
      if (arg.empty()) std::cerr << "%lib: give a library path\n";
      else if (llvm::Error err = interp_->LoadDynamicLibrary(arg.c_str()))
        std::cerr << "%lib: " << error_text(std::move(err)) << "\n";
    } else if (name == "%include") {
      if (arg.empty()) std::cerr << "%include: give a file\n";
      else if (!fs::exists(arg)) std::cerr << "%include: no file '" << arg << "'\n";
      else execute("#include \"" + fs::absolute(arg).string() + "\"\n");
    } else if (name == "%time") {
      auto t0 = std::chrono::steady_clock::now();
      cell(arg);
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      char buf[64];
      std::snprintf(buf, sizeof buf, "wall time: %.1f ms\n", ms);
      std::cout << buf << std::flush;
    } else if (name == "%who") {
      size_t width = 0;
      for (const auto& n : names_) width = std::max(width, n.size());
      std::string code = "void __tf_who_" + std::to_string(++cells_) + "() {\n";
      for (const auto& n : names_)
        code += "  ::tapeflow_repl::who_row(\"" + n + std::string(width - n.size(), ' ') + "\", " + n + ");\n";
      code += "}\n::tapeflow_repl::run(&__tf_who_" + std::to_string(cells_) + ");";
      execute(code);
    } else {
      std::cerr << "unknown command " << name << " (%help lists them)\n";
    }
    return true;
  }

  std::unique_ptr<clang::Interpreter> interp_;
  Options opts_;
  std::vector<std::string> names_;  // globals declared so far, for %who
  int cells_ = 0;
};

// Reads one cell: more lines while brackets are open or a line ends in '\'.
class Reader {
 public:
  explicit Reader(bool echo) : echo_(echo), tty_(isatty(0)) {
    if (tty_) {
      const char* home = std::getenv("HOME");
      std::string history = home ? std::string(home) + "/.tapeflow_repl_history" : "";
      editor_ = std::make_unique<llvm::LineEditor>("tapeflow-repl", history);
    }
  }

  std::optional<std::string> next() {
    std::string cell;
    for (bool first = true;; first = false) {
      std::optional<std::string> line = read_line(first ? "tapeflow> " : "      ... ");
      if (!line) return first ? std::nullopt : std::optional<std::string>(cell);
      if (echo_ && !tty_) std::cout << (first ? "tapeflow> " : "      ... ") << *line << "\n";
      bool more = !line->empty() && line->back() == '\\';
      if (more) line->pop_back();
      cell += *line;
      cell += "\n";
      if (!more && !needs_more(cell)) return cell;
    }
  }

 private:
  std::optional<std::string> read_line(const char* prompt) {
    if (editor_) {
      editor_->setPrompt(prompt);
      return editor_->readLine();
    }
    std::string line;
    if (!std::getline(std::cin, line)) return std::nullopt;
    return line;
  }

  bool echo_, tty_;
  std::unique_ptr<llvm::LineEditor> editor_;
};

int usage(int rc) {
  (rc ? std::cerr : std::cout)
      << "usage: tapeflow-repl [--no-using] [--no-pch] [--echo] [--lib PATH] [-I DIR]... [--Xcc=ARG]...\n"
         "  --no-using   do not run 'using namespace tapeflow;'\n"
         "  --no-pch     parse the headers instead of loading the precompiled prelude\n"
         "  --echo       print each input read from a pipe after the prompt (for transcripts)\n"
         "  --lib PATH   the libtapeflow.so to load (default: the build tree's or the installed one)\n"
         "  -I DIR       one more include folder\n"
         "  --Xcc=ARG    one more compiler argument (for example --Xcc=-O2)\n";
  return 0;
}

}  // namespace
}  // namespace tapeflow_repl

int main(int argc, char** argv) {
  using namespace tapeflow_repl;
  Options opts;
  default_paths(opts);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--no-using") opts.using_namespace = false;
    else if (a == "--echo") opts.echo = true;
    else if (a == "--no-pch") opts.no_pch = true;
    else if (a == "--lib" && i + 1 < argc) opts.library = argv[++i];
    else if (a == "-I" && i + 1 < argc) opts.includes.push_back(argv[++i]);
    else if (a.rfind("-I", 0) == 0 && a.size() > 2) opts.includes.push_back(a.substr(2));
    else if (a.rfind("--Xcc=", 0) == 0) opts.extra.push_back(a.substr(6));
    else if (a == "--help" || a == "-h") return usage(0);
    else return usage(2);
  }

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  // With the precompiled prelude start-up takes ~1 s instead of ~4 s (bench/repl_startup.sh);
  // a stale or unreadable one is dropped and the headers are parsed instead.
  std::unique_ptr<Repl> repl;
  for (bool use_pch : {true, false}) {
    if (use_pch && (opts.pch.empty() || opts.no_pch)) continue;
    std::vector<std::string> args = {"-std=c++20", "-resource-dir", TAPEFLOW_REPL_RESOURCE_DIR,
                                     "-DTAPEFLOW_WITH_CUDA=" TAPEFLOW_REPL_WITH_CUDA};
    if (!isatty(2)) args.push_back("-fno-color-diagnostics");
    if (use_pch) {
      args.push_back("-include-pch");
      args.push_back(opts.pch);
    }
    for (const auto& i : opts.includes) args.push_back("-I" + i);
    for (const auto& e : opts.extra) args.push_back(e);
    std::vector<const char*> cargs;
    for (const auto& a : args) cargs.push_back(a.c_str());
    clang::IncrementalCompilerBuilder builder;
    builder.SetCompilerArgs(cargs);
    auto ci = builder.CreateCpp();
    if (!ci) {
      std::cerr << "tapeflow-repl: " << error_text(ci.takeError()) << "\n";
      continue;
    }
    auto interp = clang::Interpreter::create(std::move(*ci));
    if (!interp) {
      std::cerr << "tapeflow-repl: " << error_text(interp.takeError()) << "\n";
      continue;
    }
    repl = std::make_unique<Repl>(std::move(*interp), opts);
    if (repl->start()) break;
    repl.reset();
    if (use_pch) std::cerr << "tapeflow-repl: starting again without " << opts.pch << "\n";
  }
  if (!repl) return 1;
  Reader reader(repl->echo());
  while (auto cell = reader.next())
    if (!repl->cell(*cell)) break;
  repl.reset();
  std::cout.flush();
  llvm::llvm_shutdown();
  return 0;
}
