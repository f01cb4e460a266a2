// Memory and link health as nvidia-smi -q's "Retired Pages", "Remapped Rows" and "Replays Since
// Reset" read it, and the driver's sample buffers (nvmlDeviceGetSamples). The counters come from
// the scenario's ECC, retired-page and PCIe replay settings (sim/model/faults.cpp), so a fault
// scenario shows in every client.
#include "abi_common.h"
#include "faults.h"
#include "gpu_model.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

namespace {

const GpuDynamics& dynamics_of(std::size_t i) { return Context::get().model().gpu(i).dynamics; }

// Rows remapped after uncorrectable DRAM errors: one row per error (HBM remaps the failing row
// into its bank's spare rows; correctable errors are not remapped).
unsigned remapped_uncorrectable_rows(std::size_t i) {
  return static_cast<unsigned>(std::min<std::uint64_t>(dynamics_of(i).ecc_uncorrected_aggregate,
                                                       spec_of(i).row_remapper_banks));
}

// nvmlDeviceGetRetiredPages(_v2): the pages of one cause. NOT_SUPPORTED on GPUs that remap rows
// (Ampere and later), checked before the arguments as the real library does for an unsupported
// family. A page_count of 0 asks for the size (addresses may be NULL then, as pynvml calls it).
nvmlReturn_t list_retired_pages(std::size_t i, nvmlPageRetirementCause_t cause,
                                unsigned int* page_count, unsigned long long* addresses,
                                unsigned long long* timestamps) {
  if (!spec_of(i).page_retirement) return NVML_ERROR_NOT_SUPPORTED;
  if (!page_count || cause >= NVML_PAGE_RETIREMENT_CAUSE_COUNT) return NVML_ERROR_INVALID_ARGUMENT;
  const RetiredPages pages = gpuclk::sim::retired_pages(config_of(i), dynamics_of(i));
  const std::vector<RetiredPage>& list =
      cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR ? pages.dbe : pages.multiple_sbe;
  const unsigned int room = *page_count;
  *page_count = static_cast<unsigned int>(list.size());
  if (room < list.size()) return NVML_ERROR_INSUFFICIENT_SIZE;
  if (list.empty()) return NVML_SUCCESS;
  if (!addresses) return NVML_ERROR_INVALID_ARGUMENT;
  const Context& context = Context::get();
  for (std::size_t k = 0; k < list.size(); ++k) {
    addresses[k] = list[k].address;
    // ASSUMPTION: microseconds since the epoch, like the sample buffers' timestamps; no
    // recording of a real card's retirement times exists here.
    if (timestamps)
      timestamps[k] = static_cast<unsigned long long>(context.timestamp_us(list[k].retired_at_s));
  }
  return NVML_SUCCESS;
}

}  // namespace

