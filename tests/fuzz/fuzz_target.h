// What every libFuzzer target here checks (Note [Fuzz contract]): an input is either accepted
// or rejected with a tapeflow::Error; any other exception is a finding and stops the fuzzer
// (abort, so libFuzzer saves the input), as are sanitizer reports, leaks and hangs, which
// libFuzzer and ASan catch themselves.
//
//   TAPEFLOW_FUZZ_TARGET(bytes) { ...parse bytes, throw tapeflow errors on bad input... }
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <span>
#include <string_view>
#include <typeinfo>

#include "core/errors.h"

namespace tapeflow::fuzz {

template <typename Body>
int run_one(const uint8_t* data, size_t size, Body body) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    body(bytes);
  } catch (const Error&) {
    // A typed rejection: what bad input must get.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "untyped exception %s: %s\n", typeid(e).name(), e.what());
    std::abort();
  }
  return 0;
}

inline std::string_view as_text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace tapeflow::fuzz

#define TAPEFLOW_FUZZ_TARGET(bytes)                                                           \
  static void fuzz_body(std::span<const std::byte> bytes);                                    \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {                   \
    return tapeflow::fuzz::run_one(data, size, fuzz_body);                                     \
  }                                                                                           \
  static void fuzz_body(std::span<const std::byte> bytes)
