// `gpuclk top`'s view of one GPU that the service keeps: its memory size and its processes (with
// the driver's names and who each works for, so that a client's rules group the GPUs into jobs
// as doctor does).
#pragma once

#include <nlohmann/json.hpp>

#include "gpu/device.h"

namespace gpuclk::views {

// {"memory_total_bytes", "processes": [{"pid", "used_memory_bytes", "name", "owner"
// (host::owner_key: "slurm:1234"), "owner_user"}]}
nlohmann::json read_top_view(const gpu::Device& device, const gpu::DeviceSet& devices);

}  // namespace gpuclk::views
