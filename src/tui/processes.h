// The process rows of every GPU: NVML's pids and memory, /proc's user, command and CPU time, and
// the CPU use since the previous call (per pid). Not thread-safe: one caller.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tui/feed.h"

namespace gpuclk::tui {

class ProcessTable {
 public:
  // `driver_name(pid)`: the driver's name for a process /proc does not know (another PID
  // namespace, the simulator's jobs); may be empty.
  explicit ProcessTable(std::function<std::optional<std::string>(unsigned)> driver_name = {})
      : driver_name_(std::move(driver_name)) {}

  struct Entry {
    unsigned pid = 0;
    std::optional<units::Bytes> gpu_memory;
  };
  // The rows of one GPU's `entries`; CPU % over the wall time since this pid was last seen.
  std::vector<ProcessRow> rows(const std::vector<Entry>& entries);

 private:
  struct Seen {
    std::chrono::steady_clock::time_point when;
    double cpu_seconds = 0;
    std::optional<double> percent;  // over the last interval of at least 50 ms
  };
  std::function<std::optional<std::string>(unsigned)> driver_name_;
  std::map<unsigned, Seen> seen_;
};

}  // namespace gpuclk::tui
