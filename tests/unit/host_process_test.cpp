// host::read_process: this process's user, command line and CPU time from /proc.
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <chrono>

#include "host/process.h"

namespace gpuclk::host {
namespace {

TEST(host_process, reads_this_process) {
  // Burn a little CPU so the CPU time is not zero.
  volatile double x = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  while (std::chrono::steady_clock::now() < until) x = x + 1;
  const auto p = read_process(static_cast<unsigned>(getpid()));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pid, static_cast<unsigned>(getpid()));
  EXPECT_NE(p->command.find("gpuclk_unit_tests"), std::string::npos) << p->command;
  const passwd* me = getpwuid(getuid());
  EXPECT_EQ(p->user, me ? std::string(me->pw_name) : std::to_string(getuid()));
  EXPECT_GT(p->cpu_time.count(), 0.0);
  // It has run at least the 50 ms it spun, and used no more CPU than wall time on one thread
  // (plus the clock tick's rounding).
  EXPECT_GE(p->age.count(), 0.04);
  EXPECT_LE(p->cpu_time.count(), p->age.count() + 0.02);
}

TEST(host_process, a_process_that_does_not_exist_is_nullopt) {
  EXPECT_FALSE(read_process(0x7fffffffu));
}

}  // namespace
}  // namespace gpuclk::host
