// nvmlDeviceGetFieldValues: the field ids the model can answer; every other id gets
// NOT_SUPPORTED in its own entry (the call itself succeeds, as the real library does).
#include <cmath>

#include "abi_common.h"
#include "gpu_model.h"
#include "nvlink.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

namespace {

void set_uint(nvmlFieldValue_t& v, double value) {
  v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
  v.value.uiVal = value <= 0 ? 0u : static_cast<unsigned int>(std::llround(value));
}

void set_ull(nvmlFieldValue_t& v, unsigned long long value) {
  v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
  v.value.ullVal = value;
}

// NVLink fields: NOT_SUPPORTED on a GPU without links, INVALID_ARGUMENT for a link it lacks.
nvmlReturn_t fill_nvlink_field(std::size_t i, nvmlFieldValue_t& v) {
  const NodeModel& model = Context::get().model();
  const GpuNvLink& links = model.config(i).nvlink;
  if (links.links == 0) return NVML_ERROR_NOT_SUPPORTED;
  const unsigned mbps = static_cast<unsigned>(std::lround(links.gigabytes_per_s_per_link * 1000));
  const bool all = v.scopeId == NVML_NVLINK_SCOPE_ALL;
  if (v.fieldId != NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON &&
      v.fieldId != NVML_FI_DEV_NVLINK_LINK_COUNT && !all && v.scopeId >= links.links)
    return NVML_ERROR_INVALID_ARGUMENT;
  switch (v.fieldId) {
    case NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON:
      set_uint(v, mbps);
      return NVML_SUCCESS;
    case NVML_FI_DEV_NVLINK_LINK_COUNT:
      set_uint(v, links.links);
      return NVML_SUCCESS;
    case NVML_FI_DEV_NVLINK_GET_SPEED:
      if (all) return NVML_ERROR_INVALID_ARGUMENT;
      set_uint(v, links.up(v.scopeId) ? mbps : 0);
      return NVML_SUCCESS;
    case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX:
    case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX: {
      const bool tx = v.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
      double bytes = 0;
      for (std::uint32_t k = 0; k < links.links; ++k) {
        if (all || k == v.scopeId)
          bytes += tx ? nvlink_tx_bytes(model, i, k) : nvlink_rx_bytes(model, i, k);
      }
      set_ull(v, static_cast<unsigned long long>(bytes / 1024));  // KiB, as the driver counts
      return NVML_SUCCESS;
    }
    default:
      return NVML_ERROR_NOT_SUPPORTED;
  }
}

nvmlReturn_t fill_field(std::size_t i, nvmlFieldValue_t& v) {
  const NodeModel& model = Context::get().model();
  const GpuSpec& spec = *model.config(i).spec;
  const GpuState& s = model.gpu(i);
  const GpuDynamics& d = s.dynamics;
  const unsigned id = v.fieldId;
  if (id >= NVML_FI_DEV_ECC_CURRENT && id <= NVML_FI_DEV_ECC_DBE_AGG_TOTAL) {
    if (!spec.ecc_supported) return NVML_ERROR_NOT_SUPPORTED;
    switch (id) {
      case NVML_FI_DEV_ECC_CURRENT:
      case NVML_FI_DEV_ECC_PENDING:
        set_uint(v, 1);
        break;
      case NVML_FI_DEV_ECC_SBE_VOL_TOTAL:
        set_ull(v, d.ecc_corrected_volatile);
        break;
      case NVML_FI_DEV_ECC_DBE_VOL_TOTAL:
        set_ull(v, d.ecc_uncorrected_volatile);
        break;
      case NVML_FI_DEV_ECC_SBE_AGG_TOTAL:
        set_ull(v, d.ecc_corrected_aggregate);
        break;
      case NVML_FI_DEV_ECC_DBE_AGG_TOTAL:
        set_ull(v, d.ecc_uncorrected_aggregate);
        break;
    }
    return NVML_SUCCESS;
  }
  if (id >= NVML_FI_DEV_PERF_POLICY_POWER && id <= NVML_FI_DEV_PERF_POLICY_TOTAL_BASE_CLOCKS) {
    set_ull(v, d.violation_ns[id - NVML_FI_DEV_PERF_POLICY_POWER]);  // same order as Policy
    return NVML_SUCCESS;
  }
  switch (id) {
    case NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON:
    case NVML_FI_DEV_NVLINK_LINK_COUNT:
    case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX:
    case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX:
    case NVML_FI_DEV_NVLINK_GET_SPEED:
      return fill_nvlink_field(i, v);
    case NVML_FI_DEV_PCIE_REPLAY_COUNTER:
      set_ull(v, d.pcie_replays);  // scenario key pcie_replays_per_hour; 0 on a clean link
      return NVML_SUCCESS;
    case NVML_FI_DEV_MEMORY_TEMP:
      set_uint(v, d.sink_c + spec.memory_temp_offset_c);
      return NVML_SUCCESS;
    case NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION:
    case NVML_FI_DEV_ENERGY:
      set_ull(v, static_cast<unsigned long long>(d.energy_j * 1000));
      return NVML_SUCCESS;
    // Scopes as the H100 answers them: the GPU's average and instant power; the memory's
    // average only; no module (that is Grace Hopper's).
    case NVML_FI_DEV_POWER_AVERAGE:
      if (!spec.power_average_supported) return NVML_ERROR_NOT_SUPPORTED;
      if (v.scopeId == NVML_POWER_SCOPE_MEMORY) {
        if (!spec.memory_power_supported) return NVML_ERROR_NOT_SUPPORTED;
        set_uint(v, average_memory_power_w(s) * 1000);
        return NVML_SUCCESS;
      }
      if (v.scopeId != NVML_POWER_SCOPE_GPU) return NVML_ERROR_NOT_SUPPORTED;
      set_uint(v, average_power_w(s) * 1000);
      return NVML_SUCCESS;
    case NVML_FI_DEV_POWER_INSTANT:
      if (v.scopeId != NVML_POWER_SCOPE_GPU) return NVML_ERROR_NOT_SUPPORTED;
      set_uint(v, d.power_w * 1000);
      return NVML_SUCCESS;
    case NVML_FI_DEV_POWER_MIN_LIMIT:
      set_uint(v, spec.power_limit_min_w * 1000);
      return NVML_SUCCESS;
    case NVML_FI_DEV_POWER_MAX_LIMIT:
      set_uint(v, spec.power_limit_max_w * 1000);
      return NVML_SUCCESS;
    case NVML_FI_DEV_POWER_DEFAULT_LIMIT:
      set_uint(v, spec.power_limit_default_w * 1000);
      return NVML_SUCCESS;
    case NVML_FI_DEV_POWER_CURRENT_LIMIT:
    case NVML_FI_DEV_POWER_REQUESTED_LIMIT:
      set_uint(v, s.settings.power_limit_mw);
      return NVML_SUCCESS;
    default:
      return NVML_ERROR_NOT_SUPPORTED;
  }
}

}  // namespace

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count,
                                                        nvmlFieldValue_t* values) {
  return with_gpu(device, __func__, Access::telemetry, [&](std::size_t i) {
    if (!values || count <= 0) return NVML_ERROR_INVALID_ARGUMENT;
    Context& c = Context::get();
    const long long now_us = c.timestamp_us(c.model().now_s());
    for (int k = 0; k < count; ++k) {
      nvmlFieldValue_t& v = values[k];
      v.timestamp = now_us;
      v.latencyUsec = 0;
      v.nvmlReturn = fill_field(i, v);
    }
    return NVML_SUCCESS;
  });
}
