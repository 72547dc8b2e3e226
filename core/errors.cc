#include "core/errors.h"

#include "absl/strings/str_cat.h"

namespace tapeflow {

namespace {
std::string full_message(const std::string& message, const std::source_location& loc) {
  if (loc.line() == 0) return message;
  return absl::StrCat(message, " (at ", format_location(loc), ")");
}
}  // namespace

Error::Error(absl::StatusCode code, const std::string& message, std::source_location loc)
    : std::runtime_error(message), code_(code), message_(message), location_(loc),
      what_(full_message(message, loc)) {}

void Error::add_context(std::string_view context) {
  absl::StrAppend(&what_, " ", absl::string_view(context.data(), context.size()));
}

std::string format_location(const std::source_location& loc) {
  std::string_view file = loc.file_name();
  const size_t slash = file.find_last_of('/');
  if (slash != std::string_view::npos) file.remove_prefix(slash + 1);
  return absl::StrCat(absl::string_view(file.data(), file.size()), ":", loc.line());
}

void throw_status(const absl::Status& status, std::source_location loc) {
  const std::string msg(status.message());
  switch (status.code()) {
    case absl::StatusCode::kCancelled: throw CancelledError(msg, loc);
    case absl::StatusCode::kInvalidArgument: throw InvalidArgumentError(msg, loc);
    case absl::StatusCode::kDeadlineExceeded: throw DeadlineExceededError(msg, loc);
    case absl::StatusCode::kNotFound: throw NotFoundError(msg, loc);
    case absl::StatusCode::kAlreadyExists: throw AlreadyExistsError(msg, loc);
    case absl::StatusCode::kPermissionDenied: throw PermissionDeniedError(msg, loc);
    case absl::StatusCode::kResourceExhausted: throw ResourceExhaustedError(msg, loc);
    case absl::StatusCode::kFailedPrecondition: throw FailedPreconditionError(msg, loc);
    case absl::StatusCode::kAborted: throw AbortedError(msg, loc);
    case absl::StatusCode::kOutOfRange: throw OutOfRangeError(msg, loc);
    case absl::StatusCode::kUnimplemented: throw UnimplementedError(msg, loc);
    case absl::StatusCode::kInternal: throw InternalError(msg, loc);
    case absl::StatusCode::kUnavailable: throw UnavailableError(msg, loc);
    case absl::StatusCode::kDataLoss: throw DataLossError(msg, loc);
    default: throw UnknownError(msg, loc);
  }
}

absl::Status with_op_prefix(const absl::Status& status, std::string_view op) {
  if (status.ok() || (!status.message().empty() && status.message()[0] == '[')) return status;
  return absl::Status(status.code(), absl::StrCat("[", absl::string_view(op.data(), op.size()), "] ",
                                                  status.message()));
}

}  // namespace tapeflow
