#include "control/signals.h"

#include <initializer_list>

namespace gpuclk::control {

SignalDeferral::SignalDeferral() {
  sigemptyset(&held_);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&held_, s);
  pthread_sigmask(SIG_BLOCK, &held_, &previous_);
}

SignalDeferral::~SignalDeferral() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

bool SignalDeferral::interrupted() const {
  sigset_t pending;
  sigemptyset(&pending);
  if (sigpending(&pending) != 0) return false;
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    if (sigismember(&pending, s)) return true;
  }
  return false;
}

}  // namespace gpuclk::control
