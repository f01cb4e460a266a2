// Clocks, supported clocks, P-state, clock event reasons and their violation counters.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <vector>

#include "abi_common.h"
#include "gpu_model.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

namespace {

// The video clock follows the SM clock between its idle and max values.
unsigned video_clock(const GpuSpec& spec, unsigned sm_mhz) {
  if (spec.sm_max_mhz == spec.sm_min_mhz) return spec.video_max_mhz;
  const double x =
      static_cast<double>(sm_mhz - spec.sm_min_mhz) / (spec.sm_max_mhz - spec.sm_min_mhz);
  return static_cast<unsigned>(
      std::lround(spec.video_idle_mhz + x * (spec.video_max_mhz - spec.video_idle_mhz)));
}

bool is_sm(nvmlClockType_t type) { return type == NVML_CLOCK_GRAPHICS || type == NVML_CLOCK_SM; }

// One value per clock domain (SM and graphics share one); nullopt: the domain has none
// (NOT_SUPPORTED). Every per-domain getter below answers through it.
struct PerDomain {
  std::optional<unsigned> sm;
  std::optional<unsigned> memory;
  std::optional<unsigned> video;
};

nvmlReturn_t pick(nvmlClockType_t type, const PerDomain& values, unsigned int* clock) {
  const std::optional<unsigned>* value = nullptr;
  if (is_sm(type)) {
    value = &values.sm;
  } else if (type == NVML_CLOCK_MEM) {
    value = &values.memory;
  } else if (type == NVML_CLOCK_VIDEO) {
    value = &values.video;
  } else {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (!*value) return NVML_ERROR_NOT_SUPPORTED;
  *clock = **value;
  return NVML_SUCCESS;
}

}  // namespace

namespace gpuclk::sim::abi::get {

nvmlReturn_t clock_info(std::size_t i, nvmlClockType_t type, unsigned int* clock) {
  const GpuDynamics& d = state_of(i).dynamics;
  return pick(type, {d.sm_mhz, d.memory_mhz, video_clock(spec_of(i), d.sm_mhz)}, clock);
}

nvmlReturn_t max_clock_info(std::size_t i, nvmlClockType_t type, unsigned int* clock) {
  const GpuSpec& spec = spec_of(i);
  return pick(type, {spec.sm_max_mhz, spec.max_memory_mhz(), spec.video_max_mhz}, clock);
}

// Application clocks exist for the SM/graphics and memory domains only; video has none.
nvmlReturn_t applications_clock(std::size_t i, nvmlClockType_t type, unsigned int* clock) {
  const GpuSettings& s = state_of(i).settings;
  return pick(type, {s.app_sm_mhz, s.app_memory_mhz, std::nullopt}, clock);
}

nvmlReturn_t default_applications_clock(std::size_t i, nvmlClockType_t type, unsigned int* clock) {
  const GpuSpec& spec = spec_of(i);
  return pick(type, {spec.default_app_sm_mhz, spec.default_app_memory_mhz, std::nullopt}, clock);
}

nvmlReturn_t max_customer_boost_clock(std::size_t i, nvmlClockType_t type, unsigned int* clock) {
  return pick(type, {spec_of(i).sm_max_mhz, std::nullopt, std::nullopt}, clock);
}

nvmlReturn_t supported_memory_clocks(std::size_t i, unsigned int* count, unsigned int* clocks) {
  return copy_array(spec_of(i).memory_clocks_mhz, count, clocks);
}

nvmlReturn_t supported_graphics_clocks(std::size_t i, unsigned int memory_clock,
                                       unsigned int* count, unsigned int* clocks) {
  const GpuSpec& spec = spec_of(i);
  if (!spec.is_supported_memory_clock(memory_clock)) return NVML_ERROR_NOT_FOUND;
  return copy_array(spec.supported_sm_clocks(), count, clocks);
}

nvmlReturn_t min_max_clock_of_pstate(std::size_t i, nvmlClockType_t type, nvmlPstates_t pstate,
                                     unsigned int* min, unsigned int* max) {
  if (pstate != NVML_PSTATE_0) return NVML_ERROR_NOT_SUPPORTED;  // the model has P0 only
  const GpuSpec& spec = spec_of(i);
  const nvmlReturn_t status =
      pick(type, {spec.sm_min_mhz, spec.min_memory_mhz(), spec.video_idle_mhz}, min);
  if (status != NVML_SUCCESS) return status;
  return pick(type, {spec.sm_max_mhz, spec.max_memory_mhz(), spec.video_max_mhz}, max);
}

nvmlReturn_t performance_state(std::size_t, nvmlPstates_t* pstate) {
  *pstate = NVML_PSTATE_0;  // data-centre parts report P0 whenever the driver is loaded
  return NVML_SUCCESS;
}

nvmlReturn_t current_clocks_event_reasons(std::size_t i, unsigned long long* reasons) {
  *reasons = state_of(i).dynamics.event_reasons;
  return NVML_SUCCESS;
}

nvmlReturn_t supported_clocks_event_reasons(std::size_t, unsigned long long* reasons) {
  *reasons = reason::all_supported;
  return NVML_SUCCESS;
}

nvmlReturn_t violation_status(std::size_t i, nvmlPerfPolicyType_t policy,
                              nvmlViolationTime_t* time) {
  // NVML's policy numbers (0..5, then 10 and 11) in the model's Policy order.
  static constexpr nvmlPerfPolicyType_t kPolicies[] = {NVML_PERF_POLICY_POWER,
                                                       NVML_PERF_POLICY_THERMAL,
                                                       NVML_PERF_POLICY_SYNC_BOOST,
                                                       NVML_PERF_POLICY_BOARD_LIMIT,
                                                       NVML_PERF_POLICY_LOW_UTILIZATION,
                                                       NVML_PERF_POLICY_RELIABILITY,
                                                       NVML_PERF_POLICY_TOTAL_APP_CLOCKS,
                                                       NVML_PERF_POLICY_TOTAL_BASE_CLOCKS};
  static_assert(std::size(kPolicies) == static_cast<std::size_t>(Policy::count));
  const auto* found = std::find(std::begin(kPolicies), std::end(kPolicies), policy);
  if (found == std::end(kPolicies)) return NVML_ERROR_INVALID_ARGUMENT;
  const auto slot = static_cast<std::size_t>(found - std::begin(kPolicies));
  Context& c = Context::get();
  time->referenceTime = static_cast<unsigned long long>(c.timestamp_us(c.model().now_s()));
  time->violationTime = state_of(i).dynamics.violation_ns[slot];
  return NVML_SUCCESS;
}

}  // namespace gpuclk::sim::abi::get
