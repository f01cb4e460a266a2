// SignalDeferral: while alive, the signals that would end the process (util::stop_signals():
// SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1…) are held back, so a change is never cut between a
// write and its journal update; the run asks interrupted() between writes and rolls back. SIGPIPE
// and SIGXFSZ are ignored meanwhile (a reader that went away, a full file-size limit: the write
// fails, the run goes on). When it is destroyed, a held signal is delivered (default action) and
// SIGPIPE/SIGXFSZ get their handlers back.
#pragma once

#include <signal.h>

namespace gpuclk::control {

class SignalDeferral {
 public:
  SignalDeferral();
  ~SignalDeferral();
  SignalDeferral(const SignalDeferral&) = delete;
  SignalDeferral& operator=(const SignalDeferral&) = delete;

  // A held signal is waiting.
  bool interrupted() const;

 private:
  sigset_t held_{};
  sigset_t previous_{};
  struct sigaction previous_pipe_ {};
  struct sigaction previous_xfsz_ {};
};

}  // namespace gpuclk::control
