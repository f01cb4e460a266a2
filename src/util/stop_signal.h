// How a command stops on a signal that would end it: Ctrl-C, kill, a closed terminal, and every
// other signal whose default action is to end the process and that comes from outside (SIGQUIT,
// SIGUSR1/2, SIGALRM, SIGXCPU, the real-time signals…: stop_signals()). A process ended by one of
// those would leave whatever it set on the GPUs behind. Two ways:
//   StopFlag    while alive, those signals set a flag the command checks between steps (dmon's
//               rows, a sweep's points, fleet's refreshes) and it ends cleanly; the handlers
//               before are put back when it goes. One at a time per process.
//   StopWaiter  the signals are blocked in this thread and in every thread started after it
//               (they inherit the mask); wait() returns the one that came. For a service whose
//               main thread only waits and then stops its parts in order.
// SIGPIPE and SIGXFSZ end a process on a write to a reader that went away or past the file-size
// limit: a writer ignores them (ignore_write_signals) and the write fails with EPIPE or EFBIG
// instead, which it reports or drops. SIGKILL and SIGSTOP cannot be caught: the journal is what
// puts a killed writer's settings back (docs/hardening.md). Faults (SIGSEGV, SIGBUS, SIGILL,
// SIGFPE) are crashes, not requests to stop, and keep their default action.
#pragma once

#include <signal.h>

#include <vector>

namespace gpuclk::util {

// The signals a stop handles: every one whose default action ends the process, that a person,
// a terminal, a service manager or a resource limit sends, in ascending order.
const std::vector<int>& stop_signals();
// The set of them, for sigprocmask/sigpending.
sigset_t stop_signal_set();
// The name of a signal for messages: "SIGHUP"; "SIGRTMIN+3"; "signal 99".
const char* signal_name(int signal_number);

// SIGPIPE and SIGXFSZ are ignored from now on in this process (a write fails instead).
void ignore_write_signals();

class StopFlag {
 public:
  // `restart`: system calls a signal interrupts are restarted (SA_RESTART, as std::signal's
  // handlers do); false: they fail with EINTR, so a blocking wait ends at once.
  explicit StopFlag(bool restart = true);
  ~StopFlag();
  StopFlag(const StopFlag&) = delete;
  StopFlag& operator=(const StopFlag&) = delete;

  // A signal came: the command should stop.
  static bool raised();
  // The signal that came (SIGINT, SIGTERM, SIGHUP…); 0 when none.
  static int signal();

 private:
  std::vector<struct sigaction> previous_;
};

class StopWaiter {
 public:
  // Blocks the stop signals in the calling thread (create it before starting any thread).
  StopWaiter();
  StopWaiter(const StopWaiter&) = delete;
  StopWaiter& operator=(const StopWaiter&) = delete;

  // Waits for one of the stop signals and returns which.
  int wait();
  // A stop signal came: pending (not yet taken by wait()) or taken. Any thread; for waits that
  // must end when the service stops (the journal's lock).
  static bool requested();

 private:
  sigset_t set_{};
};

}  // namespace gpuclk::util