namespace gpuclk::sim::abi::get {

nvmlReturn_t retired_pages(std::size_t i, nvmlPageRetirementCause_t cause, unsigned int* page_count,
                           unsigned long long* addresses) {
  return list_retired_pages(i, cause, page_count, addresses, nullptr);
}

nvmlReturn_t retired_pages_v2(std::size_t i, nvmlPageRetirementCause_t cause,
                              unsigned int* page_count, unsigned long long* addresses,
                              unsigned long long* timestamps) {
  return list_retired_pages(i, cause, page_count, addresses, timestamps);
}

// A retirement takes effect when the GPU is next reset (the driver reloads, the GPU is
// reattached); until then the page stays in use.
nvmlReturn_t retired_pages_pending(std::size_t i, nvmlEnableState_t* is_pending) {
  if (!spec_of(i).page_retirement) return NVML_ERROR_NOT_SUPPORTED;
  if (!is_pending) return NVML_ERROR_INVALID_ARGUMENT;
  *is_pending = gpuclk::sim::retired_pages(config_of(i), dynamics_of(i)).pending
                    ? NVML_FEATURE_ENABLED
                    : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t remapped_rows(std::size_t i, unsigned int* corrected_rows,
                           unsigned int* uncorrected_rows, unsigned int* is_pending,
                           unsigned int* failure_occurred) {
  if (spec_of(i).row_remapper_banks == 0) return NVML_ERROR_NOT_SUPPORTED;
  const GpuDynamics& d = dynamics_of(i);
  *corrected_rows = 0;
  *uncorrected_rows = remapped_uncorrectable_rows(i);
  // A remap takes effect at the next GPU reset; the errors since the driver loaded (the volatile
  // counter) are the ones still waiting for it.
  *is_pending = d.ecc_uncorrected_volatile > 0 ? 1u : 0u;
  *failure_occurred = d.ecc_uncorrected_aggregate > spec_of(i).row_remapper_banks ? 1u : 0u;
  return NVML_SUCCESS;
}

nvmlReturn_t row_remapper_histogram(std::size_t i, nvmlRowRemapperHistogramValues_t* values) {
  const std::uint32_t banks = spec_of(i).row_remapper_banks;
  if (banks == 0) return NVML_ERROR_NOT_SUPPORTED;
  // ASSUMPTION: each remapped row lies in a bank of its own, which moves from "max" (every spare
  // row left) to "high"; the real distribution depends on where the errors fall.
  const unsigned used = remapped_uncorrectable_rows(i);
  *values = {banks - used, used, 0, 0, 0};
  return NVML_SUCCESS;
}

// Errors by where they happened. The model's errors are all in DRAM (HBM); the SRAM counters
// (caches, register files), which nvidia-smi -q prints beside them, stay at 0. ASSUMPTION: the
// older per-structure locations (L1, L2, register file, texture, CBU) answer NOT_SUPPORTED on
// these GPUs, as nvidia-smi prints no line for them; not recorded.
nvmlReturn_t memory_error_counter(std::size_t i, nvmlMemoryErrorType_t type,
                                  nvmlEccCounterType_t counter, nvmlMemoryLocation_t location,
                                  unsigned long long* count) {
  if (location != NVML_MEMORY_LOCATION_DRAM && location != NVML_MEMORY_LOCATION_SRAM) {
    return location <= NVML_MEMORY_LOCATION_SRAM ? NVML_ERROR_NOT_SUPPORTED
                                                 : NVML_ERROR_INVALID_ARGUMENT;
  }
  const nvmlReturn_t status = total_ecc_errors(i, type, counter, count);
  if (status == NVML_SUCCESS && location == NVML_MEMORY_LOCATION_SRAM) *count = 0;
  return status;
}

nvmlReturn_t pcie_replay_counter(std::size_t i, unsigned int* replays) {
  *replays = static_cast<unsigned int>(dynamics_of(i).pcie_replays);
  return NVML_SUCCESS;
}

// The driver samples each quantity every 1/6 s into a ring buffer; the model is advanced lazily,
// so its buffer holds one sample: the reading at "now". A caller that has seen it gets NOT_FOUND,
// as from the real library between two samples.
nvmlReturn_t samples(std::size_t i, nvmlSamplingType_t type, unsigned long long last_seen_us,
                     nvmlValueType_t* value_type, unsigned int* count, nvmlSample_t* samples) {
  unsigned int value = 0;
  nvmlReturn_t status = NVML_SUCCESS;
  switch (type) {
    case NVML_TOTAL_POWER_SAMPLES:
      status = power_usage(i, &value);
      break;
    case NVML_GPU_UTILIZATION_SAMPLES:
    case NVML_MEMORY_UTILIZATION_SAMPLES: {
      nvmlUtilization_t utilization{};
      status = utilization_rates(i, &utilization);
      value = type == NVML_GPU_UTILIZATION_SAMPLES ? utilization.gpu : utilization.memory;
      break;
    }
    case NVML_ENC_UTILIZATION_SAMPLES:
    case NVML_DEC_UTILIZATION_SAMPLES:
    case NVML_JPG_UTILIZATION_SAMPLES:
    case NVML_OFA_UTILIZATION_SAMPLES:
      value = 0;  // no media work in the model (nvml_extras.cpp)
      break;
    case NVML_PROCESSOR_CLK_SAMPLES:
      status = clock_info(i, NVML_CLOCK_SM, &value);
      break;
    case NVML_MEMORY_CLK_SAMPLES:
      status = clock_info(i, NVML_CLOCK_MEM, &value);
      break;
    case NVML_MODULE_POWER_SAMPLES:
      return NVML_ERROR_NOT_SUPPORTED;  // a Grace Hopper module's power; nvidia-smi -q: N/A
    default:
      return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (status != NVML_SUCCESS) return status;
  *value_type = NVML_VALUE_TYPE_UNSIGNED_INT;
  if (!samples) {  // how many the caller should make room for
    *count = 1;
    return NVML_SUCCESS;
  }
  Context& context = Context::get();
  const auto now_us =
      static_cast<unsigned long long>(context.timestamp_us(context.model().now_s()));
  if (last_seen_us >= now_us) return NVML_ERROR_NOT_FOUND;
  if (*count < 1) {
    *count = 1;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  samples[0].timeStamp = now_us;
  samples[0].sampleValue.uiVal = value;
  *count = 1;
  return NVML_SUCCESS;
}

}  // namespace gpuclk::sim::abi::get
