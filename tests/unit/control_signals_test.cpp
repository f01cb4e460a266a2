#include <gtest/gtest.h>

#include <csignal>

#include "control/signals.h"

namespace gpuclk::control {
namespace {

TEST(control_signals_test, holds_a_signal_and_reports_it) {
  {
    SignalDeferral deferral;
    EXPECT_FALSE(deferral.interrupted());
    std::raise(SIGTERM);  // held, not delivered: the test process survives
    EXPECT_TRUE(deferral.interrupted());
    // Ignoring a pending signal discards it (POSIX), so the destructor has nothing to deliver.
    std::signal(SIGTERM, SIG_IGN);
  }
  std::signal(SIGTERM, SIG_DFL);
  SignalDeferral fresh;
  EXPECT_FALSE(fresh.interrupted());
}

}  // namespace
}  // namespace gpuclk::control
