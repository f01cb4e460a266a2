// Optional entry points for dmon's memory and media columns:
// BAR1 and protected memory, media engine utilization. The model has no media work and no
// confidential computing, so these report what an H100 reports with neither (smi/smi_q.txt).
#include "abi_common.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

namespace {

constexpr unsigned long long kMiB = 1024ULL * 1024ULL;
constexpr unsigned kMediaSamplingPeriodUs = 167000;  // what the driver reports for its engines

nvmlReturn_t idle_engine(unsigned int* percent, unsigned int* sampling_period_us) {
  *percent = 0;
  *sampling_period_us = kMediaSamplingPeriodUs;
  return NVML_SUCCESS;
}

}  // namespace

namespace gpuclk::sim::abi::get {

nvmlReturn_t bar1_memory_info(std::size_t i, nvmlBAR1Memory_t* bar1) {
  const NodeModel& model = Context::get().model();
  // ASSUMPTION: 1 MiB mapped by the driver, a few more while a process holds a context.
  const unsigned long long used = (model.gpu(i).dynamics.context_active ? 5 : 1) * kMiB;
  bar1->bar1Total = model.config(i).spec->bar1_total_bytes;
  bar1->bar1Used = std::min(used, bar1->bar1Total);
  bar1->bar1Free = bar1->bar1Total - bar1->bar1Used;
  return NVML_SUCCESS;
}

nvmlReturn_t protected_memory_usage(std::size_t, nvmlMemory_t* memory) {
  *memory = {0, 0, 0};  // confidential computing off: an empty protected region
  return NVML_SUCCESS;
}

nvmlReturn_t encoder_utilization(std::size_t, unsigned int* percent,
                                 unsigned int* sampling_period_us) {
  return idle_engine(percent, sampling_period_us);
}

nvmlReturn_t decoder_utilization(std::size_t, unsigned int* percent,
                                 unsigned int* sampling_period_us) {
  return idle_engine(percent, sampling_period_us);
}

nvmlReturn_t jpg_utilization(std::size_t, unsigned int* percent, unsigned int* sampling_period_us) {
  return idle_engine(percent, sampling_period_us);
}

nvmlReturn_t ofa_utilization(std::size_t, unsigned int* percent, unsigned int* sampling_period_us) {
  return idle_engine(percent, sampling_period_us);
}

}  // namespace gpuclk::sim::abi::get
