#include "node_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gpuclk::sim {
namespace {

constexpr char kMagic[8] = {'G', 'C', 'S', 'I', 'M', 'S', 'T', '1'};
constexpr std::uint64_t kFastForwardTicks = 60'000;  // 10 min
constexpr std::uint64_t kFineTailTicks = 6'000;      // the last minute always in fine ticks
constexpr std::uint64_t kMaxCoarseSteps = 100'000;   // a week-old state catches up in < 1 s

struct Header {
  char magic[8];
  std::uint64_t fingerprint;
  std::uint32_t gpu_count;
  std::uint32_t state_size;
  std::uint64_t tick;
};

}  // namespace

NodeModel::NodeModel(std::shared_ptr<const Scenario> scenario) : scenario_(std::move(scenario)) {
  reset();
}

void NodeModel::reset() {
  tick_ = 0;
  gpus_.clear();
  for (const GpuConfig& c : scenario_->gpus) gpus_.push_back(initial_gpu_state(c));
}

void NodeModel::advance_to(double t_s) {
  if (!(t_s > 0)) return;
  const auto target = static_cast<std::uint64_t>(std::floor(t_s / kTickSeconds + 1e-9));
  if (target <= tick_) return;
  // Coarse steps of whole seconds, longer for longer gaps; the same for every GPU.
  const std::uint64_t coarse =
      100 * std::max<std::uint64_t>(1, (target - tick_) / 100 / kMaxCoarseSteps);
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    std::uint64_t t = tick_;
    while (target - t > kFastForwardTicks && target - t > kFineTailTicks + coarse) {
      step_gpu(config(i), gpus_[i], static_cast<double>(t) * kTickSeconds,
               static_cast<double>(coarse) * kTickSeconds);
      t += coarse;
    }
    for (; t < target; ++t) {
      step_gpu(config(i), gpus_[i], static_cast<double>(t) * kTickSeconds, kTickSeconds);
    }
  }
  tick_ = target;
}

Status NodeModel::writable(std::size_t i) const {
  if (gpus_[i].dynamics.lost) return Status::gpu_lost;
  if (!scenario_->privileged) return Status::no_permission;
  return Status::ok;
}

Status NodeModel::lock_gpu_clocks(std::size_t i, std::uint32_t min_mhz, std::uint32_t max_mhz) {
  if (Status s = writable(i); s != Status::ok) return s;
  const GpuSpec& spec = *config(i).spec;
  const auto resolve = [&](std::uint32_t v, std::uint32_t unlimited) {
    if (v == kClockLimitTdp) return spec.sm_base_mhz;
    if (v == kClockLimitUnlimited) return unlimited;
    return v;
  };
  min_mhz = resolve(min_mhz, spec.sm_min_mhz);
  max_mhz = resolve(max_mhz, spec.sm_max_mhz);
  if (min_mhz > max_mhz || min_mhz < spec.sm_min_mhz || max_mhz > spec.sm_max_mhz) {
    return Status::invalid_argument;
  }
  // A range holding no supported clock (e.g. 1400–1400 with 15 MHz steps) cannot be honoured.
  if (spec.ceil_sm_clock(min_mhz) > spec.floor_sm_clock(max_mhz)) return Status::invalid_argument;
  gpus_[i].settings.locked_sm_min_mhz = min_mhz;
  gpus_[i].settings.locked_sm_max_mhz = max_mhz;
  return Status::ok;
}

Status NodeModel::start_job(std::size_t i, std::string_view kind, double amount, double max_seconds,
                            std::uint32_t pid, std::uint64_t& id) {
  GpuDynamics& d = gpus_[i].dynamics;
  if (d.lost) return Status::gpu_lost;
  const auto index = job_kind_index(kind);
  if (!index || !(amount >= 0) || !std::isfinite(amount) || !(max_seconds >= 0) ||
      !std::isfinite(max_seconds) || (amount == 0 && max_seconds == 0)) {
    return Status::invalid_argument;
  }
  // A free slot: one that never held a job, else the one whose job ended first.
  InjectedJob* slot = nullptr;
  for (InjectedJob& j : d.jobs) {
    if (j.running) continue;
    if (!slot || j.id == 0 || (slot->id != 0 && j.end_s < slot->end_s)) slot = &j;
    if (slot->id == 0) break;
  }
  if (!slot) return Status::in_use;
  InjectedJob job;
  job.id = ++d.last_job_id;
  job.running = 1;
  job.kind = *index;
  job.pid = pid;
  job.amount = amount;
  job.start_s = now_s();
  job.samples.period_start_s = now_s();
  job.deadline_s = max_seconds > 0 ? now_s() + max_seconds : 0;
  *slot = job;
  id = job.id;
  return Status::ok;
}

