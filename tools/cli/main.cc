// `tapeflow`: the command-line tool's entry point, argument parsing and error reporting.
//
// Note [CLI errors]: every failure is a typed tapeflow error (the library's own, or a UsageError
// for a bad command line) printed as ONE line on stderr, "tapeflow <command>: [<source>] ...",
// where <source> is the API or op that failed (a message that names none gets "tapeflow
// <command>"), without the " (at file:line)" suffix (it would name the tool's source, not the
// user's input) and with any newline of a multi-line message folded into "; ", so scripts can
// grep it. Extra arguments are usage errors, after --help and --version too. Exit
// status: 0 success, 1 an error, 2 a usage error. Anything else escaping (std::bad_alloc, a
// library bug) is still one line and exit status 1, never an abort. SIGPIPE is ignored so that
// `tapeflow show DIR | head` or a `dot` that exits early is an error, not a killed process.
#include <csignal>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "saving/saved_model.h"
#include "tools/cli/cli.h"

namespace tapeflow::cli {

namespace {

constexpr const char* kMainHelp = R"(usage: tapeflow <command> [options]

Look at and run saved models (directories written by save_model) and GraphDef files.

commands:
  show DIR                  signatures (inputs and outputs with dtypes and shapes), op counts
                            by type, variables with shapes and sizes, the tapeflow version
                            that wrote the bundle
  run DIR --input NAME=FILE.npy [--output [NAME=]FILE.npy] [--signature serve]
                            run a signature on .npy inputs; write or print its outputs
  graph DIR|FILE.pb [--format dot|svg|text]
                            the graph as Graphviz DOT, SVG (needs graphviz's dot) or
                            TensorFlow's text format, to stdout

options:
  -h, --help                this help; 'tapeflow <command> --help' for a command's
  --version                 the tapeflow version

Errors are one line on stderr; the exit status is 1 for an error, 2 for a usage error.
)";

std::string one_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  std::string out;
  for (char c : s) {
    if (c == '\n')
      out += "; ";
    else if (c != '\r')
      out += c;
  }
  return out;
}

// A message that does not name its source yet (a kernel's "a int32 tensor of shape ... needs
// ... bytes", from below the layers that add "[op]") is given the command's, so every line
// reads "tapeflow <command>: [...] ..." (Note [CLI errors]).
int report(std::string_view command, std::string_view message, int status) {
  std::string text = one_line(std::string(message));
  if (!text.starts_with('[')) text = absl::StrCat("[tapeflow ", std::string(command), "] ", text);
  std::cerr << "tapeflow" << (command.empty() ? "" : " ") << command << ": " << text << std::endl;
  return status;
}

}  // namespace

[[noreturn]] void usage_error(const std::string& command, const std::string& what) {
  throw UsageError(absl::StrCat("[tapeflow ", command, "] ", what, " (see 'tapeflow ", command, " --help')"));
}

Args Args::parse(std::string command, const std::vector<std::string>& argv,
                 const std::vector<std::string>& value_options) {
  Args a;
  a.command = std::move(command);
  bool only_positional = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (only_positional || arg.size() < 2 || arg[0] != '-') {
      a.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      only_positional = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      a.help = true;
      continue;
    }
    std::string name = arg, value;
    const size_t eq = arg.find('=');
    const bool inline_value = arg.starts_with("--") && eq != std::string::npos;
    if (inline_value) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    bool known = false;
    for (const std::string& v : value_options) known |= name == absl::StrCat("--", v);
    if (!known) usage_error(a.command, absl::StrCat("unknown option '", name, "'"));
    if (!inline_value) {
      if (i + 1 >= argv.size()) usage_error(a.command, absl::StrCat("option '", name, "' needs a value"));
      value = argv[++i];
    }
    a.options.emplace_back(name.substr(2), value);
  }
  return a;
}

std::vector<std::string> Args::all(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : options)
    if (k == name) out.push_back(v);
  return out;
}

std::string Args::get(std::string_view name, std::string fallback) const {
  for (const auto& [k, v] : options)
    if (k == name) fallback = v;
  return fallback;
}

const std::string& Args::single_positional(const std::string& what) const {
  if (positional.empty()) usage_error(command, absl::StrCat("missing ", what));
  if (positional.size() > 1) usage_error(command, absl::StrCat("unexpected argument '", positional[1], "'"));
  return positional[0];
}

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kMainHelp;
    return 2;
  }
  const std::string command = args[0];
  // "tapeflow --version extra", "tapeflow help run extra": a usage error, as for a command.
  const size_t takes = command == "--version" ? 1 : 2;
  if ((command == "-h" || command == "--help" || command == "help" || command == "--version") &&
      args.size() > takes)
    return report(command, absl::StrCat("[tapeflow] unexpected argument '", args[takes], "' after '",
                                        absl::StrJoin(args.begin(), args.begin() + static_cast<long>(takes), " "),
                                        "' (see 'tapeflow --help')"),
                  2);
  if (command == "-h" || command == "--help" || command == "help") {
    if (args.size() > 1) args = {args[1], "--help"};
    else {
      std::cout << kMainHelp;
      return 0;
    }
  }
  if (command == "--version") {
    std::cout << "tapeflow " << tapeflow_version() << "\n";
    return 0;
  }
  const std::string name = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    struct Command {
      const char* name;
      const char* help;
      std::vector<std::string> options;
      int (*fn)(const Args&, std::ostream&);
    };
    const Command commands[] = {
        {"show", kShowHelp, {}, show_main},
        {"run", kRunHelp, {"input", "output", "signature"}, run_main},
        {"graph", kGraphHelp, {"format"}, graph_main},
    };
    for (const Command& c : commands) {
      if (name != c.name) continue;
      const Args parsed = Args::parse(name, rest, c.options);
      // Every command takes one positional argument, and --help does not excuse a second one.
      if (parsed.positional.size() > 1)
        usage_error(name, absl::StrCat("unexpected argument '", parsed.positional[1], "'"));
      if (parsed.help) {
        std::cout << c.help;
        return 0;
      }
      const int status = c.fn(parsed, std::cout);
      std::cout.flush();
      if (!std::cout) return report(name, "[tapeflow] could not write to stdout", 1);
      return status;
    }
    throw UsageError(absl::StrCat("[tapeflow] unknown command '", name, "' (commands: show, run, graph; see 'tapeflow --help')"));
  } catch (const UsageError& e) {
    return report(name, e.message(), 2);
  } catch (const Error& e) {
    return report(name, e.message(), 1);
  } catch (const std::bad_alloc&) {
    return report(name, "[tapeflow] out of memory", 1);
  } catch (const std::exception& e) {
    return report(name, absl::StrCat("[tapeflow] internal error: ", e.what()), 1);
  } catch (...) {
    return report(name, "[tapeflow] internal error: an unknown exception", 1);
  }
}

}  // namespace tapeflow::cli

int main(int argc, char** argv) { return tapeflow::cli::main(argc, argv); }
