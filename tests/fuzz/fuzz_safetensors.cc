// libFuzzer target: the checkpoint reader (safetensors with CRC32C; Note [Fuzz contract] in
// fuzz_target.h). Both ways a file is read: as Saver::restore and load_model read it (decoded
// without the checksum pass, each tensor checked as it is copied: to_tensor_verified, Note
// [Checked copy]), and decoded with every checksum checked first, then a tensor of every entry.
#include "saving/safetensors.h"
#include "tests/fuzz/fuzz_target.h"

TAPEFLOW_FUZZ_TARGET(bytes) {
  using namespace tapeflow;
  try {
    const SafetensorsFile file = decode_safetensors(bytes, "fuzz.safetensors", {.verify_checksums = false});
    for (const auto& [name, entry] : file.tensors) (void)to_tensor_verified(entry, "fuzz.safetensors");
  } catch (const Error&) {
    // Rejected the restore way; the checked decode below must reject or accept on its own.
  }
  const SafetensorsFile file = decode_safetensors(bytes, "fuzz.safetensors");
  for (const auto& [name, entry] : file.tensors) (void)to_tensor(entry, "fuzz.safetensors");
}
