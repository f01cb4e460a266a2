// GpuSource: where the sampler's readings come from. The real one reads a gpu::Device through
// NVML (real driver or libnvml-sim.so); tests give the sampler scripted fakes.
#pragma once

#include <memory>

#include "telemetry/fields.h"
#include "telemetry/sample.h"

namespace gpuclk::gpu {
class Device;
}

namespace gpuclk::telemetry {

// Errors seen by one read_fast()/read_slow() call.
struct ReadOutcome {
  unsigned errors = 0;                // fields whose read failed (not counting "not supported")
  int last_error = 0;                 // NVML code of the last failure
  const char* last_error_field = "";  // the field whose read failed last (query's name)
  bool lost = false;                  // the GPU is gone (NVML_ERROR_GPU_IS_LOST)
};

class GpuSource {
 public:
  virtual ~GpuSource() = default;
  virtual GpuInfo info() const = 0;
  // Fill the fields of `fields` that this tier holds (sample.time is set by the caller).
  // read_fast and read_slow are called from different threads, each never concurrently with
  // itself.
  virtual ReadOutcome read_fast(const FieldSet& fields, FastSample& sample) = 0;
  virtual ReadOutcome read_slow(const FieldSet& fields, SlowSample& sample) = 0;
};

// Reads `device` (which must outlive the source). GPM is set up when asked for and supported.
// How often a device source reads the NVLink DL error counters (the state and data counters come
// at every slow read): ~1.8 ms a call, 72 calls per GPU with 18 links (docs/serve.md).
inline constexpr Duration kNvLinkErrorPeriod = std::chrono::seconds(10);

std::unique_ptr<GpuSource> make_device_source(const gpu::Device& device, const FieldSet& fields,
                                              Duration nvlink_error_period = kNvLinkErrorPeriod);

}  // namespace gpuclk::telemetry
