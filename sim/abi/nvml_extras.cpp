// Optional entry points for dmon's memory and media columns:
// BAR1 and protected memory, media engine utilization. The model has no media work and no
// confidential computing, so these report what an H100 reports with neither (smi/smi_q.txt).
#include "abi_common.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

namespace {

constexpr unsigned long long kMiB = 1024ULL * 1024ULL;
constexpr unsigned kMediaSamplingPeriodUs = 167000;  // what the driver reports for its engines

nvmlReturn_t idle_engine(nvmlDevice_t device, const char* function, unsigned int* percent,
                         unsigned int* sampling_period_us) {
  return with_gpu(device, function, Access::telemetry, [&](std::size_t) {
    if (!percent || !sampling_period_us) return NVML_ERROR_INVALID_ARGUMENT;
    *percent = 0;
    *sampling_period_us = kMediaSamplingPeriodUs;
    return NVML_SUCCESS;
  });
}

}  // namespace

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device,
                                                           nvmlBAR1Memory_t* bar1) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!bar1) return NVML_ERROR_INVALID_ARGUMENT;
    const NodeModel& model = Context::get().model();
    // ASSUMPTION: 1 MiB mapped by the driver, a few more while a process holds a context.
    const unsigned long long used = (model.gpu(i).dynamics.context_active ? 5 : 1) * kMiB;
    bar1->bar1Total = model.config(i).spec->bar1_total_bytes;
    bar1->bar1Used = std::min(used, bar1->bar1Total);
    bar1->bar1Free = bar1->bar1Total - bar1->bar1Used;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetConfComputeProtectedMemoryUsage(nvmlDevice_t device,
                                                                            nvmlMemory_t* memory) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t) {
    if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
    *memory = {0, 0, 0};  // confidential computing off: an empty protected region
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device,
                                                               unsigned int* percent,
                                                               unsigned int* sampling_period_us) {
  return idle_engine(device, __func__, percent, sampling_period_us);
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device,
                                                               unsigned int* percent,
                                                               unsigned int* sampling_period_us) {
  return idle_engine(device, __func__, percent, sampling_period_us);
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetJpgUtilization(nvmlDevice_t device,
                                                           unsigned int* percent,
                                                           unsigned int* sampling_period_us) {
  return idle_engine(device, __func__, percent, sampling_period_us);
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetOfaUtilization(nvmlDevice_t device,
                                                           unsigned int* percent,
                                                           unsigned int* sampling_period_us) {
  return idle_engine(device, __func__, percent, sampling_period_us);
}
