// libFuzzer target: the .npy reader (Note [Fuzz contract] in fuzz_target.h). An accepted array
// is written again and must read back to the same bytes.
#include <cstdio>
#include <cstdlib>

#include "saving/npy.h"
#include "tests/fuzz/fuzz_target.h"

TAPEFLOW_FUZZ_TARGET(bytes) {
  using namespace tapeflow;
  const Tensor t = decode_npy(bytes, "fuzz.npy");
  const std::string encoded = encode_npy(t);
  const std::span<const std::byte> again(reinterpret_cast<const std::byte*>(encoded.data()), encoded.size());
  if (encode_npy(decode_npy(again, "again.npy")) != encoded) {
    std::fprintf(stderr, "a .npy tapeflow wrote does not read back to the same array\n");
    std::abort();
  }
}
