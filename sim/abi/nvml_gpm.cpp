// GPM (Hopper and later): a sample snapshots the GPU's activity integrals; metrics are the
// difference between two samples over the simulated time between them.
#include <limits>
#include <new>

#include "abi_common.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

struct nvmlGpmSample_st {
  std::uint32_t magic;
  bool filled;
  std::size_t gpu;
  double time_s;
  double activity_seconds[static_cast<int>(Activity::count)];
};

namespace {

constexpr std::uint32_t kSampleMagic = 0x47504d53;  // "GPMS"
constexpr unsigned kMaxMetrics = 98;                // the real library's NVML_GPM_METRIC_MAX

struct MetricInfo {
  unsigned id;
  Activity activity;
  const char* short_name;
  const char* long_name;
};

constexpr MetricInfo kMetrics[] = {
    {NVML_GPM_METRIC_GRAPHICS_UTIL, Activity::graphics, "gr_util", "graphics utilization"},
    {NVML_GPM_METRIC_SM_UTIL, Activity::sm_active, "sm_util", "SM utilization"},
    {NVML_GPM_METRIC_SM_OCCUPANCY, Activity::sm_occupancy, "sm_occupancy", "SM occupancy"},
    {NVML_GPM_METRIC_INTEGER_UTIL, Activity::integer, "integer_util", "integer utilization"},
    {NVML_GPM_METRIC_ANY_TENSOR_UTIL, Activity::tensor, "any_tensor_util",
     "any tensor utilization"},
    {NVML_GPM_METRIC_DFMA_TENSOR_UTIL, Activity::dfma_tensor, "dfma_tensor_util",
     "DFMA tensor utilization"},
    {NVML_GPM_METRIC_HMMA_TENSOR_UTIL, Activity::hmma_tensor, "hmma_tensor_util",
     "HMMA tensor utilization"},
    {NVML_GPM_METRIC_IMMA_TENSOR_UTIL, Activity::imma_tensor, "imma_tensor_util",
     "IMMA tensor utilization"},
    {NVML_GPM_METRIC_DRAM_BW_UTIL, Activity::dram, "dram_bw_util", "DRAM bandwidth utilization"},
    {NVML_GPM_METRIC_FP64_UTIL, Activity::fp64, "fp64_util", "FP64 utilization"},
    {NVML_GPM_METRIC_FP32_UTIL, Activity::fp32, "fp32_util", "FP32 utilization"},
    {NVML_GPM_METRIC_FP16_UTIL, Activity::fp16, "fp16_util", "FP16 utilization"},
};

bool valid(const nvmlGpmSample_st* s) { return s && s->magic == kSampleMagic; }

}  // namespace

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device,
                                                         nvmlGpmSupport_t* support) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!support) return NVML_ERROR_INVALID_ARGUMENT;
    if (support->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    support->isSupportedDevice = Context::get().model().config(i).spec->gpm_supported ? 1 : 0;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
  Context& context = Context::get();
  std::lock_guard<std::recursive_mutex> guard(context.mutex());
  if (!context.initialized()) return NVML_ERROR_UNINITIALIZED;
  if (!sample) return NVML_ERROR_INVALID_ARGUMENT;
  auto* s = new (std::nothrow) nvmlGpmSample_st{};
  if (!s) return NVML_ERROR_MEMORY;
  s->magic = kSampleMagic;
  *sample = s;
  return NVML_SUCCESS;
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
  if (!valid(sample)) return NVML_ERROR_INVALID_ARGUMENT;
  sample->magic = 0;
  delete sample;
  return NVML_SUCCESS;
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t sample) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!valid(sample)) return NVML_ERROR_INVALID_ARGUMENT;
    const NodeModel& model = Context::get().model();
    if (!model.config(i).spec->gpm_supported) return NVML_ERROR_NOT_SUPPORTED;
    sample->filled = true;
    sample->gpu = i;
    sample->time_s = model.now_s();
    std::memcpy(sample->activity_seconds, model.gpu(i).dynamics.activity_seconds,
                sizeof sample->activity_seconds);
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* metrics) {
  Context& context = Context::get();
  std::lock_guard<std::recursive_mutex> guard(context.mutex());
  if (!context.initialized()) return NVML_ERROR_UNINITIALIZED;
  if (!metrics) return NVML_ERROR_INVALID_ARGUMENT;
  if (metrics->version != NVML_GPM_METRICS_GET_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  const nvmlGpmSample_st* a = metrics->sample1;
  const nvmlGpmSample_st* b = metrics->sample2;
  if (!valid(a) || !valid(b) || !a->filled || !b->filled || a->gpu != b->gpu)
    return NVML_ERROR_INVALID_ARGUMENT;
  if (metrics->numMetrics == 0 || metrics->numMetrics > kMaxMetrics)
    return NVML_ERROR_INVALID_ARGUMENT;
  if (context.model().gpu(a->gpu).dynamics.lost) return NVML_ERROR_GPU_IS_LOST;
  const double dt = b->time_s - a->time_s;
  if (dt < 0) return NVML_ERROR_INVALID_ARGUMENT;  // the two samples must be in order
  // Two samples of one model tick hold the same counters. The H100 answers such a pair (its
  // 20 ms windows, now and then) with success and no value (SM activity 0, DRAM bandwidth NaN),
  // not an error: every metric is NaN here, which gpuclk keeps as a window still open.
  const bool advanced = dt > 0;
  for (unsigned k = 0; k < metrics->numMetrics; ++k) {
    nvmlGpmMetric_t& m = metrics->metrics[k];
    m.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    m.value = 0;
    m.metricInfo = {nullptr, nullptr, nullptr};
    for (const MetricInfo& info : kMetrics) {
      if (info.id != m.metricId) continue;
      const int slot = static_cast<int>(info.activity);
      m.value = advanced ? std::clamp(
                               100.0 * (b->activity_seconds[slot] - a->activity_seconds[slot]) / dt,
                               0.0, 100.0)
                         : std::numeric_limits<double>::quiet_NaN();
      m.nvmlReturn = NVML_SUCCESS;
      m.metricInfo.shortName = const_cast<char*>(info.short_name);
      m.metricInfo.longName = const_cast<char*>(info.long_name);
      m.metricInfo.unit = const_cast<char*>("%");
    }
  }
  return NVML_SUCCESS;
}
