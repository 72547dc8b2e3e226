// libFuzzer target: the IDX reader, plain and gzip'd (Note [Fuzz contract] in fuzz_target.h).
// read_idx takes a path (it streams through zlib), so each input is written to an in-memory file
// (memfd) and read through /proc/self/fd: no disk, and the reader sees a regular file with a size.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "data/idx.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

// One memfd for the whole run, truncated and rewritten for each input.
int input_file() {
  static const int fd = [] {
    const int f = memfd_create("fuzz_idx", 0);
    if (f < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    return f;
  }();
  return fd;
}

}  // namespace

TAPEFLOW_FUZZ_TARGET(bytes) {
  const int fd = input_file();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
    std::perror("writing the fuzz input");
    std::abort();
  }
  (void)tapeflow::read_idx("/proc/self/fd/" + std::to_string(fd));
}
