// libFuzzer target: the kubelet's pod-resources answer (host::decode_list_pod_resources), bytes
// from a socket the service does not own: it decodes or throws Error, within its bounds.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "host/pod_resources.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto pods = gpuclk::host::decode_list_pod_resources(
        std::string_view(reinterpret_cast<const char*>(data), size));
    if (pods.size() > gpuclk::host::kPodResourcesMaxPods) __builtin_trap();
    for (const auto& p : pods) {
      if (p.containers.size() > gpuclk::host::kPodResourcesMaxContainers) __builtin_trap();
      if (p.name.size() > gpuclk::host::kPodResourcesMaxString) __builtin_trap();
    }
  } catch (const std::runtime_error&) {
  }
  return 0;
}
