// write_file_atomically's destinations other than a plain file (Note [Atomic write]): a link
// stays a link and its target gets the bytes; a FIFO is written through and stays a FIFO; a
// directory is a typed error. Everything lives in a fresh temporary directory: no test here
// ever names a device file.
#include "saving/file_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <thread>

#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct FileIoTest : ::testing::Test {
  ScopedTempDir tmp{"file_io"};
  const std::string& dir = tmp.path();
  // The names in `dir`, sorted (temporary files included: none may be left).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

bool is_link(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

TEST_F(FileIoTest, ASymlinkStaysALinkAndItsTargetGetsTheBytes) {
  write_file_atomically(dir + "/target.npy", "old contents");
  ASSERT_EQ(::symlink("target.npy", (dir + "/link.npy").c_str()), 0);  // relative, as `ln -s` makes it
  ASSERT_EQ(::symlink((dir + "/link.npy").c_str(), (dir + "/chain.npy").c_str()), 0);  // absolute, to a link
  write_file_atomically(dir + "/link.npy", "new");
  EXPECT_TRUE(is_link(dir + "/link.npy"));
  EXPECT_EQ(fs::read_symlink(dir + "/link.npy"), "target.npy");
  EXPECT_EQ(read_small_file(dir + "/target.npy"), "new");

  write_file_atomically(dir + "/chain.npy", "through two links");
  EXPECT_TRUE(is_link(dir + "/chain.npy"));
  EXPECT_TRUE(is_link(dir + "/link.npy"));
  EXPECT_EQ(read_small_file(dir + "/target.npy"), "through two links");

  // A link whose target does not exist yet: the target is created, the link kept.
  ASSERT_EQ(::symlink("made.npy", (dir + "/dangling.npy").c_str()), 0);
  write_file_atomically(dir + "/dangling.npy", "created");
  EXPECT_TRUE(is_link(dir + "/dangling.npy"));
  EXPECT_EQ(read_small_file(dir + "/made.npy"), "created");
  EXPECT_THAT(names(), ElementsAre("chain.npy", "dangling.npy", "link.npy", "made.npy", "target.npy"));
}

// Reads a FIFO to its end on another thread. Opened here, before anything writes, without
// blocking (O_NONBLOCK: no writer yet); poll waits for the writer's data and its close, and
// gives up after 10 s, so a writer that never comes (one that renamed a file over the FIFO)
// fails the test instead of hanging it.
struct FifoReader {
  explicit FifoReader(const std::string& path) : fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)) {
    EXPECT_GE(fd, 0) << path;
    thread = std::thread([this] {
      char buf[4096];
      for (pollfd p{fd, POLLIN, 0}; fd >= 0 && ::poll(&p, 1, 10'000) > 0;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;  // the writer closed it
        if (n > 0) got.append(buf, static_cast<size_t>(n));
      }
    });
  }
  ~FifoReader() {
    if (thread.joinable()) thread.join();
    if (fd >= 0) ::close(fd);
  }
  std::string join() {
    thread.join();
    return got;
  }
  const int fd;
  std::string got;
  std::thread thread;
};

TEST_F(FileIoTest, AFifoIsWrittenThroughAndStaysAFifo) {
  const std::string fifo = dir + "/out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  FifoReader reader(fifo);
  const std::string head = "\x93NUMPY header", body(100'000, 'x');  // more than a pipe's buffer
  write_file_atomically(fifo, {std::as_bytes(std::span(head)), std::as_bytes(std::span(body))});
  const std::string got = reader.join();
  EXPECT_EQ(got.size(), head.size() + body.size());
  EXPECT_TRUE(got == head + body);  // not EXPECT_EQ: 100 KB in a failure message helps nobody
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_THAT(names(), ElementsAre("out.fifo"));  // no temporary file

  // Through a link (what /dev/stdout is when stdout is a pipe): the link and the FIFO stay.
  ASSERT_EQ(::symlink("out.fifo", (dir + "/stdout").c_str()), 0);
  FifoReader second(fifo);
  write_file_atomically(dir + "/stdout", "via the link");
  EXPECT_EQ(second.join(), "via the link");
  EXPECT_TRUE(is_link(dir + "/stdout"));
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(FileIoTest, ADirectoryIsATypedErrorNamingIt) {
  const std::string sub = dir + "/sub";
  ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { write_file_atomically(sub, "x"); }),
              HasSubstr("[file_io] " + sub + ": is a directory, not a file"));
  ASSERT_EQ(::symlink("sub", (dir + "/to_sub").c_str()), 0);
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { write_file_atomically(dir + "/to_sub", "x"); }),
              HasSubstr("[file_io] " + dir + "/to_sub: is a directory"));
  EXPECT_TRUE(fs::is_empty(sub));
  EXPECT_THAT(names(), ElementsAre("sub", "to_sub"));
}

TEST_F(FileIoTest, AMissingDirectoryIsNotFoundAndAPlainFileIsReplaced) {
  EXPECT_THAT(error_of<NotFoundError>([&] { write_file_atomically(dir + "/no/such/f", "x"); }),
              AllOf(HasSubstr("[file_io] " + dir + "/no/such/"), HasSubstr("No such file or directory")));
  write_file_atomically(dir + "/f", "one");
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/f").c_str(), &st), 0);
  const ino_t first = st.st_ino;
  write_file_atomically(dir + "/f", "two");
  ASSERT_EQ(::stat((dir + "/f").c_str(), &st), 0);
  EXPECT_NE(st.st_ino, first);  // a new file renamed over the old one, not rewritten in place
  EXPECT_EQ(read_small_file(dir + "/f"), "two");
  EXPECT_THAT(names(), ElementsAre("f"));
}

}  // namespace
}  // namespace tapeflow
