#include "gpu/gpm.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "gpu/device.h"
#include "nvml/api.h"

namespace gpuclk::gpu {
namespace {

using nvml::Api;

// The metrics gpuclk reports, in the order of the request array.
constexpr nvmlGpmMetricId_t kMetricIds[] = {
    NVML_GPM_METRIC_GRAPHICS_UTIL,   NVML_GPM_METRIC_SM_UTIL,      NVML_GPM_METRIC_SM_OCCUPANCY,
    NVML_GPM_METRIC_ANY_TENSOR_UTIL, NVML_GPM_METRIC_DRAM_BW_UTIL, NVML_GPM_METRIC_FP64_UTIL,
    NVML_GPM_METRIC_FP32_UTIL,       NVML_GPM_METRIC_FP16_UTIL};
constexpr unsigned kMetricCount = sizeof kMetricIds / sizeof kMetricIds[0];
static_assert(kMetricCount <= GPUCLK_GPM_METRICS_CAPACITY);

Reading<units::Ratio> metric(const nvmlGpmMetric_t& m) {
  if (m.nvmlReturn == NVML_SUCCESS) return units::from_percent(m.value);
  if (m.nvmlReturn == NVML_ERROR_NOT_SUPPORTED) return Reading<units::Ratio>::not_supported();
  return Reading<units::Ratio>::error(m.nvmlReturn);
}

}  // namespace

GpmSampler::GpmSampler(const Device& device) : device_(&device) {
  const Api& api = device.api();
  nvmlGpmSupport_t support{};
  support.version = NVML_GPM_SUPPORT_VERSION;
  if (Api::call(api.nvmlGpmQueryDeviceSupport, device.handle(), &support) != NVML_SUCCESS ||
      !support.isSupportedDevice || !api.nvmlGpmSampleGet || !api.nvmlGpmMetricsGet) {
    return;
  }
  if (Api::call(api.nvmlGpmSampleAlloc, &previous_) != NVML_SUCCESS ||
      Api::call(api.nvmlGpmSampleAlloc, &current_) != NVML_SUCCESS) {
    release();
    return;
  }
  supported_ = true;
}

GpmSampler::~GpmSampler() { release(); }

bool GpmSampler::opened_window(const Reading<GpmMetrics>& r) {
  return r.status() == ReadStatus::error && r.error_code() == NVML_ERROR_NOT_READY;
}

GpmSampler::GpmSampler(GpmSampler&& other) noexcept
    : device_(other.device_),
      supported_(std::exchange(other.supported_, false)),
      previous_(std::exchange(other.previous_, nullptr)),
      current_(std::exchange(other.current_, nullptr)),
      have_previous_(std::exchange(other.have_previous_, false)),
      kept_window_(std::exchange(other.kept_window_, false)) {}

GpmSampler& GpmSampler::operator=(GpmSampler&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    supported_ = std::exchange(other.supported_, false);
    previous_ = std::exchange(other.previous_, nullptr);
    current_ = std::exchange(other.current_, nullptr);
    have_previous_ = std::exchange(other.have_previous_, false);
    kept_window_ = std::exchange(other.kept_window_, false);
  }
  return *this;
}

void GpmSampler::release() {
  const Api& api = device_->api();
  if (previous_) Api::call(api.nvmlGpmSampleFree, previous_);
  if (current_) Api::call(api.nvmlGpmSampleFree, current_);
  previous_ = current_ = nullptr;
  supported_ = have_previous_ = false;
}

Reading<GpmMetrics> GpmSampler::take() {
  kept_window_ = false;
  if (!supported_) return Reading<GpmMetrics>::not_supported();
  const Api& api = device_->api();
  auto rc = Api::call(api.nvmlGpmSampleGet, device_->handle(), current_);
  if (rc != NVML_SUCCESS) {
    have_previous_ = false;  // a failed read breaks the window
    return Reading<GpmMetrics>::error(rc);
  }
  const bool had_window = have_previous_;
  Reading<GpmMetrics> result = Reading<GpmMetrics>::error(NVML_ERROR_NOT_READY);
  if (had_window) {
    nvmlGpmMetricsGet_t request{};
    request.version = NVML_GPM_METRICS_GET_VERSION;
    request.numMetrics = kMetricCount;
    request.sample1 = previous_;
    request.sample2 = current_;
    for (unsigned i = 0; i < kMetricCount; ++i) request.metrics[i].metricId = kMetricIds[i];
    rc = Api::call(api.nvmlGpmMetricsGet, &request);
    if (rc == NVML_SUCCESS) {
      const auto* m = request.metrics;
      const bool advanced = std::all_of(m, m + kMetricCount, [](const nvmlGpmMetric_t& x) {
        return x.nvmlReturn != NVML_SUCCESS || std::isfinite(x.value);
      });
      if (!advanced) {
        // Both samples hold the same counters: measured on the H100 with 20 ms windows, SM
        // activity 0 and DRAM bandwidth NaN. Not a reading; the window stays open.
        kept_window_ = true;
        return Reading<GpmMetrics>::error(NVML_ERROR_NOT_READY);
      }
      result = GpmMetrics{metric(m[0]), metric(m[1]), metric(m[2]), metric(m[3]),
                          metric(m[4]), metric(m[5]), metric(m[6]), metric(m[7])};
    } else {
      result = Reading<GpmMetrics>::error(rc);
    }
  }
  // The sample just read starts the next window.
  std::swap(previous_, current_);
  have_previous_ = true;
  return result;
}

}  // namespace gpuclk::gpu
