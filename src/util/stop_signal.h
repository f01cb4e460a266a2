// How a command stops on Ctrl-C, kill and a closed terminal (SIGINT, SIGTERM, SIGHUP), in one of
// two ways:
//   StopFlag    while alive, those signals set a flag the command checks between steps (dmon's
//               rows, a sweep's points, fleet's refreshes) and it ends cleanly; the handlers
//               before are put back when it goes. One at a time per process.
//   StopWaiter  the signals are blocked in this thread and in every thread started after it
//               (they inherit the mask); wait() returns the one that came. For a service whose
//               main thread only waits and then stops its parts in order.
#pragma once

#include <signal.h>

#include <array>

namespace gpuclk::util {

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
  // The signal that came (SIGINT, SIGTERM, SIGHUP); 0 when none.
  static int signal();

 private:
  std::array<struct sigaction, 3> previous_{};
};

class StopWaiter {
 public:
  // Blocks SIGINT and SIGTERM in the calling thread (create it before starting any thread).
  StopWaiter();
  StopWaiter(const StopWaiter&) = delete;
  StopWaiter& operator=(const StopWaiter&) = delete;

  // Waits for SIGINT or SIGTERM and returns which.
  int wait();

 private:
  sigset_t set_{};
};

}  // namespace gpuclk::util
