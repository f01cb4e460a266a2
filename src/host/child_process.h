// Running the command `gpuclk stat` measures: fork/exec with the caller's stdin/stdout/stderr,
// signals forwarded, its exit status as a shell reports it, and which processes belong to it.
//
// Process groups: when gpuclk runs in the foreground of a terminal, the command stays in
// gpuclk's process group so job control and terminal input work; Ctrl-C reaches both directly
// and is not forwarded twice. Otherwise (batch jobs, pipelines, services) the command gets a
// process group of its own and every forwarded signal goes to that whole group, so its children
// receive it too. Not thread-safe: one ChildProcess waited on by one thread at a time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuclk::host {

struct ChildExit {
  int exit_code = 0;                // as a shell reports it: the status, or 128 + signal
  std::optional<int> signal;        // the signal that killed the command, if one did
  std::chrono::nanoseconds wall{};  // from fork to exit (steady clock)
};

// Catches the signals ChildProcess forwards from now on, before the command starts: one that
// comes meanwhile is sent to the command as soon as it runs (dropped if none ever does: gpuclk
// then ends with the error that kept it from running). gpuclk stat holds one from its first step,
// so a job cancelled while stat is still starting ends with a report instead of killing stat. Main
// thread only; nests with ChildProcess.
class EarlySignalForwarding {
 public:
  EarlySignalForwarding();
  ~EarlySignalForwarding();
  EarlySignalForwarding(const EarlySignalForwarding&) = delete;
  EarlySignalForwarding& operator=(const EarlySignalForwarding&) = delete;
};

class ChildProcess {
 public:
  // Starts argv (argv[0] searched in PATH). Throws gpuclk::Error with exit code 127 when the
  // command cannot be found and 126 when it cannot be executed, before anything runs.
  // `stdout_fd` >= 0: the command's standard output goes there (the caller keeps the fd).
  explicit ChildProcess(const std::vector<std::string>& argv, int stdout_fd = -1);
  ~ChildProcess();  // a command still running is left running (its group is told nothing)
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // The command's process group (== pid() when it has its own, else gpuclk's).
  pid_t process_group() const { return group_; }
  bool own_process_group() const { return group_ == pid_; }

  // Waits for the command to exit, forwarding SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2
  // and SIGWINCH that gpuclk receives; calls `tick` about every `period` meanwhile.
  ChildExit wait(const std::function<void()>& tick, std::chrono::milliseconds period);

  // True if `pid` is the command or one of its descendants (by the /proc parent chain, or by
  // the command's own process group).
  bool owns(pid_t pid) const;

 private:
  pid_t pid_ = -1;
  pid_t group_ = -1;
  int pidfd_ = -1;
  std::chrono::steady_clock::time_point started_{};
};

// The parent of `pid` from /proc/PID/stat, or nullopt if it is gone.
std::optional<pid_t> parent_of(pid_t pid);
// True if `ancestor` is `pid` or an ancestor of it.
bool descends_from(pid_t pid, pid_t ancestor);

}  // namespace gpuclk::host
