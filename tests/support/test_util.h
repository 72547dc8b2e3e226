// Helpers shared by the test suites.
#pragma once

#include <exception>
#include <string>

#include "core/errors.h"

namespace tapeflow {

// Runs fn and returns the message of the E (InvalidArgumentError by default) it throws, or a
// marker string that no expectation matches when it throws another exception or nothing.
template <typename E = InvalidArgumentError, typename Fn> std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception of the expected type";
}

}  // namespace tapeflow
