// A simulated node: the scenario's GPUs, their state, simulated time in whole ticks, and the
// writes NVML can make. Pure C++ (no NVML types, no files); sim/abi puts the C ABI on top.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpu_model.h"
#include "gpu_state.h"
#include "scenario.h"

namespace gpuclk::sim {

// Outcome of a write, mapped 1:1 to NVML return codes by sim/abi.
enum class Status { ok, invalid_argument, not_supported, no_permission, gpu_lost, in_use };

// Symbolic clock values nvmlDeviceSetGpuLockedClocks accepts instead of MHz.
inline constexpr std::uint32_t kClockLimitTdp = 0xffffff01;
inline constexpr std::uint32_t kClockLimitUnlimited = 0xffffff02;

class NodeModel {
 public:
  explicit NodeModel(std::shared_ptr<const Scenario> scenario);

  const Scenario& scenario() const { return *scenario_; }
  std::size_t gpu_count() const { return gpus_.size(); }
  const GpuConfig& config(std::size_t i) const { return scenario_->gpus[i]; }
  const GpuState& gpu(std::size_t i) const { return gpus_[i]; }
  GpuState& gpu(std::size_t i) { return gpus_[i]; }

  std::uint64_t tick() const { return tick_; }
  double now_s() const { return static_cast<double>(tick_) * kTickSeconds; }

  // Back to power-on at t = 0.
  void reset();
  // Runs every whole tick up to simulated time `t_s` (no-op if already there or past it).
  // Gaps over 10 minutes are crossed in 1 s steps, all but the last minute.
  void advance_to(double t_s);
  void step(double dt_s) { advance_to(now_s() + dt_s); }

  // Writes, with the driver's checks. MHz and mW as NVML takes them.
  Status lock_gpu_clocks(std::size_t i, std::uint32_t min_mhz, std::uint32_t max_mhz);
  Status reset_gpu_locked_clocks(std::size_t i);
  Status set_applications_clocks(std::size_t i, std::uint32_t memory_mhz, std::uint32_t sm_mhz);
  Status reset_applications_clocks(std::size_t i);
  Status lock_memory_clocks(std::size_t i, std::uint32_t min_mhz, std::uint32_t max_mhz);
  Status reset_memory_locked_clocks(std::size_t i);
  Status set_power_limit(std::size_t i, std::uint32_t milliwatts);
  Status set_persistence_mode(std::size_t i, bool enabled);

  // Injected jobs (job.h); they need no privilege. start_job: `kind` one of job_kinds(), `amount`
  // FLOPs or bytes (0: no fixed amount), `max_seconds` of simulated time (0: no limit); sets
  // `id`. invalid_argument (unknown kind, negative or non-finite amount or time, neither bound
  // given), in_use while kMaxJobs jobs run there, gpu_lost. stop_job ends job `id` now
  // (invalid_argument if no slot of this GPU holds it any more; ok if it already ended).
  Status start_job(std::size_t i, std::string_view kind, double amount, double max_seconds,
                   std::uint32_t pid, std::uint64_t& id);
  Status stop_job(std::size_t i, std::uint64_t id);

  // The dynamic state as bytes (tick and every GpuState), and back. deserialize returns false,
  // leaving the model unchanged, for bytes of another scenario or layout.
  std::string serialize() const;
  bool deserialize(std::string_view bytes);

 private:
  Status writable(std::size_t i) const;

  std::shared_ptr<const Scenario> scenario_;
  std::vector<GpuState> gpus_;
  std::uint64_t tick_ = 0;
};

}  // namespace gpuclk::sim
