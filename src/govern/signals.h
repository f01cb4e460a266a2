// What the governor sees of one GPU at one decision, and the SM clocks it may choose from.
// Every reading is optional: a field that was not read, is not supported or failed is empty,
// and the classifier treats a decision without its key fields as "unknown" (max clock).
#pragma once

#include <optional>
#include <vector>

#include "gpu/clock_reasons.h"
#include "gpu/units.h"

namespace gpuclk::govern {

using units::Megahertz;
using units::Ratio;
using units::Watts;

struct Signals {
  double time_s = 0;  // seconds since the governor started (the GPU's time base)
  std::optional<Megahertz> sm_clock, memory_clock;
  std::optional<Watts> power;            // the driver's reading (a 1 s average on Hopper)
  std::optional<Ratio> gpu_utilization;  // fraction of time a kernel ran (driver's window)
  std::optional<gpu::ClockReasons> reasons;
  // GPM activity over the last interval (Hopper and later), 0..1.
  std::optional<Ratio> sm_active, tensor_active, dram_active, fp64_active, fp32_active, fp16_active;

  // The readings classification needs: SM clock, clock event reasons, SM and DRAM activity.
  bool complete() const { return sm_clock && reasons && sm_active && dram_active; }
  // The busiest arithmetic pipe (tensor, FP64, FP32, FP16); 0 when none was read.
  double pipe_active() const;
};

// The SM clocks a GPU supports (ascending) and its base clock.
class ClockLadder {
 public:
  ClockLadder() = default;
  // `clocks` in any order, duplicates dropped; `base` 0 = unknown (then 0.8 × max stands in).
  ClockLadder(std::vector<Megahertz> clocks, Megahertz base);
  // Every clock from min to max in `step` (the simulator's and Hopper's 15 MHz grid).
  static ClockLadder uniform(Megahertz min, Megahertz max, Megahertz step, Megahertz base);

  bool empty() const { return clocks_.empty(); }
  const std::vector<Megahertz>& clocks() const { return clocks_; }
  Megahertz min() const { return clocks_.front(); }
  Megahertz max() const { return clocks_.back(); }
  Megahertz base() const { return base_; }
  // Highest supported clock ≤ f (min when none is); lowest ≥ f (max when none is).
  Megahertz floor(Megahertz f) const;
  Megahertz ceil(Megahertz f) const;

 private:
  std::vector<Megahertz> clocks_;
  Megahertz base_;
};

}  // namespace gpuclk::govern
