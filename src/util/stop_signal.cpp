#include "util/stop_signal.h"

#include <pthread.h>

#include <atomic>
#include <csignal>

namespace gpuclk::util {

namespace {

constexpr std::array<int, 3> kStopSignals = {SIGINT, SIGTERM, SIGHUP};
// Lock-free, so a handler may set it and any thread read it.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

}  // namespace

// C linkage, as a signal handler must have; the name is the process's, hence the prefix.
extern "C" void gpuclk_util_stop_flag_handler(int s) { g_signal = s; }

StopFlag::StopFlag(bool restart) {
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = gpuclk_util_stop_flag_handler;
  sa.sa_flags = restart ? SA_RESTART : 0;
  sigemptyset(&sa.sa_mask);
  for (std::size_t i = 0; i < kStopSignals.size(); ++i)
    sigaction(kStopSignals[i], &sa, &previous_[i]);
}

StopFlag::~StopFlag() {
  for (std::size_t i = 0; i < kStopSignals.size(); ++i)
    sigaction(kStopSignals[i], &previous_[i], nullptr);
}

bool StopFlag::raised() { return g_signal != 0; }

int StopFlag::signal() { return g_signal; }

StopWaiter::StopWaiter() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
}

int StopWaiter::wait() {
  int signal_number = 0;
  sigwait(&set_, &signal_number);
  return signal_number;
}

}  // namespace gpuclk::util
