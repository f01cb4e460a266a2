// The governor's decision log, JSON Lines: one object per GPU whenever its class or its
// decision changes (and when the governor stops), so a day at 20 ms stays small:
//   {"time": "2026-11-23T13:00:00.020Z", "elapsed_s": 0.02, "gpu": 0, "uuid": "GPU-…",
//    "signals": {"sm_clock_mhz": 1980, "memory_clock_mhz": 2619, "power_w": 412.3,
//                "gpu_utilization": 1.0, "sm_active": 0.99, "tensor_active": 0.0,
//                "dram_active": 0.89, "clock_reasons": "none"},
//    "class": "memory_bound", "decision": {"locked": true, "min_mhz": 345, "max_mhz": 1650},
//    "written": true, "reason": "memory_bound: predicted slowdown 2.4 % at 1650 MHz …"}
// A missing reading is null. `gpuclk govern --report LOG` summarises a log (summarize()).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "govern/classifier.h"
#include "govern/decision.h"
#include "govern/signals.h"

namespace gpuclk::govern {

struct LogEntry {
  std::string time;  // ISO 8601 UTC, milliseconds
  double elapsed_s = 0;
  unsigned gpu = 0;
  std::string uuid;
  Signals signals;
  PhaseClass phase_class = PhaseClass::unknown;
  Decision decision;
  bool written = false;
  std::string reason;
};

std::string to_json_line(const LogEntry& entry);
// Throws std::runtime_error naming what is wrong.
LogEntry entry_from_json_line(const std::string& line);

// Appends entries to a file, flushed after each (a crash keeps everything before it).
class DecisionLog {
 public:
  // Throws gpuclk::Error (exit 2) when the file cannot be opened for writing.
  explicit DecisionLog(const std::filesystem::path& file);
  void write(const LogEntry& entry);

 private:
  std::ofstream out_;
};

// What `govern --report` prints: per GPU and class, time, the clock held, power, and the
// estimated energy and time effect against the top clock.
// The window the driver's power reading averages over (Hopper: 1 s): a reading is booked to a
// class only when the class held for that long before it.
inline constexpr double kPowerAveragingSeconds = 1.0;

struct ClassSummary {
  unsigned gpu = 0;
  PhaseClass phase_class = PhaseClass::unknown;
  double seconds = 0;
  double share = 0;              // of the GPU's logged time
  double mean_ceiling_mhz = 0;   // the clock ceiling in force (the top clock when released)
  double mean_sm_clock_mhz = 0;  // the clock read
  // The mean of the driver's power readings (1 s averages) whose whole second lies within this
  // class; NaN when none does (the class never held 1 s, or was not read).
  double mean_power_w = 0;
  double energy_j = 0;  // mean power × the class's time (NaN with the mean)
  // Time the class lost to the clock ceiling held, against the top clock, estimated with the
  // phase policy's priors (compute: time ∝ 1/f, memory: elasticity 0.3, idle and power-capped:
  // none).
  double estimated_extra_seconds = 0;
  std::uint64_t writes = 0;
};

struct LogSummary {
  std::size_t entries = 0;
  double seconds = 0;  // longest GPU span
  std::uint64_t writes = 0;
  std::vector<ClassSummary> classes;  // by GPU, then class order; classes with time only
};

// Reads a log (throws gpuclk::Error exit 2 for a missing or malformed file, naming the line).
LogSummary summarize(const std::filesystem::path& file);

}  // namespace gpuclk::govern
