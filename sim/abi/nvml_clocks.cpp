// Clocks, supported clocks, P-state, clock event reasons and their violation counters.
#include <cmath>
#include <vector>

#include "abi_common.h"
#include "gpu_model.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

namespace {

const GpuSpec& spec_of(std::size_t i) { return *Context::get().model().config(i).spec; }
const GpuState& state_of(std::size_t i) { return Context::get().model().gpu(i); }

// The video clock follows the SM clock between its idle and max values.
unsigned video_clock(const GpuSpec& spec, unsigned sm_mhz) {
  if (spec.sm_max_mhz == spec.sm_min_mhz) return spec.video_max_mhz;
  const double x =
      static_cast<double>(sm_mhz - spec.sm_min_mhz) / (spec.sm_max_mhz - spec.sm_min_mhz);
  return static_cast<unsigned>(
      std::lround(spec.video_idle_mhz + x * (spec.video_max_mhz - spec.video_idle_mhz)));
}

bool is_sm(nvmlClockType_t type) { return type == NVML_CLOCK_GRAPHICS || type == NVML_CLOCK_SM; }

}  // namespace

namespace gpuclk::sim::abi::get {

nvmlReturn_t clock_info(std::size_t i, nvmlClockType_t type, unsigned int* clock) {
  const GpuDynamics& d = state_of(i).dynamics;
  if (is_sm(type)) {
    *clock = d.sm_mhz;
  } else if (type == NVML_CLOCK_MEM) {
    *clock = d.memory_mhz;
  } else if (type == NVML_CLOCK_VIDEO) {
    *clock = video_clock(spec_of(i), d.sm_mhz);
  } else {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  return NVML_SUCCESS;
}

nvmlReturn_t max_clock_info(std::size_t i, nvmlClockType_t type, unsigned int* clock) {
  const GpuSpec& spec = spec_of(i);
  if (is_sm(type)) {
    *clock = spec.sm_max_mhz;
  } else if (type == NVML_CLOCK_MEM) {
    *clock = spec.max_memory_mhz();
  } else if (type == NVML_CLOCK_VIDEO) {
    *clock = spec.video_max_mhz;
  } else {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  return NVML_SUCCESS;
}

namespace {

// Application clocks exist for the SM/graphics and memory domains only; video has none.
nvmlReturn_t app_clock_of(nvmlClockType_t type, unsigned sm_mhz, unsigned memory_mhz,
                          unsigned int* clock) {
  if (!clock) return NVML_ERROR_INVALID_ARGUMENT;
  if (is_sm(type)) {
    *clock = sm_mhz;
  } else if (type == NVML_CLOCK_MEM) {
    *clock = memory_mhz;
  } else if (type == NVML_CLOCK_VIDEO) {
    return NVML_ERROR_NOT_SUPPORTED;
  } else {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  return NVML_SUCCESS;
}

}  // namespace

nvmlReturn_t applications_clock(std::size_t i, nvmlClockType_t type, unsigned int* clock) {
  const GpuSettings& s = state_of(i).settings;
  return app_clock_of(type, s.app_sm_mhz, s.app_memory_mhz, clock);
}

nvmlReturn_t default_applications_clock(std::size_t i, nvmlClockType_t type, unsigned int* clock) {
  const GpuSpec& spec = spec_of(i);
  return app_clock_of(type, spec.default_app_sm_mhz, spec.default_app_memory_mhz, clock);
}

nvmlReturn_t max_customer_boost_clock(std::size_t i, nvmlClockType_t type, unsigned int* clock) {
  if (is_sm(type)) {
    *clock = spec_of(i).sm_max_mhz;
    return NVML_SUCCESS;
  }
  if (type == NVML_CLOCK_MEM || type == NVML_CLOCK_VIDEO) return NVML_ERROR_NOT_SUPPORTED;
  return NVML_ERROR_INVALID_ARGUMENT;
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
  if (is_sm(type)) {
    *min = spec.sm_min_mhz;
    *max = spec.sm_max_mhz;
  } else if (type == NVML_CLOCK_MEM) {
    *min = spec.min_memory_mhz();
    *max = spec.max_memory_mhz();
  } else if (type == NVML_CLOCK_VIDEO) {
    *min = spec.video_idle_mhz;
    *max = spec.video_max_mhz;
  } else {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  return NVML_SUCCESS;
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
  int slot = -1;
  switch (policy) {
    case NVML_PERF_POLICY_POWER:
      slot = static_cast<int>(Policy::power);
      break;
    case NVML_PERF_POLICY_THERMAL:
      slot = static_cast<int>(Policy::thermal);
      break;
    case NVML_PERF_POLICY_SYNC_BOOST:
      slot = static_cast<int>(Policy::sync_boost);
      break;
    case NVML_PERF_POLICY_BOARD_LIMIT:
      slot = static_cast<int>(Policy::board_limit);
      break;
    case NVML_PERF_POLICY_LOW_UTILIZATION:
      slot = static_cast<int>(Policy::low_utilization);
      break;
    case NVML_PERF_POLICY_RELIABILITY:
      slot = static_cast<int>(Policy::reliability);
      break;
    case NVML_PERF_POLICY_TOTAL_APP_CLOCKS:
      slot = static_cast<int>(Policy::total_app_clocks);
      break;
    case NVML_PERF_POLICY_TOTAL_BASE_CLOCKS:
      slot = static_cast<int>(Policy::total_base_clocks);
      break;
  }
  if (slot < 0) return NVML_ERROR_INVALID_ARGUMENT;
  Context& c = Context::get();
  time->referenceTime = static_cast<unsigned long long>(c.timestamp_us(c.model().now_s()));
  time->violationTime = state_of(i).dynamics.violation_ns[slot];
  return NVML_SUCCESS;
}

}  // namespace gpuclk::sim::abi::get
