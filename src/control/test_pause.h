// A test hook of every writer (the commands' and the service's), honoured only on the simulator:
// GPUCLK_TEST_PAUSE_AFTER_WRITES=N pauses after the N-th GPU write, announced in the file
// GPUCLK_TEST_PAUSE_MARKER, until the process is killed (tests/cli/restore_test.sh sends SIGKILL
// there, between two writes of one run) or the marker file is removed (then it goes on:
// tests/faults/full_disk_test.sh fills the disk meanwhile).
#pragma once

#include <cstddef>
#include <functional>

namespace gpuclk::control {

// The hook for SessionOptions::after_write; empty when the variable is unset or `simulated()`
// is false (a real GPU never pauses between writes; asked only when the variable is set).
std::function<void(std::size_t)> test_pause_hook(const std::function<bool()>& simulated);

}  // namespace gpuclk::control
