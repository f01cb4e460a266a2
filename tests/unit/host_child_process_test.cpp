#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <thread>

#include "host/child_process.h"
#include "util/error.h"

namespace gpuclk::host {
namespace {

using namespace std::chrono_literals;

ChildExit run(const std::vector<std::string>& argv) {
  ChildProcess child(argv);
  return child.wait({}, 100ms);
}

TEST(host_child_process_test, exit_code_is_the_commands) {
  EXPECT_EQ(run({"sh", "-c", "exit 3"}).exit_code, 3);
  EXPECT_EQ(run({"true"}).exit_code, 0);
}

TEST(host_child_process_test, a_signal_death_reads_as_128_plus_the_signal) {
  auto e = run({"sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(e.exit_code, 128 + SIGTERM);
  ASSERT_TRUE(e.signal);
  EXPECT_EQ(*e.signal, SIGTERM);
}

TEST(host_child_process_test, a_missing_command_is_127_before_anything_runs) {
  try {
    ChildProcess child({"gpuclk-no-such-command-xyz"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.code()), 127);
  }
}

TEST(host_child_process_test, signals_to_gpuclk_reach_the_command) {
  ChildProcess child({"sleep", "30"});
  std::thread sender([] {
    std::this_thread::sleep_for(100ms);
    ::kill(::getpid(), SIGTERM);  // as `kill <gpuclk>` would
  });
  auto e = child.wait({}, 50ms);
  sender.join();
  EXPECT_EQ(e.exit_code, 128 + SIGTERM);
  EXPECT_LT(e.wall, 5s);
}

TEST(host_child_process_test, a_signal_before_the_command_starts_reaches_it_once_it_does) {
  // gpuclk stat holds the signals from its first step: a SIGTERM while it is still starting
  // (a Slurm job cancelled at once) must stop the command, not kill gpuclk without a report.
  const EarlySignalForwarding early;
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);  // caught and held: the test process lives on
  ChildProcess child({"sleep", "30"});
  auto e = child.wait({}, 50ms);
  EXPECT_EQ(e.exit_code, 128 + SIGTERM);
  EXPECT_LT(e.wall, 5s);
}

TEST(host_child_process_test, the_tick_runs_while_the_command_runs) {
  ChildProcess child({"sleep", "0.3"});
  int ticks = 0;
  child.wait([&] { ++ticks; }, 50ms);
  EXPECT_GE(ticks, 3);
}

TEST(host_child_process_test, grandchildren_belong_to_the_command) {
  // The command starts a background child and prints its pid; the child outlives nothing.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ChildProcess* seen = nullptr;
  std::string out;
  {
    ChildProcess child({"sh", "-c", "sleep 0.5 & echo $! >&" + std::to_string(fds[1]) + "; wait"});
    seen = &child;
    ::close(fds[1]);
    char buf[32] = {};
    ASSERT_GT(::read(fds[0], buf, sizeof buf - 1), 0);
    const pid_t grandchild = static_cast<pid_t>(std::stol(buf));
    EXPECT_TRUE(seen->owns(grandchild));
    EXPECT_TRUE(seen->owns(child.pid()));
    EXPECT_FALSE(seen->owns(::getpid()));
    child.wait({}, 100ms);
  }
  ::close(fds[0]);
}

TEST(host_child_process_test, parent_chain_from_proc) {
  EXPECT_EQ(parent_of(::getpid()), ::getppid());
  EXPECT_TRUE(descends_from(::getpid(), ::getppid()));
  EXPECT_FALSE(descends_from(::getppid(), ::getpid()));
}

}  // namespace
}  // namespace gpuclk::host
