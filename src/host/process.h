// What /proc says about a process (top's process rows): its user, command line and the CPU time
// it has used. Linux only.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace gpuclk::host {

struct ProcessInfo {
  unsigned pid = 0;
  std::string user;     // the login name of its real uid; the uid as a number when unnamed
  std::string command;  // /proc/PID/cmdline with spaces between the arguments (comm when empty)
  std::chrono::duration<double> cpu_time{};  // user + system, since the process started
  std::chrono::duration<double> age{};       // wall time since it started (0: unknown)
};

// The login name of `uid`; the uid as a number when it has none.
std::string user_name(unsigned uid);

// nullopt when the process does not exist (or /proc cannot be read: another PID namespace).
std::optional<ProcessInfo> read_process(unsigned pid);

}  // namespace gpuclk::host
