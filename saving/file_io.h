// The file edge of the saving layer: atomic writes and zero-copy reads.
//
//   write_file_atomically("ckpt/model-10.safetensors", {as_bytes(head), tensor_bytes});
//   MappedFile f = MappedFile::open("ckpt/model-10.safetensors");
//   decode_safetensors(f.bytes(), f.path());        // views into the mapping, no copy
//
// Note [Atomic write]: write_file_atomically writes a temporary file in the destination's
// directory (".<name>.tmp-<pid>-<n>"), fsyncs it, renames it over the destination and fsyncs
// the directory. A reader (or a process restarted after a crash or SIGKILL at any point) sees
// the old file or the complete new one, never a mix; a crash may leave the temporary file
// behind (it never has the destination's name). On any error the temporary file is removed
// and the destination is untouched.
// The rename replaces whatever has the destination's name, so what that is decides the way:
//   - a symbolic link (a chain of them, or one whose target does not exist yet): the write goes
//     atomically to the file the link resolves to, which keeps the link a link;
//   - after following links, not a regular file (a character or block device, a FIFO, a
//     socket): written through, by open(O_WRONLY | O_TRUNC) and write, neither atomic nor
//     fsynced, as a shell's `>` writes it: `--output o=/dev/stdout` or a FIFO a reader waits
//     on gets the bytes, and /dev/null stays /dev/null (a rename over it, as root, would have
//     replaced the device node with a regular file);
//   - a directory: FailedPreconditionError naming the path.
//
// Errors are typed: NotFoundError (no such file or directory), PermissionDeniedError,
// ResourceExhaustedError (disk full), DataLossError / UnknownError for other I/O failures;
// messages start with "[file_io] <path>:" and give strerror.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tapeflow {

// Writes the concatenation of `chunks` to `path` atomically (Note [Atomic write]).
void write_file_atomically(const std::string& path, const std::vector<std::span<const std::byte>>& chunks);
inline void write_file_atomically(const std::string& path, std::string_view contents) {
  write_file_atomically(path, {{reinterpret_cast<const std::byte*>(contents.data()), contents.size()}});
}

// Creates `path` (which must not exist), writes the chunks and fsyncs the file, without the
// temporary name and the directory fsync: for files inside a directory that is itself made
// durable and published atomically afterwards (Note [Saved model bundle]). On error the file
// is removed.
void write_new_file_synced(const std::string& path, const std::vector<std::span<const std::byte>>& chunks);

// A read-only, private mapping of a whole file. Movable, not copyable; unmaps on destruction.
// An empty file has an empty span (nothing is mapped).
class MappedFile {
 public:
  static MappedFile open(const std::string& path);
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(addr_), size_}; }
  const std::string& path() const { return path_; }

 private:
  void reset();
  std::string path_;
  void* addr_ = nullptr;
  size_t size_ = 0;
};

// The whole file as a string (for small files such as the "checkpoint" index).
std::string read_small_file(const std::string& path);
bool file_exists(const std::string& path);
// Removes `path`; a missing file is not an error. Other failures throw.
void remove_file(const std::string& path);

}  // namespace tapeflow
