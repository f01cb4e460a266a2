#include "bench/device_map.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "gpu/selection.h"
#include "util/error.h"
#include "util/text.h"

namespace gpuclk::bench {
namespace {

bool same_bus(const std::string& a, const std::string& b) {
  const std::string x = gpu::normalize_bus_id(a), y = gpu::normalize_bus_id(b);
  return !x.empty() && x == y;
}

}  // namespace

std::vector<int> cuda_ordinals(std::span<const NvmlGpu> gpus, std::span<const DeviceInfo> cuda) {
  std::vector<int> ordinals;
  for (const NvmlGpu& g : gpus) {
    auto match = std::find_if(cuda.begin(), cuda.end(), [&](const DeviceInfo& d) {
      return same_bus(g.pci_bus_id, d.pci_bus_id);
    });
    if (match == cuda.end()) {
      match = std::find_if(cuda.begin(), cuda.end(), [&](const DeviceInfo& d) {
        return !g.uuid.empty() && text::lower(g.uuid) == text::lower(d.uuid);
      });
    }
    if (match == cuda.end()) {
      throw Error(ExitCode::gpu_not_found,
                  fmt::format("GPU {} ({}, {}) is not visible to CUDA ({} CUDA device{} visible)",
                              g.index, g.name, g.pci_bus_id.empty() ? g.uuid : g.pci_bus_id,
                              cuda.size(), cuda.size() == 1 ? "" : "s"),
                  "check CUDA_VISIBLE_DEVICES, or pick visible GPUs with -i");
    }
    ordinals.push_back(match->ordinal);
  }
  return ordinals;
}

}  // namespace gpuclk::bench
