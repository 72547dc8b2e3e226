// The `tapeflow` command-line tool: look at and run saved models and graph files, as
// TensorFlow's saved_model_cli does.
//
//   tapeflow show DIR                                         signatures, ops, variables, version
//   tapeflow run DIR --input x=images.npy --output out.npy    run a signature on .npy files
//   tapeflow graph DIR|FILE.pb --format dot|svg|text          the graph, to stdout
//
// Each subcommand is a function from its arguments to an exit status; errors are thrown as
// typed tapeflow errors and turned into one line on stderr by main (Note [CLI errors]).
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.h"

namespace tapeflow::cli {

// A command line the user got wrong (unknown option, missing argument): exit status 2, where
// every other error exits with 1.
class UsageError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};

// The arguments after the subcommand's name, split into options ("--name value" or
// "--name=value", repeatable) and positional arguments.
struct Args {
  std::string command;  // "show", "run", "graph": names the command in errors
  std::vector<std::pair<std::string, std::string>> options;
  std::vector<std::string> positional;
  bool help = false;  // --help or -h

  // Parses the arguments after the command name. `value_options` (names without "--") take a
  // value; -h/--help set `help`; any other argument that starts with "-" is a UsageError.
  static Args parse(std::string command, const std::vector<std::string>& argv,
                    const std::vector<std::string>& value_options);
  // Every value given for `name`, in order.
  std::vector<std::string> all(std::string_view name) const;
  // The last value given for `name`, or `fallback`.
  std::string get(std::string_view name, std::string fallback) const;
  // The one positional argument `what` ("DIR"), or a UsageError.
  const std::string& single_positional(const std::string& what) const;
};

// "[tapeflow <command>] <what> (see 'tapeflow <command> --help')".
[[noreturn]] void usage_error(const std::string& command, const std::string& what);

int show_main(const Args& args, std::ostream& out);
int run_main(const Args& args, std::ostream& out);
int graph_main(const Args& args, std::ostream& out);

extern const char* const kShowHelp;
extern const char* const kRunHelp;
extern const char* const kGraphHelp;

}  // namespace tapeflow::cli
