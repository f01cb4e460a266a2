#include "control/signals.h"

#include "util/stop_signal.h"

namespace gpuclk::control {

SignalDeferral::SignalDeferral() : held_(util::stop_signal_set()) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &previous_pipe_);
  sigaction(SIGXFSZ, &ignore, &previous_xfsz_);
  pthread_sigmask(SIG_BLOCK, &held_, &previous_);
}

SignalDeferral::~SignalDeferral() {
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  sigaction(SIGPIPE, &previous_pipe_, nullptr);
  sigaction(SIGXFSZ, &previous_xfsz_, nullptr);
}

bool SignalDeferral::interrupted() const {
  sigset_t pending;
  sigemptyset(&pending);
  if (sigpending(&pending) != 0) return false;
  for (int s : util::stop_signals()) {
    if (sigismember(&pending, s)) return true;
  }
  return false;
}

}  // namespace gpuclk::control
