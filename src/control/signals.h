// SignalDeferral: while alive, SIGINT, SIGTERM, SIGHUP and SIGQUIT are held back, so a change
// is never cut between a write and its journal update; the run asks interrupted() between
// writes and rolls back. When it is destroyed, a held signal is delivered (default action).
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
};

}  // namespace gpuclk::control
