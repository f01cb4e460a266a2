#include "views/top.h"

#include "host/owner.h"
#include "rules/process_owners.h"

namespace gpuclk::views {

using nlohmann::json;

json read_top_view(const gpu::Device& device, const gpu::DeviceSet& devices) {
  json j = json::object();
  if (auto m = device.memory()) j["memory_total_bytes"] = m->total.value();
  if (auto list = device.processes()) {
    json processes = json::array();
    for (const auto& p : *list) {
      json row{{"pid", p.pid}};
      if (p.used_memory) row["used_memory_bytes"] = p.used_memory->value();
      if (auto name = devices.process_name(p.pid)) row["name"] = *name;
      // Who it works for, so that a client's rules group the GPUs into jobs as doctor does.
      if (auto owner = rules::process_owner(devices.api(), p.pid)) {
        row["owner"] = host::owner_key(*owner);
        if (!owner->user.empty()) row["owner_user"] = owner->user;
      }
      processes.push_back(row);
    }
    j["processes"] = processes;
  }
  return j;
}

}  // namespace gpuclk::views
