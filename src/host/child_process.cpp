#include "host/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "util/error.h"

namespace gpuclk::host {
namespace {

constexpr std::array<int, 7> kForwarded = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,
                                           SIGUSR1, SIGUSR2, SIGWINCH};

// Signal handlers are process-wide, so the forwarding target is too: 0 when nothing runs,
// -group to reach a whole process group, +pid for the command alone.
std::atomic<pid_t> g_target{0};
std::atomic<bool> g_shares_our_group{false};
// A signal that came while the handler was installed but the command not yet started: forwarded
// once it is. (Blocking the signals across fork blocks them in this thread only; the sampler's
// threads can take one meanwhile: CI lost a SIGTERM that way.)
std::atomic<int> g_pending{0};
struct sigaction g_previous[kForwarded.size()];
// install_forwarding() calls not yet undone (an EarlySignalForwarding and a ChildProcess nest);
// the main thread's alone.
int g_depth = 0;

extern "C" void forward_signal(int sig, siginfo_t* info, void*) {
  const pid_t target = g_target.load();
  if (target == 0) {
    g_pending = sig;
    return;
  }
  // Signals from the terminal (Ctrl-C, Ctrl-\, resize) come from the kernel and reach every
  // process of the foreground group: a command in our group already has its own copy.
  if (g_shares_our_group.load() && info && info->si_code == SI_KERNEL) return;
  ::kill(target, sig);
}

void install_forwarding() {
  if (g_depth++ > 0) return;  // already caught: keep a signal that came meanwhile
  g_pending = 0;
  for (std::size_t i = 0; i < kForwarded.size(); ++i) {
    struct sigaction sa {};
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(kForwarded[i], &sa, &g_previous[i]);
  }
}

void remove_forwarding() {
  g_target = 0;
  if (g_depth == 0 || --g_depth > 0) return;
  for (std::size_t i = 0; i < kForwarded.size(); ++i)
    sigaction(kForwarded[i], &g_previous[i], nullptr);
}

bool executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// argv[0] as execvp would find it; throws the shell's 127 when there is nothing to run, and its
// 126 when there is something that cannot run (a directory; exec says why for the rest).
std::string resolve(const std::string& name) {
  auto not_found = [&] {
    return Error(static_cast<ExitCode>(127), "cannot run '" + name + "': command not found",
                 "give the command after --, e.g. gpuclk stat -- python train.py");
  };
  if (name.empty()) throw not_found();
  if (name.find('/') != std::string::npos) {
    struct stat st {};
    if (::stat(name.c_str(), &st) != 0) {
      throw Error(static_cast<ExitCode>(127), "cannot run '" + name + "': " + std::strerror(errno),
                  "give the command after --, e.g. gpuclk stat -- python train.py");
    }
    if (S_ISDIR(st.st_mode)) {
      throw Error(static_cast<ExitCode>(126), "cannot run '" + name + "': Is a directory",
                  "give a program to run, e.g. gpuclk stat -- python train.py");
    }
    return name;  // exists: exec runs it, or says why not (126)
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  std::string candidate_without_permission;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (!executable_file(candidate)) continue;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (candidate_without_permission.empty()) candidate_without_permission = candidate;
  }
  if (!candidate_without_permission.empty()) return candidate_without_permission;  // exec says why
  throw not_found();
}

bool in_foreground_of_terminal() {
  return ::isatty(STDIN_FILENO) && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
}

}  // namespace

EarlySignalForwarding::EarlySignalForwarding() { install_forwarding(); }

EarlySignalForwarding::~EarlySignalForwarding() { remove_forwarding(); }

