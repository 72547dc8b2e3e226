// Serves a saved model with no model code and no tracing: load_model, then one signature run
// on a .npy input, the outputs written as .npy files (what a deployment program does).
//
//   serve BUNDLE_DIR INPUT.npy OUT_PREFIX     # writes OUT_PREFIX<output name>.npy
#include <tapeflow/tapeflow.h>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: serve BUNDLE_DIR INPUT.npy OUT_PREFIX\n";
    return 2;
  }
  try {
    const tapeflow::LoadedModel model = tapeflow::load_model(argv[1]);
    const tapeflow::Signature& serve = model.signature("serve");
    const std::string input = serve.inputs().begin()->first;  // the one input
    for (const auto& [name, value] : serve.run({{input, tapeflow::read_npy(argv[2])}})) {
      tapeflow::write_npy(value, std::string(argv[3]) + name + ".npy");
      std::cout << name << ": " << value << "\n";
    }
  } catch (const tapeflow::Error& e) {
    std::cerr << "serve: " << e.message() << "\n";
    return 1;
  }
  return 0;
}
