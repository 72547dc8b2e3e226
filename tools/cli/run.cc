// `tapeflow run DIR --input NAME=FILE.npy ... [--output [NAME=]FILE.npy ...]`: one run of a
// saved model's signature on .npy files (saving/npy.h), as saved_model_cli run --inputs does.
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "saving/npy.h"
#include "saving/saved_model.h"
#include "tools/cli/cli.h"

namespace tapeflow::cli {

const char* const kRunHelp = R"(usage: tapeflow run DIR [--signature NAME] --input NAME=FILE.npy ...
                    [--output [NAME=]FILE.npy ...]

Runs one signature of the saved model in DIR on inputs read from .npy files (NumPy's format:
float32 '<f4', float64 '<f8', int32 '<i4', int64 '<i8', uint8 '|u1', bool '|b1').

options:
  --signature NAME         the signature to run (default: serve; 'tapeflow show DIR' lists them)
  --input NAME=FILE.npy    feeds the input NAME; one per input. A signature with a single
                           input also takes --input FILE.npy
  --output NAME=FILE.npy   writes the output NAME to FILE.npy (NumPy reads it with np.load);
                           a signature with a single output also takes --output FILE.npy.
                           Without --output every output is printed to stdout.

The .npy dtype must be the input's dtype and its shape must fit the input's shape (? = any
size); otherwise nothing runs and the error names the input.

example:
  tapeflow run export/mlp --input args_0=images.npy --output logits.npy
)";

namespace {

// "NAME=FILE" -> {NAME, FILE}; "FILE" -> {the only name, FILE} when `names` has one element.
std::pair<std::string, std::string> split_binding(const Args& args, const std::string& flag, const std::string& value,
                                                  const std::map<std::string, TensorInfo>& infos) {
  std::vector<std::string> names;
  for (const auto& [name, info] : infos) names.push_back(name);
  const size_t eq = value.find('=');
  if (eq != std::string::npos) {
    std::string name = value.substr(0, eq), file = value.substr(eq + 1);
    if (!infos.count(name))
      usage_error(args.command, absl::StrCat("--", flag, " ", value, ": the signature has no ", flag, " '", name, "' (",
                                             flag, "s: ", absl::StrJoin(names, ", "), ")"));
    if (file.empty()) usage_error(args.command, absl::StrCat("--", flag, " ", value, ": no file name after '='"));
    return {name, file};
  }
  if (infos.size() != 1)
    usage_error(args.command, absl::StrCat("--", flag, " ", value, ": the signature has ", infos.size(), " ", flag,
                                           "s (", absl::StrJoin(names, ", "), "); write --", flag, " NAME=FILE.npy"));
  return {names[0], value};
}

}  // namespace

int run_main(const Args& args, std::ostream& out) {
  const std::string& dir = args.single_positional("DIR, the saved model directory");
  const std::vector<std::string> input_args = args.all("input"), output_args = args.all("output");
  if (input_args.empty()) usage_error(args.command, "no --input NAME=FILE.npy given");
  // No source location: a node's errors then name the node alone, not this file's line (the
  // user's code is the bundle, not the tool).
  const LoadedModel model = load_model(dir, std::source_location{});
  const Signature& sig = model.signature(args.get("signature", "serve"));

  std::map<std::string, Tensor> feeds;
  for (const std::string& value : input_args) {
    const auto [name, file] = split_binding(args, "input", value, sig.inputs());
    if (feeds.count(name)) usage_error(args.command, absl::StrCat("input '", name, "' is given twice"));
    feeds.emplace(name, read_npy(file));
  }
  std::map<std::string, std::string> files;  // output name -> file
  std::set<std::string> targets;
  for (const std::string& value : output_args) {
    const auto [name, file] = split_binding(args, "output", value, sig.outputs());
    if (files.count(name)) usage_error(args.command, absl::StrCat("output '", name, "' is given twice"));
    if (!targets.insert(file).second) usage_error(args.command, absl::StrCat("two outputs would be written to ", file));
    files.emplace(name, file);
  }

  const std::map<std::string, Tensor> results = sig.run(feeds);
  for (const auto& [name, value] : results) {
    auto it = files.find(name);
    if (!files.empty() && it == files.end()) continue;  // --output picks the outputs to keep
    if (it == files.end()) {
      out << name << ": " << value.to_string() << "\n";
      continue;
    }
    write_npy(value, it->second);
    out << name << ": " << dtype_name(value.dtype()) << " " << value.shape().to_string() << " -> " << it->second
        << "\n";
  }
  return 0;
}

}  // namespace tapeflow::cli
