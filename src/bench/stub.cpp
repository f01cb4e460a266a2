// Entry points of a build without CUDA: each says how to get a build that has it.
#include "bench/workload.h"
#include "util/error.h"

namespace gpuclk::bench {

namespace {
[[noreturn]] void throw_not_built() {
  throw Error(ExitCode::not_supported,
              "gpuclk was built without CUDA; install the CUDA toolkit (nvcc) and reconfigure "
              "with -DGPUCLK_WITH_CUDA=ON");
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

}  // namespace gpuclk::bench
