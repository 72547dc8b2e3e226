// Writes the ONNX export test cases (tests/saving/onnx_models.h) into a directory for the tools
// that check them outside C++:
//   <dir>/<case>.onnx      the exported model
//   <dir>/manifest.json    per case: the model file, the input values and tapeflow's outputs
//                          (name, dtype, dims, row-major data)
//
//   onnx_cases <dir>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "tests/saving/onnx_models.h"

namespace {

using tapeflow::DType;
using tapeflow::Tensor;

nlohmann::json tensor_json(const std::string& name, const Tensor& t) {
  nlohmann::json j{{"name", name}, {"dims", std::vector<int64_t>(t.shape().dims().begin(), t.shape().dims().end())}};
  switch (t.dtype()) {
    case DType::kFloat32: j["dtype"] = "float32", j["data"] = t.to_vector<float>(); break;
    case DType::kInt32: j["dtype"] = "int32", j["data"] = t.to_vector<int32_t>(); break;
    case DType::kInt64: j["dtype"] = "int64", j["data"] = t.to_vector<int64_t>(); break;
    case DType::kUInt8: j["dtype"] = "uint8", j["data"] = t.to_vector<uint8_t>(); break;
    default: throw std::runtime_error("onnx_cases: add this dtype to the manifest writer");
  }
  return j;
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void write_cases(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  nlohmann::json manifest = nlohmann::json::array();
  using namespace tapeflow::onnx_test;
  for (const auto& make : {mlp_case, cnn_case, ops_case, dynamic_conv_case, math_case, array_case, dynamic_array_case,
                            layers_case, dynamic_layers_case, nchw_case, detection_case}) {
    const tapeflow::onnx_test::ExportedCase c = make();
    const std::string file = c.name + ".onnx";
    write_file(dir / file, c.bytes);
    nlohmann::json entry{{"name", c.name}, {"model", file}, {"inputs", nlohmann::json::array()},
                         {"outputs", nlohmann::json::array()}};
    for (size_t i = 0; i < c.inputs.size(); ++i)
      entry["inputs"].push_back(tensor_json("args_" + std::to_string(i), c.inputs[i]));
    for (size_t i = 0; i < c.expected.size(); ++i)
      entry["outputs"].push_back(tensor_json("output_" + std::to_string(i), c.expected[i]));
    manifest.push_back(std::move(entry));
    std::cout << "wrote " << (dir / file).string() << " (" << c.bytes.size() << " bytes)\n";
  }
  write_file(dir / "manifest.json", manifest.dump(1));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: onnx_cases <dir>\n";
    return 2;
  }
  try {
    write_cases(argv[1]);
  } catch (const std::exception& e) {
    std::cerr << "onnx_cases: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

