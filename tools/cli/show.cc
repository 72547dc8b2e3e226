// `tapeflow show DIR`: what a saved model holds, read through load_model (so a bundle that
// shows is one that loads) plus its graph's op types and its variables file's entries.
#include <filesystem>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/graph_def.h"
#include "saving/file_io.h"
#include "saving/safetensors.h"
#include "saving/saved_model.h"
#include "tools/cli/cli.h"

namespace tapeflow::cli {

const char* const kShowHelp = R"(usage: tapeflow show DIR

Describes the saved model in DIR (a directory written by save_model):
  - the tapeflow version that wrote it;
  - each signature with its inputs and outputs: name, dtype, shape (? = any size) and the
    graph tensor it stands for;
  - the graph's node count and its op types with their counts, and the functions its If,
    While and Case nodes run (cond, while_loop);
  - the stored tensors (variables, and tensors the traced function captured) with their
    dtypes, shapes and sizes in bytes.
The whole bundle is loaded and checked first: a bundle that shows is one load_model loads.

example:
  tapeflow show export/mlp
)";

namespace {

std::string with_commas(int64_t n) {
  std::string digits = absl::StrCat(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void print_tensors(std::ostream& out, const char* title, const std::map<std::string, TensorInfo>& infos) {
  out << "    " << title << ":\n";
  size_t width = 0;
  for (const auto& [name, info] : infos) width = std::max(width, name.size());
  for (const auto& [name, info] : infos)
    out << absl::StrFormat("      %-*s  %-7s %-16s %s\n", static_cast<int>(width), name, dtype_name(info.dtype),
                           info.shape.to_string(), info.tensor.name());
}

}  // namespace

int show_main(const Args& args, std::ostream& out) {
  const std::string& dir = args.single_positional("DIR, the saved model directory");
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir, ec))
    usage_error(args.command, absl::StrCat(dir, " is a file: show reads a saved model directory (for a GraphDef file, "
                                           "try 'tapeflow graph ", dir, " --format text')"));
  const LoadedModel model = load_model(dir);
  const std::shared_ptr<const GraphDef> read = read_graph_def_in_arena(absl::StrCat(model.dir(), "/graph.pb"));
  const GraphDef& def = *read;
  const MappedFile vars_file = MappedFile::open(absl::StrCat(model.dir(), "/variables.safetensors"));
  const SafetensorsFile vars = decode_safetensors(vars_file.bytes(), vars_file.path());

  out << "saved model " << model.dir() << ", written by tapeflow " << model.tapeflow_version() << "\n";
  out << "\nsignatures (" << model.signatures().size() << "):\n";
  for (const auto& [name, sig] : model.signatures()) {
    out << "  " << name << " (" << sig.method_name() << ")\n";
    print_tensors(out, "inputs", sig.inputs());
    print_tensors(out, "outputs", sig.outputs());
  }

  std::map<std::string, int64_t> op_counts;
  for (const auto& node : def.node()) ++op_counts[node.op()];
  out << "\ngraph: " << def.node_size() << " nodes, " << op_counts.size() << " op types\n";
  size_t width = 0;
  for (const auto& [op, n] : op_counts) width = std::max(width, op.size());
  for (const auto& [op, n] : op_counts) out << absl::StrFormat("  %-*s %6d\n", static_cast<int>(width), op, n);
  // The functions If / While / Case nodes run (cond, while_loop), with their node counts.
  if (def.library().function_size() > 0) {
    out << "\nfunctions (" << def.library().function_size() << "):\n";
    width = 0;
    for (const auto& f : def.library().function()) width = std::max(width, f.signature().name().size());
    for (const auto& f : def.library().function())
      out << absl::StrFormat("  %-*s %6d node%s\n", static_cast<int>(width), f.signature().name(), f.node_def_size(),
                             f.node_def_size() == 1 ? "" : "s");
  }

  int64_t total = 0;
  width = 0;
  for (const auto& [name, entry] : vars.tensors) {
    total += static_cast<int64_t>(entry.data.size());
    width = std::max(width, name.size());
  }
  out << "\nstored tensors: " << vars.tensors.size() << " (" << model.variables().size() << " variables), "
      << with_commas(total) << " bytes\n";
  for (const auto& [name, entry] : vars.tensors) {
    DType dt;
    const std::string dtype = to_dtype(entry.dtype, &dt) ? dtype_name(dt) : safetensors_dtype_name(entry.dtype);
    out << absl::StrFormat("  %-*s  %-8s %-7s %-16s %13s bytes\n", static_cast<int>(width), name,
                           model.variables().count(name) ? "variable" : "captured", dtype,
                           Shape(entry.shape).to_string(), with_commas(static_cast<int64_t>(entry.data.size())));
  }
  return 0;
}

}  // namespace tapeflow::cli
