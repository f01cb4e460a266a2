// Device selection as nvidia-smi's -i: comma-separated indexes, UUIDs (or a unique prefix of
// one, "GPU-cba7…") and PCI bus ids in any of the usual spellings ("00000000:00:06.0",
// "0000:00:06.0", "00:06.0").
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuclk::gpu {

struct DeviceKey {
  unsigned index;
  std::string uuid;
  std::string bus_id;  // empty when unknown
};

// The largest GPU index a selection may name (NVML counts GPUs in an unsigned int; no host has
// more than a few dozen).
inline constexpr unsigned kMaxGpuIndex = 4095;

// Positions in `keys` that `spec` selects, in the order given, without duplicates. Throws Error:
// exit 2 for an empty spec (never "all": an unset variable must not select every GPU), a
// malformed item or an index beyond kMaxGpuIndex; exit 6 for one that matches no GPU (the message
// lists what is there).
std::vector<std::size_t> select_devices(std::string_view spec, const std::vector<DeviceKey>& keys);

// The checks of select_devices that need no GPU: throws Error (exit 2) for an empty or too long
// spec, an empty or malformed item, an index beyond kMaxGpuIndex. Context runs it on -i before a
// command's first effect, so a bad -i is refused before the journal is locked or NVML loaded.
// Only when it refuses, `present` (if given) is asked for this node's GPUs, so that the hint names
// the indexes, UUIDs and bus ids there are; it may throw or answer nullopt (the forms only).
void check_selection(std::string_view spec,
                     const std::function<std::optional<std::vector<DeviceKey>>()>& present = {});

// "GPUs here: 0 (GPU-…, 00000000:18:00.0); 1 (…)": what a selection may name on this node.
std::string available_gpus(const std::vector<DeviceKey>& keys);

// Normalizes a PCI bus id to "DDDDDDDD:BB:DD.F" (upper-case hex); empty if not a bus id.
std::string normalize_bus_id(std::string_view text);

}  // namespace gpuclk::gpu
