// gpuclk_sim_read_cost [LIB]: what a getter costs through dlopen, as gpuclk's sampler pays it —
// nvmlInit_v2, then a clock read plus a power read, round-robin over the GPUs. Compare with the
// H100's 0.66 µs for the same pair (docs/calibration.md). Uses the scenario and state of
// the usual environment variables (GPUCLK_SIM_*).
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "nvml/nvml_abi.h"

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : GPUCLK_SIM_LIBRARY;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "gpuclk_sim_read_cost: %s\n", dlerror());
    return 2;
  }
  using Init = nvmlReturn_t (*)();
  using Count = nvmlReturn_t (*)(unsigned*);
  using Handle = nvmlReturn_t (*)(unsigned, nvmlDevice_t*);
  using Clock = nvmlReturn_t (*)(nvmlDevice_t, nvmlClockType_t, unsigned*);
  using Power = nvmlReturn_t (*)(nvmlDevice_t, unsigned*);
  auto init = reinterpret_cast<Init>(dlsym(lib, "nvmlInit_v2"));
  auto count = reinterpret_cast<Count>(dlsym(lib, "nvmlDeviceGetCount_v2"));
  auto handle = reinterpret_cast<Handle>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  auto clock = reinterpret_cast<Clock>(dlsym(lib, "nvmlDeviceGetClockInfo"));
  auto power = reinterpret_cast<Power>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
  using steady = std::chrono::steady_clock;
  const auto t0 = steady::now();
  if (init() != NVML_SUCCESS) return 1;
  const auto t1 = steady::now();
  unsigned gpus = 0;
  count(&gpus);
  nvmlDevice_t devices[64] = {};
  for (unsigned i = 0; i < gpus && i < 64; ++i) handle(i, &devices[i]);
  constexpr int kPairs = 200000;
  unsigned value = 0;
  const auto t2 = steady::now();
  for (int i = 0; i < kPairs; ++i) {
    clock(devices[i % gpus], NVML_CLOCK_SM, &value);
    power(devices[i % gpus], &value);
  }
  const auto t3 = steady::now();
  std::printf("nvmlInit_v2: %.2f ms\nclock + power read: %.3f us per pair (%u GPUs)\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::micro>(t3 - t2).count() / kPairs, gpus);
  return 0;
}
