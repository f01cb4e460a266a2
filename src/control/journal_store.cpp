#include "control/journal_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "util/error.h"
#include "util/file.h"
#include "util/parse.h"

namespace gpuclk::control {
namespace {

namespace fs = std::filesystem;

// A file descriptor closed on every path out.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

[[noreturn]] void fail(int err, const std::string& what, const fs::path& path) {
  const bool denied = err == EACCES || err == EPERM || err == EROFS;
  throw Error(denied ? ExitCode::no_permission : ExitCode::other,
              fmt::format("{} {}: {}", what, path.string(), std::strerror(err)),
              denied ? "changing GPU settings needs root (or CAP_SYS_ADMIN) and a writable state "
                       "directory; run as root, or pass --state-dir DIR (GPUCLK_STATE_DIR)"
                     : "");
}

void write_all(int fd, const std::string& bytes, const fs::path& path) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno, "cannot write", path);
    }
    done += static_cast<std::size_t>(n);
  }
}

long read_holder_pid(int fd) {
  char buf[32] = {};
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  return n > 0 ? std::strtol(buf, nullptr, 10) : 0;
}

}  // namespace

std::string current_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

JournalStore::JournalStore(std::filesystem::path state_dir) : dir_(std::move(state_dir)) {}

JournalStore::Lock::Lock(Lock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

JournalStore::Lock::~Lock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

namespace {

// The temporary files of a write that was killed before its rename (".journal.json.PID.tmp"):
// removed by the next writer once their process is gone, so none is left behind for good.
void remove_stale_temporaries(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const auto name = entry.path().filename().string();
    if (name.size() < 6 || name.front() != '.' || !name.ends_with(".tmp")) continue;
    const auto stem = name.substr(0, name.size() - 4);
    const auto dot = stem.rfind('.');
    if (dot == std::string::npos) continue;
    const auto pid = parse::try_integer(stem.substr(dot + 1), 1, 1 << 22);
    if (!pid || ::kill(static_cast<pid_t>(*pid), 0) == 0 || errno != ESRCH) continue;
    fs::remove(entry.path(), ec);
  }
}

}  // namespace

JournalStore::Lock JournalStore::lock(const std::function<void(long)>& waiting,
                                      const GiveUp& give_up) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) fail(ec.value(), "cannot create the state directory", dir_);
  const auto path = dir_ / "lock";
  Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (fd.get() < 0) fail(errno, "cannot open the lock", path);
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) fail(errno, "cannot lock", path);
    const long holder = read_holder_pid(fd.get());
    if (waiting) waiting(holder);
    if (give_up) {
      const auto start = std::chrono::steady_clock::now();
      while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) fail(errno, "cannot lock", path);
        if (give_up(std::chrono::steady_clock::now() - start))
          throw LockWaitStopped(
              holder, fmt::format("stopped waiting for the journal's lock ({} holds {})",
                                  holder > 0 ? fmt::format("pid {}", holder) : "another gpuclk",
                                  path.string()));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    } else {
      while (::flock(fd.get(), LOCK_EX) != 0) {
        if (errno != EINTR) fail(errno, "cannot lock", path);
      }
    }
  }
  remove_stale_temporaries(dir_);
  // Who holds it, for the next one's "waiting for" message. Informational only.
  const auto pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd.get(), 0) == 0) {
    [[maybe_unused]] auto n = ::pwrite(fd.get(), pid.data(), pid.size(), 0);
  }
  return Lock(fd.release());
}

bool JournalStore::locked_by_another() const {
  Fd fd(::open((dir_ / "lock").c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return false;
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) return false;  // released with the fd
  return errno == EWOULDBLOCK;
}

Journal JournalStore::load() const {
  const auto path = file();
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (ec) fail(ec.value(), "cannot read the journal", path);
    return Journal{};
  }
  std::string text;
  try {
    text = file::read_bounded(path.string(), "journal");
  } catch (const Error& e) {
    throw Error(ExitCode::other, e.what(),
                "the journal must be a regular file written by gpuclk; move it away to start a "
                "new one (restore will then know nothing of earlier changes)");
  }
  try {
    return journal_from_json(text);
  } catch (const std::exception& e) {
    throw Error(
        ExitCode::other, fmt::format("the journal {} is unusable: {}", path.string(), e.what()),
        "inspect it; GPU settings it records may still be in force. Move it away to start a "
        "new journal (restore will then know nothing of earlier changes)");
  }
}

std::optional<std::string> JournalStore::damage() const {
  if (::access(file().c_str(), R_OK) != 0) return std::nullopt;  // none, or not this user's
  try {
    load();
    return std::nullopt;
  } catch (const Error& e) {
    return fmt::format("{} ({})", e.what(), e.hint());
  }
}

std::optional<Journal> JournalStore::try_load() const {
  try {
    return load();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void JournalStore::save(Journal journal) const {
  if (journal.boot_id.empty()) journal.boot_id = current_boot_id();
  write_atomically(file().filename().string(), to_json(journal));
}

void JournalStore::write_atomically(const std::string& name, const std::string& bytes) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) fail(ec.value(), "cannot create the state directory", dir_);
  const auto target = dir_ / name;
  const auto temp = dir_ / fmt::format(".{}.{}.tmp", name, ::getpid());
  {
    Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0) fail(errno, "cannot create", temp);
    write_all(fd.get(), bytes, temp);
    // The data must be on disk before the rename makes it the journal: a crash after the rename
    // must never leave an empty or partial journal behind.
    if (::fsync(fd.get()) != 0) fail(errno, "cannot fsync", temp);
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    fail(err, "cannot replace", target);
  }
  // And the rename itself must be durable before the first GPU write that it covers.
  Fd dir(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0 || ::fsync(dir.get()) != 0) fail(errno, "cannot fsync", dir_);
}

std::filesystem::path JournalStore::archive(const std::string& suffix) const {
  auto to = dir_ / ("journal.json." + suffix);
  std::error_code ec;
  fs::rename(file(), to, ec);
  if (ec) fail(ec.value(), "cannot move aside", file());
  return to;
}

}  // namespace gpuclk::control
