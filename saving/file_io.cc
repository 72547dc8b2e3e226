#include "saving/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/errors.h"

namespace tapeflow {
namespace {

[[noreturn]] void throw_errno(std::string_view what, const std::string& path, int err) {
  const std::string msg = absl::StrCat("[file_io] ", path, ": ", absl::string_view(what.data(), what.size()),
                                       " failed: ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR: throw NotFoundError(msg);
    case EACCES:
    case EPERM:
    case EROFS: throw PermissionDeniedError(msg);
    case ENOSPC:
    case EDQUOT: throw ResourceExhaustedError(msg);
    case EIO: throw DataLossError(msg);
    default: throw UnknownError(msg);
  }
}

// Closes a descriptor on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void write_all(int fd, std::span<const std::byte> data, const std::string& path) {
  const std::byte* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    // Linux writes at most ~2 GiB per call; loop on short writes.
    const ssize_t n = ::write(fd, p, std::min<size_t>(left, size_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("write", path, errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

std::atomic<uint64_t> g_temp_counter{0};

// The file a chain of symbolic links ends at, the link's own name resolved against the link's
// directory (Note [Atomic write]). A missing end is fine: the write creates it, as `>` would.
// Only called once stat() said the end is a regular file or missing, so /proc's magic links
// (/dev/stdout to "pipe:[123]"), which do not name a path, never get here.
std::string resolve_links(std::string path) {
  for (int hops = 0; hops < 40; ++hops) {  // Linux's own limit (ELOOP)
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    std::string target(static_cast<size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
    const ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
    if (n < 0) throw_errno("readlink", path, errno);
    if (static_cast<size_t>(n) >= target.size())
      throw UnknownError(absl::StrCat("[file_io] ", path, ": readlink: the link changed while it was read"));
    target.resize(static_cast<size_t>(n));
    path = target.starts_with('/') ? target : absl::StrCat(dir_of(path), "/", target);
  }
  throw_errno("resolving symbolic links", path, ELOOP);
}

// Note [Atomic write]'s way for a device, FIFO or socket: plain writes into what is there.
void write_through(const std::string& path, const std::vector<std::span<const std::byte>>& chunks) {
  Fd file{::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC)};  // no O_CREAT: it exists
  if (file.fd < 0) throw_errno("open for writing", path, errno);
  for (const auto& chunk : chunks) write_all(file.fd, chunk, path);
  const int fd = file.fd;
  file.fd = -1;
  if (::close(fd) != 0) throw_errno("close", path, errno);
}

}  // namespace

void write_file_atomically(const std::string& given_path, const std::vector<std::span<const std::byte>>& chunks) {
  struct stat st {};
  if (::stat(given_path.c_str(), &st) == 0) {  // follows links
    if (S_ISDIR(st.st_mode))
      throw FailedPreconditionError(absl::StrCat("[file_io] ", given_path, ": is a directory, not a file"));
    if (!S_ISREG(st.st_mode)) return write_through(given_path, chunks);
  } else if (errno != ENOENT) {
    throw_errno("stat", given_path, errno);
  }
  // Missing or a regular file: replaced atomically where the links end.
  const std::string path = resolve_links(given_path);
  const std::string dir = dir_of(path);
  std::string temp;
  Fd file;
  // O_EXCL: never write into someone else's file. A name taken already is a leftover of a
  // killed process whose pid we now have (or a concurrent writer): try the next number.
  for (int attempt = 0; file.fd < 0; ++attempt) {
    temp = absl::StrCat(dir, "/.", base_of(path), ".tmp-", ::getpid(), "-", g_temp_counter++);
    file.fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (file.fd < 0 && (errno != EEXIST || attempt == 100)) throw_errno("creating a temporary file", temp, errno);
  }
  try {
    for (const auto& chunk : chunks) write_all(file.fd, chunk, temp);
    // The data must be durable before the rename makes it visible under the real name.
    if (::fsync(file.fd) != 0) throw_errno("fsync", temp, errno);
    const int fd = file.fd;
    file.fd = -1;
    if (::close(fd) != 0) throw_errno("close", temp, errno);
    if (::rename(temp.c_str(), path.c_str()) != 0) throw_errno("rename to the destination", path, errno);
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
  // Make the rename itself durable.
  Fd d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (d.fd < 0) throw_errno("opening the directory", dir, errno);
  if (::fsync(d.fd) != 0 && errno != EINVAL) throw_errno("fsync of the directory", dir, errno);
}

void write_new_file_synced(const std::string& path, const std::vector<std::span<const std::byte>>& chunks) {
  Fd file{::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)};
  if (file.fd < 0) throw_errno("creating the file", path, errno);
  try {
    for (const auto& chunk : chunks) write_all(file.fd, chunk, path);
    if (::fsync(file.fd) != 0) throw_errno("fsync", path, errno);
    const int fd = file.fd;
    file.fd = -1;
    if (::close(fd) != 0) throw_errno("close", path, errno);
  } catch (...) {
    ::unlink(path.c_str());
    throw;
  }
}

MappedFile MappedFile::open(const std::string& path) {
  MappedFile m;
  m.path_ = path;
  Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) throw_errno("open", path, errno);
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) throw_errno("stat", path, errno);
  if (!S_ISREG(st.st_mode)) throw FailedPreconditionError(absl::StrCat("[file_io] ", path, ": not a regular file"));
  m.size_ = static_cast<size_t>(st.st_size);
  if (m.size_ == 0) return m;
  // MAP_PRIVATE + PROT_READ: our view cannot change what others see. A file shrunk by someone
  // else after this point would fault on access; checkpoints are only ever replaced by rename
  // (Note [Atomic write]), which leaves this mapping's inode intact.
  // MAP_POPULATE: a restore reads every byte (the checksums), so map the pages in one pass
  // rather than one fault per 4 KiB page.
  void* addr = ::mmap(nullptr, m.size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, file.fd, 0);
  if (addr == MAP_FAILED) throw_errno("mmap", path, errno);
  m.addr_ = addr;
  return m;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)), addr_(std::exchange(other.addr_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    reset();
    path_ = std::move(other.path_);
    addr_ = std::exchange(other.addr_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { reset(); }

void MappedFile::reset() {
  if (addr_ != nullptr) ::munmap(addr_, size_);
  addr_ = nullptr;
  size_ = 0;
}

std::string read_small_file(const std::string& path) {
  MappedFile m = MappedFile::open(path);
  return std::string(reinterpret_cast<const char*>(m.bytes().data()), m.bytes().size());
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

void remove_file(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) throw_errno("unlink", path, errno);
}

}  // namespace tapeflow
