// Errors. The public API throws typed exceptions derived from tapeflow::Error; internal code
// passes absl::Status / absl::StatusOr and converts at the boundary with throw_if_error().
//
//   try { auto c = a + b; }
//   catch (const tapeflow::InvalidArgumentError& e) {
//     e.what();      // "[add] Incompatible shapes ... (at main.cc:12)"
//     e.code();      // absl::StatusCode::kInvalidArgument
//     e.location();  // the caller's std::source_location
//   }
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tapeflow {

class Error : public std::runtime_error {
 public:
  Error(absl::StatusCode code, const std::string& message, std::source_location loc);
  absl::StatusCode code() const { return code_; }
  // The message without the " (at file:line)" suffix.
  const std::string& message() const { return message_; }
  const std::source_location& location() const { return location_; }
  absl::Status status() const { return absl::Status(code_, message_); }
  // The message, " (at file:line)", then any context added on the way up.
  const char* what() const noexcept override { return what_.c_str(); }
  // Appends " <context>" to what(), for a layer that rethrows the same error with where it was,
  // e.g. "while tracing 'predict' called at main.cc:23".
  void add_context(std::string_view context);

 private:
  absl::StatusCode code_;
  std::string message_;
  std::source_location location_;
  std::string what_;
};

#define TAPEFLOW_DECLARE_ERROR(Name, Code)                                      \
  class Name : public Error {                                                   \
   public:                                                                      \
    Name(const std::string& message,                                            \
         std::source_location loc = std::source_location::current())            \
        : Error(absl::StatusCode::Code, message, loc) {}                        \
  };
TAPEFLOW_DECLARE_ERROR(CancelledError, kCancelled)
TAPEFLOW_DECLARE_ERROR(UnknownError, kUnknown)
TAPEFLOW_DECLARE_ERROR(InvalidArgumentError, kInvalidArgument)
TAPEFLOW_DECLARE_ERROR(DeadlineExceededError, kDeadlineExceeded)
TAPEFLOW_DECLARE_ERROR(NotFoundError, kNotFound)
TAPEFLOW_DECLARE_ERROR(AlreadyExistsError, kAlreadyExists)
TAPEFLOW_DECLARE_ERROR(PermissionDeniedError, kPermissionDenied)
TAPEFLOW_DECLARE_ERROR(ResourceExhaustedError, kResourceExhausted)
TAPEFLOW_DECLARE_ERROR(FailedPreconditionError, kFailedPrecondition)
TAPEFLOW_DECLARE_ERROR(AbortedError, kAborted)
TAPEFLOW_DECLARE_ERROR(OutOfRangeError, kOutOfRange)
TAPEFLOW_DECLARE_ERROR(UnimplementedError, kUnimplemented)
TAPEFLOW_DECLARE_ERROR(InternalError, kInternal)
TAPEFLOW_DECLARE_ERROR(UnavailableError, kUnavailable)
TAPEFLOW_DECLARE_ERROR(DataLossError, kDataLoss)
#undef TAPEFLOW_DECLARE_ERROR

// "file.cc:12" with the directories stripped.
std::string format_location(const std::source_location& loc);

// Throws the typed Error matching status.code(); the message gets " (at file:line)".
[[noreturn]] void throw_status(const absl::Status& status, std::source_location loc);

inline void throw_if_error(const absl::Status& status,
                           std::source_location loc = std::source_location::current()) {
  if (!status.ok()) throw_status(status, loc);
}

template <typename T>
T value_or_throw(absl::StatusOr<T> v, std::source_location loc = std::source_location::current()) {
  if (!v.ok()) throw_status(v.status(), loc);
  return *std::move(v);
}

// Prefixes a status message with "[op] " unless it already starts with '['.
absl::Status with_op_prefix(const absl::Status& status, std::string_view op);

}  // namespace tapeflow

// Internal early-return helpers for absl::Status code.
#define TF_RETURN_IF_ERROR(expr)                      \
  do {                                                \
    ::absl::Status _tf_status = (expr);               \
    if (!_tf_status.ok()) return _tf_status;          \
  } while (0)

#define TF_CONCAT_INNER_(a, b) a##b
#define TF_CONCAT_(a, b) TF_CONCAT_INNER_(a, b)
#define TF_ASSIGN_OR_RETURN(lhs, expr) \
  TF_ASSIGN_OR_RETURN_IMPL_(TF_CONCAT_(_tf_statusor_, __LINE__), lhs, expr)
#define TF_ASSIGN_OR_RETURN_IMPL_(var, lhs, expr) \
  auto var = (expr);                              \
  if (!var.ok()) return var.status();             \
  lhs = *std::move(var)
