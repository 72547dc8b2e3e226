// `tapeflow graph DIR|FILE.pb [--format dot|svg|text]`: a saved model's or a GraphDef file's
// graph on stdout, as DOT (graph/dot.h), SVG (DOT rendered by Graphviz's `dot`), or
// TensorFlow's text format.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "graph/dot.h"
#include "graph/graph_def.h"
#include "tools/cli/cli.h"

extern char** environ;

namespace tapeflow::cli {

const char* const kGraphHelp = R"(usage: tapeflow graph DIR|FILE [--format dot|svg|text]

Writes the graph of a saved model directory (its graph.pb) or of a GraphDef file (binary;
text when the name ends in .pbtxt or .pbtext) to stdout:
  dot    Graphviz DOT (the default): name scopes as nested clusters, edges labelled with
         dtype and shape, control edges dashed
  svg    the DOT rendered by Graphviz's 'dot -Tsvg' (Debian: apt-get install graphviz)
  text   the GraphDef in TensorFlow's text format, as written (no import)
For dot and svg the graph is imported; one tapeflow cannot import (ops it does not have) is
drawn from the GraphDef as written, without dtypes and shapes, a comment at the top saying why.

examples:
  tapeflow graph export/mlp --format svg > mlp.svg
  tapeflow graph frozen.pb > frozen.dot && dot -Tpng frozen.dot > frozen.png
)";

namespace {

// Pipes `dot_text` through `dot -Tsvg`, whose stdout is ours.
void render_svg(const std::string& command, const std::string& dot_text, std::ostream& out) {
  out.flush();  // what we printed before must come first
  int fds[2];
  if (::pipe(fds) != 0) throw UnavailableError(absl::StrCat("[tapeflow ", command, "] pipe: ", std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  char arg0[] = "dot", arg1[] = "-Tsvg";
  char* argv[] = {arg0, arg1, nullptr};
  pid_t pid;
  const int rc = ::posix_spawnp(&pid, "dot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[0]);
  if (rc != 0) {
    ::close(fds[1]);
    if (rc == ENOENT)
      throw NotFoundError(absl::StrCat("[tapeflow ", command,
                                       "] --format svg needs Graphviz's 'dot' program, which is not on PATH "
                                       "(Debian: apt-get install graphviz; or write --format dot and render it elsewhere)"));
    throw UnavailableError(absl::StrCat("[tapeflow ", command, "] could not start 'dot': ", std::strerror(rc)));
  }
  size_t written = 0;
  int write_errno = 0;
  while (written < dot_text.size()) {
    const ssize_t n = ::write(fds[1], dot_text.data() + written, dot_text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      write_errno = errno;  // EPIPE: dot exited early; its status says why
      break;
    }
    written += static_cast<size_t>(n);
  }
  ::close(fds[1]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw UnknownError(absl::StrCat("[tapeflow ", command, "] 'dot -Tsvg' failed (",
                                    WIFEXITED(status) ? absl::StrCat("exit status ", WEXITSTATUS(status))
                                                      : absl::StrCat("signal ", WTERMSIG(status)),
                                    ")"));
  if (write_errno != 0)
    throw UnknownError(absl::StrCat("[tapeflow ", command, "] writing to 'dot': ", std::strerror(write_errno)));
}

}  // namespace

int graph_main(const Args& args, std::ostream& out) {
  const std::string& path = args.single_positional("DIR or FILE, a saved model directory or a GraphDef file");
  const std::string format = args.get("format", "dot");
  if (format != "dot" && format != "svg" && format != "text")
    usage_error(args.command, absl::StrCat("unknown --format '", format, "' (dot, svg or text)"));
  std::error_code ec;
  const bool is_dir = std::filesystem::is_directory(path, ec);
  const std::shared_ptr<const GraphDef> read = read_graph_def_in_arena(is_dir ? absl::StrCat(path, "/graph.pb") : path);
  const GraphDef& def = *read;
  if (format == "text") {
    out << graph_def_to_text(def);
    return 0;
  }
  // A graph tapeflow cannot import (ops it lacks, say) is still drawn, as TensorBoard would: from
  // the GraphDef itself, with a DOT comment saying why its edges carry no dtypes and shapes.
  std::string dot_text;
  try {
    dot_text = to_dot(graph_from_graph_def(def, std::source_location{}));
  } catch (const Error& e) {
    dot_text = absl::StrCat("// drawn from the GraphDef without importing it (so no dtypes or shapes): ",
                            absl::StrReplaceAll(e.message(), {{"\n", " "}}), "\n", graph_def_to_dot(def));
  }
  if (format == "dot")
    out << dot_text;
  else
    render_svg(args.command, dot_text, out);
  return 0;
}

}  // namespace tapeflow::cli
