// Entry points of a build without CUDA: each says how to get a build that has it.
#include <string>

#include "bench/p2p.h"
#include "bench/workload.h"
#include "util/error.h"

namespace gpuclk::bench {

namespace {

#ifndef GPUCLK_WITH_CUDA_SETTING
#define GPUCLK_WITH_CUDA_SETTING "OFF"
#endif

// Why this build has no CUDA: the CMake option as configured (AUTO: nvcc was not found).
std::string why_not_built() {
  const std::string setting = GPUCLK_WITH_CUDA_SETTING;
  if (setting == "AUTO") return "GPUCLK_WITH_CUDA=AUTO found no nvcc when it was configured";
  return "configured with GPUCLK_WITH_CUDA=" + setting;
}

[[noreturn]] void throw_not_built() {
  throw Error(
      ExitCode::not_supported,
      "gpuclk was built without CUDA (" + why_not_built() + "): gpuclk bench has no kernels to run",
      "install the CUDA toolkit (nvcc, e.g. /usr/local/cuda/bin/nvcc) and reconfigure "
      "with -DGPUCLK_WITH_CUDA=ON (cmake --preset release -DGPUCLK_WITH_CUDA=ON), then "
      "build again");
}

}  // namespace

Result run(const WorkloadSpec&, int, const RunOptions&) { throw_not_built(); }

std::vector<DeviceOutcome> run_concurrent(const WorkloadSpec&, std::span<const int>,
                                          const RunOptions&) {
  throw_not_built();
}

int device_count() { throw_not_built(); }

DeviceInfo device_info(int) { throw_not_built(); }

bool built_with_cuda() { return false; }

int cuda_runtime_version() { return 0; }

namespace p2p {

bool can_access_peer(int, int) { throw_not_built(); }

PeerResult measure_peer(int, int, const Options&, const std::function<void()>&) {
  throw_not_built();
}

HostResult measure_host(int, std::optional<int>, bool, const Options&,
                        const std::function<void()>&) {
  throw_not_built();
}

std::vector<int> numa_nodes() { return {}; }

}  // namespace p2p

}  // namespace gpuclk::bench
