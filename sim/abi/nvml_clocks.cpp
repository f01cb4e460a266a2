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

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                                      unsigned int* clock) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!clock) return NVML_ERROR_INVALID_ARGUMENT;
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
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                                         unsigned int* clock) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!clock) return NVML_ERROR_INVALID_ARGUMENT;
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
  });
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

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t device,
                                                              nvmlClockType_t type,
                                                              unsigned int* clock) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    const GpuSettings& s = state_of(i).settings;
    return app_clock_of(type, s.app_sm_mhz, s.app_memory_mhz, clock);
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t device,
                                                                     nvmlClockType_t type,
                                                                     unsigned int* clock) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    const GpuSpec& spec = spec_of(i);
    return app_clock_of(type, spec.default_app_sm_mhz, spec.default_app_memory_mhz, clock);
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetMaxCustomerBoostClock(nvmlDevice_t device,
                                                                  nvmlClockType_t type,
                                                                  unsigned int* clock) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!clock) return NVML_ERROR_INVALID_ARGUMENT;
    if (is_sm(type)) {
      *clock = spec_of(i).sm_max_mhz;
      return NVML_SUCCESS;
    }
    if (type == NVML_CLOCK_MEM || type == NVML_CLOCK_VIDEO) return NVML_ERROR_NOT_SUPPORTED;
    return NVML_ERROR_INVALID_ARGUMENT;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device,
                                                                  unsigned int* count,
                                                                  unsigned int* clocks) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    return copy_array(spec_of(i).memory_clocks_mhz, count, clocks);
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device,
                                                                    unsigned int memory_clock,
                                                                    unsigned int* count,
                                                                    unsigned int* clocks) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    const GpuSpec& spec = spec_of(i);
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    if (!spec.is_supported_memory_clock(memory_clock)) return NVML_ERROR_NOT_FOUND;
    return copy_array(spec.supported_sm_clocks(), count, clocks);
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetMinMaxClockOfPState(nvmlDevice_t device,
                                                                nvmlClockType_t type,
                                                                nvmlPstates_t pstate,
                                                                unsigned int* min,
                                                                unsigned int* max) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t i) {
    if (!min || !max) return NVML_ERROR_INVALID_ARGUMENT;
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
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device,
                                                             nvmlPstates_t* pstate) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t) {
    if (!pstate) return NVML_ERROR_INVALID_ARGUMENT;
    *pstate = NVML_PSTATE_0;  // data-centre parts report P0 whenever the driver is loaded
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                                      unsigned long long* reasons) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!reasons) return NVML_ERROR_INVALID_ARGUMENT;
    *reasons = state_of(i).dynamics.event_reasons;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t
nvmlDeviceGetSupportedClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
  return with_gpu(device, __func__, Access::identity, [&](std::size_t) {
    if (!reasons) return NVML_ERROR_INVALID_ARGUMENT;
    *reasons = reason::all_supported;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device,
                                                            nvmlPerfPolicyType_t policy,
                                                            nvmlViolationTime_t* time) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!time) return NVML_ERROR_INVALID_ARGUMENT;
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
  });
}
