#include "util/file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.h"
#include "util/parse.h"

namespace gpuclk::file {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

[[noreturn]] void not_regular(std::string_view what, const std::string& path, mode_t mode) {
  throw bad_argument(
      fmt::format("{} '{}' is {}, not a regular file", what, parse::quote(path), kind_of(mode)),
      // "batch file" is a file already: no "batch file file".
      fmt::format("give the path of a {}{}", what,
                  what.size() >= 5 && what.substr(what.size() - 5) == " file" ? "" : " file"));
}

[[noreturn]] void cannot_open(std::string_view what, const std::string& path, int err) {
  throw bad_argument(
      fmt::format("cannot read {} '{}': {}", what, parse::quote(path), std::strerror(err)));
}

// Opens without blocking (a FIFO with no writer would block open()) and checks the type of what
// was opened, not of what the path named a moment earlier.
int open_regular(const std::string& path, std::string_view what, struct stat& st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) cannot_open(what, path, errno);
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    cannot_open(what, path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    not_regular(what, path, st.st_mode);
  }
  return fd;
}

std::string size_text(std::uint64_t bytes) {
  return bytes >= (1ull << 20) ? fmt::format("{} MiB", bytes >> 20)
                               : fmt::format("{} KiB", bytes >> 10);
}

}  // namespace

std::string read_bounded(const std::string& path, std::string_view what, std::uint64_t max_bytes) {
  struct stat st {};
  const int fd = open_regular(path, what, st);
  std::string out;
  const auto too_big = [&] {
    ::close(fd);
    throw bad_argument(
        fmt::format("{} '{}' is larger than {}", what, parse::quote(path), size_text(max_bytes)),
        fmt::format("a {} is far smaller; is this the right file?", what));
  };
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) too_big();
  out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const auto n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      cannot_open(what, path, err);
    }
    if (n == 0) break;
    // The file may grow while we read it: the cap holds for what is read, not what stat said.
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) too_big();
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

void require_regular(const std::string& path, std::string_view what) {
  struct stat st {};
  ::close(open_regular(path, what, st));
}

LineReader::LineReader(const std::string& path, std::string_view what, std::size_t max_line)
    : what_(what), path_(path), max_line_(max_line) {
  if (path == "-") {
    in_ = stdin;
    return;
  }
  struct stat st {};
  const int fd = open_regular(path, what, st);
  // Back to blocking reads for a regular file (O_NONBLOCK has no effect on them anyway).
  in_ = ::fdopen(fd, "r");
  if (!in_) {
    const int err = errno;
    ::close(fd);
    cannot_open(what, path, err);
  }
  owned_ = true;
}

LineReader::~LineReader() {
  if (owned_ && in_) std::fclose(in_);
}

bool LineReader::next(std::string& line) {
  line.clear();
  int c = 0;
  bool any = false;
  while ((c = std::getc(in_)) != EOF) {
    any = true;
    if (c == '\n') break;
    if (line.size() >= max_line_) {
      throw bad_argument(fmt::format("{} '{}': line {} is longer than {} bytes", what_,
                                     parse::quote(path_), number_ + 1, max_line_),
                         fmt::format("is '{}' a {}?", parse::quote(path_), what_));
    }
    line.push_back(static_cast<char>(c));
  }
  if (!any) return false;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  ++number_;
  return true;
}

}  // namespace gpuclk::file
