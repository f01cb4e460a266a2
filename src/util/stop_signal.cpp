#include "util/stop_signal.h"

#include <pthread.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <string>

namespace gpuclk::util {

namespace {

// Lock-free, so a handler may set it and any thread read it.
std::atomic<int> g_signal{0};
// The signal StopWaiter::wait() took; 0 before.
std::atomic<int> g_waited{0};
static_assert(std::atomic<int>::is_always_lock_free);

std::vector<int> make_stop_signals() {
  // signal(7): the asynchronous signals whose default action is Term or Core. SIGABRT is
  // left to abort(), the fault signals to faults, SIGKILL and SIGSTOP cannot be caught.
  std::vector<int> out = {SIGHUP,  SIGINT,    SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,  SIGTERM,
                          SIGXCPU, SIGVTALRM, SIGPROF, SIGIO,   SIGPWR,  SIGSTKFLT};
  // The real-time signals end a process by default too; glibc keeps those below SIGRTMIN.
  for (int s = SIGRTMIN; s <= SIGRTMAX; ++s) out.push_back(s);
  return out;
}

}  // namespace

const std::vector<int>& stop_signals() {
  static const std::vector<int> signals = make_stop_signals();
  return signals;
}

sigset_t stop_signal_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : stop_signals()) sigaddset(&set, s);
  return set;
}

const char* signal_name(int signal_number) {
  // sigabbrev_np is glibc 2.32+; the names are kept once per signal for the process's life.
  static thread_local std::string text;
  // The real-time signals as bash and kill(1) name them: RTMIN+n in the lower half, RTMAX-n above.
  if (signal_number >= SIGRTMIN && signal_number <= SIGRTMAX) {
    const int above = signal_number - SIGRTMIN, below = SIGRTMAX - signal_number;
    text = above == 0                           ? "SIGRTMIN"
           : below == 0                         ? "SIGRTMAX"
           : above <= (SIGRTMAX - SIGRTMIN) / 2 ? "SIGRTMIN+" + std::to_string(above)
                                                : "SIGRTMAX-" + std::to_string(below);
    return text.c_str();
  }
  // glibc calls signal 29 POLL; kill(1), bash and signal(7) call it IO first.
  if (signal_number == SIGIO) return "SIGIO";
  if (const char* abbrev = sigabbrev_np(signal_number)) {
    text = std::string("SIG") + abbrev;
    return text.c_str();
  }
  text = "signal " + std::to_string(signal_number);
  return text.c_str();
}

void ignore_write_signals() {
  struct sigaction sa {};
  sa.sa_handler = SIG_IGN;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPIPE, &sa, nullptr);
  sigaction(SIGXFSZ, &sa, nullptr);
}

// C linkage, as a signal handler must have; the name is the process's, hence the prefix.
extern "C" void gpuclk_util_stop_flag_handler(int s) { g_signal = s; }

StopFlag::StopFlag(bool restart) {
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = gpuclk_util_stop_flag_handler;
  sa.sa_flags = restart ? SA_RESTART : 0;
  sigemptyset(&sa.sa_mask);
  const auto& signals = stop_signals();
  previous_.resize(signals.size());
  for (std::size_t i = 0; i < signals.size(); ++i) sigaction(signals[i], &sa, &previous_[i]);
}

StopFlag::~StopFlag() {
  const auto& signals = stop_signals();
  for (std::size_t i = 0; i < signals.size(); ++i) sigaction(signals[i], &previous_[i], nullptr);
}

bool StopFlag::raised() { return g_signal != 0; }

int StopFlag::signal() { return g_signal; }

StopWaiter::StopWaiter() : set_(stop_signal_set()) { pthread_sigmask(SIG_BLOCK, &set_, nullptr); }

int StopWaiter::wait() {
  int signal_number = 0;
  while (sigwait(&set_, &signal_number) != 0) {
  }
  g_waited = signal_number;
  return signal_number;
}

bool StopWaiter::requested() {
  if (g_waited != 0) return true;
  sigset_t pending;
  sigemptyset(&pending);
  if (sigpending(&pending) != 0) return false;
  for (int s : stop_signals()) {
    if (sigismember(&pending, s)) return true;
  }
  return false;
}

}  // namespace gpuclk::util
