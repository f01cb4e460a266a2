// Top's data side: a Feed hands the screen one Frame at a time — every GPU's latest readings,
// settings and limits, its recent history, its processes, and the node's findings. Two feeds:
// the service's (`gpuclk serve` answers on its socket: history at once from its ring buffers)
// and top's own sampler (service_feed.h, sampler_feed.h). The screen never knows which.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rules/finding.h"
#include "rules/input.h"
#include "telemetry/sample.h"

namespace gpuclk::tui {

// One process holding a context on a GPU.
struct ProcessRow {
  unsigned pid = 0;
  std::optional<units::Bytes> gpu_memory;  // what NVML says it holds on this GPU
  std::string user;                        // empty when /proc has no such process
  std::string command;                     // /proc's command line, else the driver's name
  std::optional<double> cpu_percent;       // of one core, since the previous frame
};

struct GpuFrame {
  // Settings and limits (persistence, application clocks, clock locks from the journal, power
  // limit, slowdown temperature, max SM clock); also what the rules read.
  rules::GpuFacts facts;
  std::optional<units::Megahertz> max_memory_clock;
  std::optional<units::Bytes> memory_total;
  telemetry::GpuHealth health;
  std::optional<telemetry::FastSample> fast;  // the latest
  std::optional<telemetry::SlowSample> slow;  // the latest (GPM activity)
  std::vector<telemetry::FastSample>
      history;  // oldest first, within the asked window (graphed GPU)
  std::vector<ProcessRow> processes;
};

struct Frame {
  telemetry::TimePoint time{};  // the GPUs' time base (simulated time under --sim)
  std::vector<GpuFrame> gpus;
  std::vector<rules::Finding> findings;  // over the last minute (findings_window)
};

class Feed {
 public:
  virtual ~Feed() = default;
  // Where the frames come from, for the header: "own sampler" or "gpuclk serve".
  virtual std::string source() const = 0;
  // The interval between fresh readings.
  virtual telemetry::Duration interval() const = 0;
  // The latest readings of every GPU, and the history of the last `history` (time-ordered)
  // of the one at position `graphed` (the others' history stays empty). Throws Error when the
  // source fails (the service went away: exit 255).
  virtual Frame frame(telemetry::Duration history, std::size_t graphed) = 0;
};

// Settings, processes and findings change slowly (reading them costs ~25 NVML calls per GPU):
// both feeds refresh them this often, not every frame.
inline constexpr telemetry::Duration kRefreshEvery = std::chrono::seconds(2);

// Findings look at this much of the history.
inline constexpr telemetry::Duration kFindingsWindow = std::chrono::seconds(60);

}  // namespace gpuclk::tui
