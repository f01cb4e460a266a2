// doctor's window, watched from now on: the command's own sampler over the GPUs and, beside it,
// their Xid and ECC events (gpu::EventWatcher), then the facts read once after the window. The
// window through the service (a look back at its history) is the caller's other source of the
// same rules::Input.
#pragma once

#include <functional>
#include <vector>

#include "gpu/device.h"
#include "rules/input.h"
#include "telemetry/sampler.h"
#include "util/clock.h"

namespace gpuclk::rules {

// What is read once, after the window: settings, limits, the link (trained up under load),
// lifetime ECC counts, NVLink peers, the processes holding each GPU.
GpuFacts read_facts(const gpu::Device& d);

// Samples `devices` every `interval` for `duration` of `clock`'s time, with the standard fields,
// PCIe replays and NVLink, and collects their events on a thread of its own (NVML delivers each
// event once, to a waiter). `progress` (optional) is called with the seconds left about every
// 200 ms of wall time.
Input watch(const std::vector<gpu::Device*>& devices, const Clock& clock,
            telemetry::Duration duration, telemetry::Duration interval,
            const std::function<void(double seconds_left)>& progress = {});

}  // namespace gpuclk::rules