ChildProcess::ChildProcess(const std::vector<std::string>& argv, int stdout_fd) {
  if (argv.empty()) throw bad_argument("no command to run", "e.g. gpuclk stat -- python train.py");
  const std::string program = resolve(argv.front());
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int report[2];  // the child writes errno here if exec fails; exec closes it (O_CLOEXEC)
  if (::pipe2(report, O_CLOEXEC) != 0)
    throw Error(ExitCode::other, "pipe: " + std::string(std::strerror(errno)));
  const bool own_group = !in_foreground_of_terminal();

  // Block the forwarded signals across fork so neither side handles one half set up.
  sigset_t forwarded, previous_mask;
  sigemptyset(&forwarded);
  for (int s : kForwarded) sigaddset(&forwarded, s);
  sigprocmask(SIG_BLOCK, &forwarded, &previous_mask);
  install_forwarding();
  started_ = std::chrono::steady_clock::now();
  pid_ = ::fork();
  if (pid_ == 0) {
    // Only async-signal-safe calls between fork and exec: the sampler's threads hold locks.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int s : kForwarded) sigaction(s, &dfl, nullptr);
    sigprocmask(SIG_SETMASK, &previous_mask, nullptr);
    if (own_group) ::setpgid(0, 0);
    if (stdout_fd >= 0 && stdout_fd != STDOUT_FILENO) ::dup2(stdout_fd, STDOUT_FILENO);
    ::execv(program.c_str(), args.data());
    int err = errno;
    (void)!::write(report[1], &err, sizeof err);
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(report[1]);
  if (pid_ < 0) {
    ::close(report[0]);
    remove_forwarding();
    sigprocmask(SIG_SETMASK, &previous_mask, nullptr);
    throw Error(ExitCode::other, "fork: " + std::string(std::strerror(fork_errno)));
  }
  if (own_group) ::setpgid(pid_, pid_);  // also here: whichever runs first wins the race
  group_ = own_group ? pid_ : ::getpgrp();
  g_shares_our_group = !own_group;
  g_target = own_group ? -pid_ : pid_;
  sigprocmask(SIG_SETMASK, &previous_mask, nullptr);
  if (const int sig = g_pending.exchange(0)) ::kill(g_target.load(), sig);

  int exec_errno = 0;
  ssize_t n;
  do n = ::read(report[0], &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == sizeof exec_errno) {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    remove_forwarding();
    pid_ = -1;
    const int code = exec_errno == ENOENT ? 127 : 126;
    throw Error(static_cast<ExitCode>(code),
                "cannot run '" + argv.front() + "': " + std::strerror(exec_errno));
  }
#ifdef SYS_pidfd_open
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
#endif
}

ChildProcess::~ChildProcess() {
  if (pidfd_ >= 0) ::close(pidfd_);
  if (g_target.load() != 0) remove_forwarding();
}

ChildExit ChildProcess::wait(const std::function<void()>& tick, std::chrono::milliseconds period) {
  using clock = std::chrono::steady_clock;
  auto next_tick = clock::now() + period;
  int status = 0;
  for (;;) {
    const auto now = clock::now();
    if (now >= next_tick) {
      if (tick) tick();
      next_tick = now + period;
    }
    const int timeout_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                next_tick - clock::now())
                                                .count()) +
                           1;
    if (pidfd_ >= 0) {
      // Exact exit time without polling: the pidfd becomes readable when the command exits.
      pollfd p{pidfd_, POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0) continue;  // timeout or a signal: tick / forward
    } else {
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(timeout_ms, 5)));
        continue;
      }
      if (r == pid_) break;
    }
    pid_t r;
    do r = ::waitpid(pid_, &status, 0);
    while (r < 0 && errno == EINTR);
    if (r == pid_) break;
  }
  ChildExit exit;
  exit.wall = clock::now() - started_;
  if (WIFSIGNALED(status)) {
    exit.signal = WTERMSIG(status);
    exit.exit_code = 128 + *exit.signal;
  } else {
    exit.exit_code = WEXITSTATUS(status);
  }
  remove_forwarding();
  return exit;
}

std::optional<pid_t> parent_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  // "pid (comm) state ppid …": comm may hold spaces and parentheses; the last ')' ends it.
  auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  char state = 0;
  long ppid = -1;
  if (!(rest >> state >> ppid)) return std::nullopt;
  return static_cast<pid_t>(ppid);
}

bool descends_from(pid_t pid, pid_t ancestor) {
  for (int depth = 0; depth < 128 && pid > 1; ++depth) {
    if (pid == ancestor) return true;
    auto parent = parent_of(pid);
    if (!parent) return false;
    pid = *parent;
  }
  return pid == ancestor;
}

bool ChildProcess::owns(pid_t pid) const {
  if (pid_ <= 0) return false;
  if (descends_from(pid, pid_)) return true;
  return own_process_group() && ::getpgid(pid) == group_;
}

}  // namespace gpuclk::host
