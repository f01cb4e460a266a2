// NvmlGpuControl: GpuControl over a real (or simulated) GPU through NVML. The only code in
// gpuclk that calls NVML's write entry points.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "control/gpu_control.h"
#include "gpu/device.h"

namespace gpuclk::control {

// Proof that writes are allowed: only allow_writes() makes one, and it refuses in read-only
// mode. NvmlGpuControl needs one, so a read-only process cannot construct a writer at all.
class WriteAccess {
 public:
  WriteAccess(const WriteAccess&) = default;
  WriteAccess& operator=(const WriteAccess&) = default;

 private:
  WriteAccess() = default;
  friend WriteAccess allow_writes(bool read_only, std::string_view command);
};

// Throws Error (exit 4) naming read-only mode and how to leave it when `read_only` is set.
WriteAccess allow_writes(bool read_only, std::string_view command);

// Facts for validation from a device's identity (also used for dry runs, which need no access).
GpuFacts facts_of(const gpu::Device& device);

class NvmlGpuControl final : public GpuControl {
 public:
  // Without access (a dry run) it reads, and every write throws Error (exit 4).
  NvmlGpuControl(const gpu::Device& device, std::optional<WriteAccess> access);

  const GpuFacts& facts() const override { return facts_; }
  Settings read_settings() const override;
  LiveClocks live_clocks() const override;

  void set_persistence_mode(bool enabled) override;
  void set_application_clocks(ApplicationClocks clocks) override;
  void reset_application_clocks() override;
  void lock_gpu_clocks(ClockBound min, ClockBound max) override;
  void reset_gpu_locked_clocks() override;
  void lock_memory_clocks(ClockBound min, ClockBound max) override;
  void reset_memory_locked_clocks() override;
  void set_power_limit(units::Milliwatts limit) override;

 private:
  void require_access() const;

  const gpu::Device& device_;
  std::optional<WriteAccess> access_;
  GpuFacts facts_;
};

// Reads the settings NVML can read, without any write access (dry runs, `gpuclk journal`).
Settings read_settings(const gpu::Device& device);
LiveClocks live_clocks(const gpu::Device& device);

}  // namespace gpuclk::control
