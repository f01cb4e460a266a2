// Signals from the telemetry sampler's latest readings of one GPU: the fast fields of the last
// tick and the GPM activity of the last slow read (no energy-counter read: 3.2 ms on an H100).
// GPM older than `max_gpm_age` counts as missing. A GPU without GPM (before Hopper) gets the
// driver's utilisation as SM activity and its memory utilisation as DRAM activity: coarser,
// documented in docs/govern.md.
#pragma once

#include "govern/signals.h"
#include "telemetry/sampler.h"

namespace gpuclk::govern {

Signals signals_from(const telemetry::GpuSnapshot& gpu, telemetry::TimePoint started,
                     telemetry::Duration max_gpm_age, bool gpm_supported);

}  // namespace gpuclk::govern
