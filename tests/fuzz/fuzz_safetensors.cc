// libFuzzer target: the checkpoint reader (safetensors with CRC32C; Note [Fuzz contract] in
// fuzz_target.h): decode a whole file, then make a tensor of every entry, as Saver::restore does.
#include "saving/safetensors.h"
#include "tests/fuzz/fuzz_target.h"

TAPEFLOW_FUZZ_TARGET(bytes) {
  using namespace tapeflow;
  const SafetensorsFile file = decode_safetensors(bytes, "fuzz.safetensors");
  for (const auto& [name, entry] : file.tensors) (void)to_tensor(entry, "fuzz.safetensors");
}
