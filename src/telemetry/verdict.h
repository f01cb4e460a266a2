// One-line verdicts on a Summary: what held a GPU back during a run, most important first
// ("power-capped 93 % of the time: median SM clock 1410 of 1980 MHz"). Every number in a verdict
// is taken from the Summary. Used by `gpuclk stat`; doctor and bench reports can reuse them.
#pragma once

#include <string>
#include <vector>

#include "telemetry/sample.h"
#include "telemetry/summary.h"

namespace gpuclk::telemetry {

struct Verdict {
  enum class Kind {
    no_data,
    lost,
    unused,
    power_capped,
    thermal,
    app_clocks,
    idle,
    full_clock,
    below_max
  };
  Kind kind;
  std::string text;
};

// Thresholds (fractions of the run) above which a limiter is worth a verdict.
struct VerdictThresholds {
  double unused_idle = 0.9;  // idle at least this much: the command hardly used the GPU
  double power_capped = 0.2;
  double thermal = 0.05;
  double app_clocks = 0.2;
  double idle = 0.2;
  double full_clock = 0.97;  // median SM clock at least this share of max: no limiter
};

// Verdicts for one GPU; never empty (no_data when there were no readings).
std::vector<Verdict> verdicts(const Summary& summary, const GpuInfo& info,
                              const VerdictThresholds& thresholds = {});

}  // namespace gpuclk::telemetry
