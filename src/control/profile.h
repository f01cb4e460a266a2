// A profile: the settings a host's GPUs should have, declared in TOML for `gpuclk apply` (at
// boot, from deploy/systemd/gpuclk-apply.service). Settings a profile does not name are left
// alone. Example and every key: deploy/profiles/example.toml.
//
//   gpus = "all"                   # which GPUs: "all", or -i syntax ("0,1", UUIDs, bus ids)
//   snap = false                   # round to the nearest supported value instead of refusing
//   [settings]                     # for every GPU the profile covers
//   persistence_mode = "on"
//   application_clocks = "2619,1980"
//   locked_gpu_clocks = "1980"     # MIN[,MAX] | "tdp" | "tdp,unlimited" | "default"
//   locked_memory_clocks = "default"
//   power_limit_w = 700            # or "default"
//   [[override]]                   # other settings for some of them
//   gpus = "3"
//   power_limit_w = 600
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "control/request.h"
#include "gpu/device.h"

namespace gpuclk::control {

struct ProfileGroup {
  std::string gpus;  // -i syntax; "" = every GPU the profile covers
  Request request;
};

struct Profile {
  std::filesystem::path path;
  std::string description;
  std::string gpus = "all";  // "all" or -i syntax
  bool snap = false;
  Request settings;                     // for every covered GPU
  std::vector<ProfileGroup> overrides;  // applied over `settings`, in order
};

// Throws Error (exit 2) naming the file, the key and what it takes; unknown keys are errors
// (a typo must not silently leave a GPU unconfigured).
Profile load_profile(const std::filesystem::path& path);
Profile parse_profile(const std::string& text, const std::string& source_name);

// One GPU and what to change on it.
struct DeviceRequest {
  gpu::Device* device = nullptr;
  Request request;
};

// What `profile` asks of each GPU it covers among `selected` (-i narrows it; `all` is every GPU,
// in whose order the profile's "gpus" count), its overrides merged; GPUs it asks nothing of are
// left out. `apply` and `serve --profile` share it. Throws Error (exit 2/6) for a bad "gpus".
std::vector<DeviceRequest> profile_requests(const Profile& profile, const gpu::DeviceSet& all,
                                            const std::vector<gpu::Device*>& selected);

}  // namespace gpuclk::control
