// GPM (GPU Performance Monitoring, Hopper and later): SM, tensor and DRAM activity over the window
// between two samples of the GPU's counters.
//
// A GpmSampler keeps the previous counter sample of one GPU; each take() reads a new one
// (~0.57 ms on an H100) and returns the metrics over the window since the previous take().
// Not thread-safe: one owner (the sampler's slow thread for that GPU). Move-only; frees its
// NVML samples.
#pragma once

#include <chrono>
#include <memory>

#include "gpu/reading.h"
#include "gpu/units.h"

struct nvmlGpmSample_st;

namespace gpuclk::gpu {

class Device;

// Busy fractions 0..1 over one window. A metric the GPU does not report is not_supported.
struct GpmMetrics {
  Reading<units::Ratio> graphics_activity;  // GR engine busy
  Reading<units::Ratio> sm_activity;        // SMs with at least one warp resident
  Reading<units::Ratio> sm_occupancy;       // resident warps / max warps
  Reading<units::Ratio> tensor_activity;    // any tensor pipe
  Reading<units::Ratio> dram_activity;      // DRAM bandwidth used / peak
  Reading<units::Ratio> fp64_activity, fp32_activity, fp16_activity;
};

class GpmSampler {
 public:
  explicit GpmSampler(const Device& device);
  ~GpmSampler();
  GpmSampler(GpmSampler&&) noexcept;
  GpmSampler& operator=(GpmSampler&&) noexcept;
  GpmSampler(const GpmSampler&) = delete;
  GpmSampler& operator=(const GpmSampler&) = delete;

  // Whether the device and driver support GPM (probed once, in the constructor).
  bool supported() const { return supported_; }

  // Reads the counters now. Returns the metrics over the window since the previous call;
  // the first call only starts a window (error NVML_ERROR_NOT_READY, 27). not_supported when
  // GPM is not; error with the NVML code when a read fails (the window restarts).
  // A window the driver's counters did not advance in (on the H100 every fifth 20 ms window
  // comes back with SM activity 0 and DRAM bandwidth NaN) gives NOT_READY too and stays open:
  // the next call closes it over the longer span (kept_window() is then true).
  Reading<GpmMetrics> take();
  // True for take()'s answer on the first call (or after a failed read): a window just opened.
  static bool opened_window(const Reading<GpmMetrics>& r);
  // True when the last take() kept its window open (its counters had not advanced).
  bool kept_window() const { return kept_window_; }

 private:
  void release();

  const Device* device_;
  bool supported_ = false;
  nvmlGpmSample_st* previous_ = nullptr;
  nvmlGpmSample_st* current_ = nullptr;
  bool have_previous_ = false;
  bool kept_window_ = false;
};

}  // namespace gpuclk::gpu