Status NodeModel::stop_job(std::size_t i, std::uint64_t id) {
  InjectedJob* job = find_job(gpus_[i].dynamics, id);
  if (!job) return Status::invalid_argument;
  if (job->running) {
    job->running = 0;
    job->end_s = now_s();
  }
  return Status::ok;
}

Status NodeModel::reset_gpu_locked_clocks(std::size_t i) {
  if (Status s = writable(i); s != Status::ok) return s;
  gpus_[i].settings.locked_sm_min_mhz = 0;
  gpus_[i].settings.locked_sm_max_mhz = 0;
  return Status::ok;
}

Status NodeModel::set_applications_clocks(std::size_t i, std::uint32_t memory_mhz,
                                          std::uint32_t sm_mhz) {
  if (Status s = writable(i); s != Status::ok) return s;
  const GpuSpec& spec = *config(i).spec;
  if (!spec.is_supported_memory_clock(memory_mhz) || !spec.is_supported_sm_clock(sm_mhz)) {
    return Status::invalid_argument;
  }
  gpus_[i].settings.app_memory_mhz = memory_mhz;
  gpus_[i].settings.app_sm_mhz = sm_mhz;
  return Status::ok;
}

Status NodeModel::reset_applications_clocks(std::size_t i) {
  if (Status s = writable(i); s != Status::ok) return s;
  const GpuSpec& spec = *config(i).spec;
  gpus_[i].settings.app_memory_mhz = spec.default_app_memory_mhz;
  gpus_[i].settings.app_sm_mhz = spec.default_app_sm_mhz;
  return Status::ok;
}

Status NodeModel::lock_memory_clocks(std::size_t i, std::uint32_t min_mhz, std::uint32_t max_mhz) {
  if (gpus_[i].dynamics.lost) return Status::gpu_lost;
  const GpuSpec& spec = *config(i).spec;
  if (!spec.memory_locked_clocks_supported) return Status::not_supported;
  if (Status s = writable(i); s != Status::ok) return s;
  if (min_mhz > max_mhz) return Status::invalid_argument;
  bool any = false;
  for (auto m : spec.memory_clocks_mhz) any = any || (m >= min_mhz && m <= max_mhz);
  if (!any) return Status::invalid_argument;
  gpus_[i].settings.locked_memory_min_mhz = min_mhz;
  gpus_[i].settings.locked_memory_max_mhz = max_mhz;
  return Status::ok;
}

Status NodeModel::reset_memory_locked_clocks(std::size_t i) {
  if (gpus_[i].dynamics.lost) return Status::gpu_lost;
  if (!config(i).spec->memory_locked_clocks_supported) return Status::not_supported;
  if (Status s = writable(i); s != Status::ok) return s;
  gpus_[i].settings.locked_memory_min_mhz = 0;
  gpus_[i].settings.locked_memory_max_mhz = 0;
  return Status::ok;
}

Status NodeModel::set_power_limit(std::size_t i, std::uint32_t milliwatts) {
  if (Status s = writable(i); s != Status::ok) return s;
  const GpuSpec& spec = *config(i).spec;
  const auto min_mw = static_cast<std::uint32_t>(std::lround(spec.power_limit_min_w * 1000));
  const auto max_mw = static_cast<std::uint32_t>(std::lround(spec.power_limit_max_w * 1000));
  if (milliwatts < min_mw || milliwatts > max_mw) return Status::invalid_argument;
  gpus_[i].settings.power_limit_mw = milliwatts;
  return Status::ok;
}

Status NodeModel::set_persistence_mode(std::size_t i, bool enabled) {
  if (Status s = writable(i); s != Status::ok) return s;
  gpus_[i].settings.persistence_mode = enabled ? 1 : 0;
  return Status::ok;
}

std::string NodeModel::serialize() const {
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.fingerprint = scenario_->fingerprint;
  h.gpu_count = static_cast<std::uint32_t>(gpus_.size());
  h.state_size = sizeof(GpuState);
  h.tick = tick_;
  std::string out(sizeof h + gpus_.size() * sizeof(GpuState), '\0');
  std::memcpy(out.data(), &h, sizeof h);
  if (!gpus_.empty())
    std::memcpy(out.data() + sizeof h, gpus_.data(), gpus_.size() * sizeof(GpuState));
  return out;
}

bool NodeModel::deserialize(std::string_view bytes) {
  Header h{};
  if (bytes.size() < sizeof h) return false;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.fingerprint != scenario_->fingerprint ||
      h.gpu_count != gpus_.size() || h.state_size != sizeof(GpuState) ||
      bytes.size() != sizeof h + gpus_.size() * sizeof(GpuState)) {
    return false;
  }
  tick_ = h.tick;
  if (!gpus_.empty())
    std::memcpy(gpus_.data(), bytes.data() + sizeof h, gpus_.size() * sizeof(GpuState));
  return true;
}

}  // namespace gpuclk::sim
