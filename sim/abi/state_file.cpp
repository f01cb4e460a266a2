#include "state_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <system_error>

namespace gpuclk::sim::abi {
namespace {

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

long long steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Every writer of this library bumps the generation counter, so a change is seen at its next
// call; the stat is for what does not (the file removed or replaced by hand), now and then: it
// was 8 % of the service's sampling thread on a simulated node at every 100 ms.
constexpr long long kRestatNs = 1'000'000'000;

}  // namespace

StateFile::StateFile(std::filesystem::path path) : path_(std::move(path)) {
  const std::string gen = path_.string() + ".gen";
  const int fd = ::open(gen.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;  // change detection falls back to stat on every call
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size < static_cast<off_t>(sizeof(std::uint64_t))) {
    if (::ftruncate(fd, sizeof(std::uint64_t)) != 0) {
      ::close(fd);
      return;
    }
  }
  void* p = ::mmap(nullptr, sizeof(std::uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p != MAP_FAILED) generation_ = static_cast<std::atomic<std::uint64_t>*>(p);
}

std::optional<StateFile::Identity> StateFile::identity_of(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return Identity{st.st_dev, st.st_ino,
                  static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000LL + st.st_mtim.tv_nsec,
                  static_cast<long long>(st.st_size)};
}

bool StateFile::changed() { return changed(steady_ns()); }

bool StateFile::changed(long long now) {
  if (!seen_anything_) return true;
  if (generation_ && generation_->load(std::memory_order_acquire) == seen_generation_ &&
      now - last_stat_ns_ < kRestatNs) {
    return false;
  }
  last_stat_ns_ = now;
  if (generation_) seen_generation_ = generation_->load(std::memory_order_acquire);
  return identity_of(path_) != seen_;
}

std::optional<std::string> StateFile::read() {
  seen_anything_ = true;
  // Before the read: a write that lands after it bumps the counter past what we saw.
  if (generation_) seen_generation_ = generation_->load(std::memory_order_acquire);
  last_stat_ns_ = steady_ns();
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    seen_ = std::nullopt;
    return std::nullopt;
  }
  // The identity of what we read, not of whatever the path names a moment later.
  struct stat st {};
  ::fstat(fd, &st);
  seen_ = Identity{st.st_dev, st.st_ino,
                   static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000LL + st.st_mtim.tv_nsec,
                   static_cast<long long>(st.st_size)};
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  hold(fd);
  bytes.resize(done);
  return bytes;
}

void StateFile::write(const std::string& bytes) {
  const std::string tmp = path_.string() + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw_errno("create " + tmp);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      throw_errno("write " + tmp);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw_errno("rename to " + path_.string());
  }
  seen_anything_ = true;
  seen_ = identity_of(path_);
  hold(fd);
  if (generation_) seen_generation_ = generation_->fetch_add(1, std::memory_order_acq_rel) + 1;
  last_stat_ns_ = steady_ns();
}

void StateFile::hold(int fd) {
  if (held_fd_ >= 0) ::close(held_fd_);
  held_fd_ = fd;
}

StateFile::~StateFile() {
  if (held_fd_ >= 0) ::close(held_fd_);
  if (generation_) ::munmap(generation_, sizeof(std::uint64_t));
}

StateFile::Lock::Lock(const std::filesystem::path& lock_path) {
  fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return;  // an unwritable directory: no sharing, the process runs on its own
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) {
      ::close(fd_);
      throw_errno("flock " + lock_path.string());
    }
  }
}

StateFile::Lock::~Lock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

}  // namespace gpuclk::sim::abi
