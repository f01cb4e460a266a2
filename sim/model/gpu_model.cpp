#include "gpu_model.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "faults.h"
#include "nvlink.h"
#include "physics.h"

namespace gpuclk::sim {
namespace {

// Guards a workload of many tiny phases; coarse (fast-forward) steps may cross more.
constexpr int kMaxPhasesPerTick = 64;
int max_phases(double dt) {
  return static_cast<int>(kMaxPhasesPerTick * std::max(1.0, dt / kTickSeconds));
}
constexpr double kHwSlowdownHysteresisC = 3;
constexpr double kSwThermalReleaseC = 1;

double phase_amount(const Phase& phase) {
  if (timed(phase)) return phase.seconds;
  switch (phase.kind) {
    case PhaseKind::compute:
      return phase.flops;
    case PhaseKind::memory:
    case PhaseKind::transfer:
    case PhaseKind::p2p:
      return phase.bytes;
    case PhaseKind::idle:
    case PhaseKind::off:
      return phase.seconds;
  }
  return 0;
}

const Phase kOff{"off", PhaseKind::off};

const Phase* phase_of(const GpuConfig& config, const GpuDynamics& d) {
  const auto& phases = config.workload.phases;
  if (!d.started || d.phase_index >= phases.size()) return nullptr;
  return &phases[d.phase_index];
}

// The phase running now, or the implicit "off" before the start and after the end.
const Phase& phase_now(const GpuConfig& config, const GpuState& state) {
  const Phase* p = current_phase(config, state);
  return p ? *p : kOff;
}

void accumulate(TickActivity& into, const TickActivity& a, double weight) {
  into.busy += a.busy * weight;
  into.dram += a.dram * weight;
  for (int i = 0; i < kDataTypeCount; ++i) into.pipe[i] += a.pipe[i] * weight;
  for (int i = 0; i < kDataTypeCount; ++i) into.kernel[i] += a.kernel[i] * weight;
  for (int i = 0; i < kDataTypeCount; ++i) into.kernel_quiet[i] += a.kernel_quiet[i] * weight;
  for (int i = 0; i < kDataTypeCount; ++i) into.pipe_quiet[i] += a.pipe_quiet[i] * weight;
  into.dram_quiet += a.dram_quiet * weight;
  into.dram_bytes_per_s_quiet += a.dram_bytes_per_s_quiet * weight;
  into.tile_w += a.tile_w * weight;
  into.tile_w_quiet += a.tile_w_quiet * weight;
  into.compute_dram_bytes_per_s += a.compute_dram_bytes_per_s * weight;
  into.compute_dram_bytes_per_s_quiet += a.compute_dram_bytes_per_s_quiet * weight;
  for (int i = 0; i < static_cast<int>(Activity::count); ++i) {
    into.activity[i] += a.activity[i] * weight;
  }
  into.flops_per_s += a.flops_per_s * weight;
  into.dram_bytes_per_s += a.dram_bytes_per_s * weight;
  into.pcie_rx_bytes_per_s += a.pcie_rx_bytes_per_s * weight;
  into.pcie_tx_bytes_per_s += a.pcie_tx_bytes_per_s * weight;
  into.nvlink_tx_bytes_per_s += a.nvlink_tx_bytes_per_s * weight;
}

// The path a phase's transfer takes: PCIe to the host, or NVLink (else PCIe) to a peer GPU.
double link_bandwidth(const GpuConfig& config, const Phase& phase) {
  const double pcie = pcie_bandwidth(config.pcie_generation, config.pcie_width);
  return phase.kind == PhaseKind::p2p ? p2p_bandwidth(config, phase.peer, pcie) : pcie;
}

double power_at(const GpuConfig& config, const Phase& phase, std::uint32_t sm_mhz,
                std::uint32_t memory_mhz, double die_c) {
  const GpuSpec& spec = *config.spec;
  PhaseRates r = phase_rates(spec, phase, sm_mhz, memory_mhz, link_bandwidth(config, phase));
  // The controller holds the average power and the tensor pipes' data-independent peak.
  return std::max(board_power(spec, sm_mhz, memory_mhz, die_c, r.activity, config.leakage_factor),
                  peak_pipe_power(spec, sm_mhz, r.activity));
}

// Highest supported clock ≤ ceiling where `phase` draws at most limit_w (sm_min if none does),
// its data-independent peak included.
// P(f) rises with f, so the search starts at `start` (last step's clock) and moves a step or two.
std::uint32_t power_capped_clock(const GpuConfig& config, const Phase& phase, const GpuDynamics& d,
                                 std::uint32_t start, std::uint32_t ceiling, double limit_w) {
  const GpuSpec& spec = *config.spec;
  std::uint32_t f = spec.floor_sm_clock(std::min(std::max(start, spec.sm_min_mhz), ceiling));
  if (power_at(config, phase, f, d.memory_mhz, d.die_c) > limit_w) {
    while (f > spec.sm_min_mhz && power_at(config, phase, f, d.memory_mhz, d.die_c) > limit_w) {
      f = spec.lower_sm_clock(f);
    }
  } else {
    while (f < spec.sm_max_mhz && spec.higher_sm_clock(f) <= ceiling &&
           power_at(config, phase, spec.higher_sm_clock(f), d.memory_mhz, d.die_c) <= limit_w) {
      f = spec.higher_sm_clock(f);
    }
  }
  return f;
}

// The phases that may run during the step [now_s, now_s + dt): the current one and, if it could
// end within the step even at the ceiling clock, the ones after it.
std::vector<const Phase*> phases_in_step(const GpuConfig& config, const GpuDynamics& d,
                                         const Phase& now, std::uint32_t ceiling, double now_s,
                                         double dt) {
  std::vector<const Phase*> out{&now};
  const auto& phases = config.workload.phases;
  std::size_t index = d.phase_index;
  double done = d.phase_done;
  double left = dt;
  if (!d.started) {  // the workload may start within the step
    left = now_s + dt - config.workload.start_s;
    index = 0;
    done = 0;
    if (left <= 0 || phases.empty()) return out;
    out.push_back(&phases[0]);
  }
  for (int n = 0; n < max_phases(dt) && index < phases.size(); ++n) {
    const Phase& p = phases[index];
    const PhaseRates r =
        phase_rates(*config.spec, p, ceiling, d.memory_mhz, link_bandwidth(config, p));
    if (r.work_per_s <= 0) break;
    left -= (phase_amount(p) - done) / r.work_per_s;
    if (left <= 0) break;
    done = 0;
    index = index + 1 < phases.size() ? index + 1 : (config.workload.repeat ? 0 : phases.size());
    if (index < phases.size()) out.push_back(&phases[index]);
  }
  return out;
}

// Moves to the next phase; past the last one a non-repeating workload is over (off).
void next_phase(const GpuConfig& config, GpuDynamics& d) {
  d.phase_done = 0;
  ++d.phase_index;
  if (d.phase_index >= config.workload.phases.size()) {
    ++d.iterations;
    d.phase_index =
        config.workload.repeat ? 0 : static_cast<std::uint32_t>(config.workload.phases.size());
  }
}

// Runs the workload for dt at fixed clocks; returns the time-weighted activity.
TickActivity run_workload(const GpuConfig& config, GpuDynamics& d, double now_s, double dt) {
  const GpuSpec& spec = *config.spec;
  TickActivity total;
  double left = dt;
  if (!d.started) {
    if (now_s + dt <= config.workload.start_s) return total;
    left = now_s + dt - config.workload.start_s;  // the start falls in this step
    d.started = 1;
  }
  for (int n = 0; n < max_phases(dt) && left > 0; ++n) {
    const Phase* phase = phase_of(config, d);
    if (!phase) break;
    PhaseRates r =
        phase_rates(spec, *phase, d.sm_mhz, d.memory_mhz, link_bandwidth(config, *phase));
    const double need = phase_amount(*phase) - d.phase_done;
    double used = left;
    if (r.work_per_s <= 0) {
      used = left;  // stalled (e.g. a link of width 0): the phase never ends
    } else if (r.work_per_s * left >= need) {
      used = std::max(0.0, need / r.work_per_s);
    }
    const double work = r.work_per_s * used;
    d.phase_done += work;
    d.total_flops += r.activity.flops_per_s * used;
    d.total_dram_bytes += r.activity.dram_bytes_per_s * used;
    d.total_pcie_bytes += (r.activity.pcie_rx_bytes_per_s + r.activity.pcie_tx_bytes_per_s) * used;
    if (phase->kind == PhaseKind::p2p) record_p2p(config, d, phase->peer, work);
    accumulate(total, r.activity, used / dt);
    left -= used;
    if (d.phase_done >= phase_amount(*phase) * (1 - 1e-12)) next_phase(config, d);
  }
  return total;
}

// One job's part of a tick: its activity while its slices ran (at full rate) and for how long.
struct JobSlice {
  InjectedJob* job = nullptr;
  TickActivity own;
  double used = 0;  // seconds of the tick
};

// Runs an injected job for its share of a tick of dt at fixed clocks (`share`: 1 / the jobs
// running). The job ends when its amount is done or its deadline passes; its end time is where
// that falls in wall time at this share.
JobSlice run_job(const GpuConfig& config, GpuDynamics& d, InjectedJob& job, double share,
                 double now_s, double dt) {
  const Phase phase = job_phase(job);
  PhaseRates r =
      phase_rates(*config.spec, phase, d.sm_mhz, d.memory_mhz, link_bandwidth(config, phase));
  double wall = dt;  // of this tick, the time before the deadline
  if (job.deadline_s > 0) wall = std::clamp(job.deadline_s - now_s, 0.0, dt);
  double used = wall * share;
  bool completes = false;
  if (job.amount > 0 && r.work_per_s > 0 && r.work_per_s * used >= job.amount - job.done) {
    used = std::max(0.0, (job.amount - job.done) / r.work_per_s);
    wall = used / share;
    completes = true;
  }
  job.done = completes ? job.amount : job.done + r.work_per_s * used;
  d.total_flops += r.activity.flops_per_s * used;
  d.total_dram_bytes += r.activity.dram_bytes_per_s * used;
  if (completes || wall < dt) {
    job.running = 0;
    job.completed = completes ? 1 : 0;
    job.end_s = now_s + wall;
  }
  return {&job, r.activity, used};
}

// Books a tick's energy to the jobs that ran in it: by time share, each share weighted by the
// board power of that job's own activity (a GEMM's slices draw more than a copy's); the idle
// rest of the tick, if any, weighs as idle power and stays the GPU's.
void book_jobs(const GpuConfig& config, const GpuDynamics& d, std::span<JobSlice> slices,
               double energy_j, double dt, double now_s) {
  const GpuSpec& spec = *config.spec;
  const auto power_of = [&](const TickActivity& a) {
    return board_power(spec, d.sm_mhz, d.memory_mhz, d.die_c, a, config.leakage_factor);
  };
  double used = 0, weight = 0;
  for (const JobSlice& s : slices) {
    used += s.used;
    weight += s.used * power_of(s.own);
  }
  const double idle = std::max(0.0, dt - used) * power_of(TickActivity{});
  for (JobSlice& s : slices) {
    const double w = s.used * power_of(s.own);
    if (weight + idle > 0) s.job->energy_j += energy_j * w / (weight + idle);
    const double busy = s.used * s.own.busy;
    s.job->busy_s += busy;
    add_utilization(s.job->samples, busy, s.job->running ? now_s + dt : s.job->end_s,
                    !s.job->running);
  }
}

double window_sum(const double* window) {
  double s = 0;
  for (int i = 0; i < kWindowTicks; ++i) s += window[i];
  return s;
}

}  // namespace

const Phase* current_phase(const GpuConfig& config, const GpuState& state) {
  return phase_of(config, state.dynamics);
}

ClockRange requested_sm_range(const GpuSpec& spec, const GpuSettings& s) {
  if (s.locked_sm_min_mhz != 0 || s.locked_sm_max_mhz != 0) {
    return {spec.ceil_sm_clock(s.locked_sm_min_mhz), spec.floor_sm_clock(s.locked_sm_max_mhz)};
  }
  return {spec.sm_min_mhz, spec.floor_sm_clock(s.app_sm_mhz)};
}

std::uint32_t requested_memory_mhz(const GpuSpec& spec, const GpuSettings& s) {
  if (s.locked_memory_min_mhz != 0 || s.locked_memory_max_mhz != 0) {
    for (auto m : spec.memory_clocks_mhz) {  // descending: the highest clock inside the lock
      if (m <= s.locked_memory_max_mhz && m >= s.locked_memory_min_mhz) return m;
    }
  }
  return s.app_memory_mhz;
}

GpuState initial_gpu_state(const GpuConfig& config) {
  const GpuSpec& spec = *config.spec;
  GpuState state;
  GpuSettings& s = state.settings;
  s.app_sm_mhz = config.app_sm_mhz;
  s.app_memory_mhz = config.app_memory_mhz;
  s.power_limit_mw = config.power_limit_mw;
  s.persistence_mode = config.persistence_mode ? 1 : 0;

  GpuDynamics& d = state.dynamics;
  d.sm_mhz = spec.sm_min_mhz;
  d.power_clock_mhz = spec.sm_max_mhz;  // idle: the limit allows every clock
  d.memory_mhz = requested_memory_mhz(spec, s);
  d.thermal_cap_mhz = spec.sm_max_mhz;
  d.event_reasons = reason::gpu_idle;
  d.started = config.workload.start_s <= 0 ? 1 : 0;
  // Idle thermal equilibrium: T = ambient + (R_sink + R_die) × P(T); P depends weakly on T.
  const double r_total = spec.sink_k_per_w * config.cooling_factor + spec.die_k_per_w;
  double die = config.ambient_c;
  double power = 0;
  for (int i = 0; i < 20; ++i) {
    power = power_at(config, kOff, d.sm_mhz, d.memory_mhz, die);
    die = config.ambient_c + r_total * power;
  }
  d.power_w = power;
  d.die_c = die;
  d.sink_c = config.ambient_c + spec.sink_k_per_w * config.cooling_factor * power;
  const double memory_w = memory_power(spec, d.memory_mhz, TickActivity{});
  for (int i = 0; i < kWindowTicks; ++i) {
    d.window_power_w[i] = power;
    d.window_memory_power_w[i] = memory_w;
  }
  d.ecc_corrected_volatile = 0;
  d.ecc_corrected_aggregate = config.ecc_corrected;
  d.ecc_uncorrected_aggregate = config.ecc_uncorrected;
  return state;
}

void step_gpu(const GpuConfig& config, GpuState& state, double now_s, double dt) {
  const GpuSpec& spec = *config.spec;
  const GpuSettings& s = state.settings;
  GpuDynamics& d = state.dynamics;
  if (d.lost) return;
  if (now_s >= config.lost_at_s) {
    d.lost = 1;
    d.power_w = 0;
    return;
  }

  // Clocks: what the settings ask for, then the thermal and power limits, in 15 MHz steps.
  if (!d.started && now_s >= config.workload.start_s) d.started = 1;
  std::vector<InjectedJob*> running;
  for (InjectedJob& j : d.jobs) {
    if (j.running) running.push_back(&j);
  }
  const bool job = !running.empty();
  std::vector<Phase> job_work;
  job_work.reserve(running.size());
  for (const InjectedJob* j : running) job_work.push_back(job_phase(*j));
  const Phase& phase = job ? job_work.front() : phase_now(config, state);
  const bool context = phase.kind != PhaseKind::off;
  const ClockRange range = requested_sm_range(spec, s);
  const std::uint32_t wanted = context ? range.high_mhz : range.low_mhz;
  std::uint32_t ceiling = std::min(wanted, spec.floor_sm_clock(d.thermal_cap_mhz));
  if (d.hw_slowdown) ceiling = std::min(ceiling, spec.floor_sm_clock(spec.sm_max_mhz / 2));
  ceiling = fault_ceiling(config, now_s, context, ceiling);
  d.memory_mhz = requested_memory_mhz(spec, s);
  const double limit_w = s.power_limit_mw / 1000.0;
  // The highest clock at which every phase that may run during this step fits the power limit
  // (a step that finishes one phase starts the next at the same clock).
  std::uint32_t f = ceiling;
  std::vector<const Phase*> candidates;
  candidates.reserve(job_work.size());
  for (const Phase& p : job_work) candidates.push_back(&p);
  if (!job) candidates = phases_in_step(config, d, phase, ceiling, now_s, dt);
  const double tau = spec.power_controller_time_constant_s;
  if (tau <= 0) {
    for (const Phase* p : candidates) {
      f = std::min(f, power_capped_clock(config, *p, d, d.sm_mhz, ceiling, limit_w));
    }
  } else {
    // The controller's clock lags the clock the limit allows (searched up to sm_max, so that a
    // ceiling that rises — a context starting, a lock lifted — acts at once); the settings' and
    // thermal ceilings hold without lag.
    const auto start = static_cast<std::uint32_t>(std::lround(d.power_clock_mhz));
    std::uint32_t allowed = spec.sm_max_mhz;
    for (const Phase* p : candidates) {
      allowed =
          std::min(allowed, power_capped_clock(config, *p, d, start, spec.sm_max_mhz, limit_w));
    }
    const double target = allowed;
    double& g = d.power_clock_mhz;
    g += (target - g) * (1 - std::exp(-dt / tau));
    if (std::fabs(target - g) < 0.5) g = target;  // settled: the clock the limit allows exactly
    const std::uint32_t lo = spec.floor_sm_clock(static_cast<std::uint32_t>(
        std::clamp(g, double(spec.sm_min_mhz), double(spec.sm_max_mhz))));
    const std::uint32_t hi = spec.higher_sm_clock(lo);
    f = std::min(ceiling, hi - g < g - lo ? hi : lo);
  }
  d.sm_mhz = f;
  d.context_active = context ? 1 : 0;

  // Work at these clocks; power follows from what ran.
  std::vector<JobSlice> slices;
  TickActivity activity;
  if (job) {
    const double share = 1.0 / static_cast<double>(running.size());
    for (InjectedJob* j : running) {
      slices.push_back(run_job(config, d, *j, share, now_s, dt));
      accumulate(activity, slices.back().own, slices.back().used / dt);
    }
  } else {
    activity = run_workload(config, d, now_s, dt);
  }
  const double power =
      board_power(spec, d.sm_mhz, d.memory_mhz, d.die_c, activity, config.leakage_factor);
  const double memory_w = memory_power(spec, d.memory_mhz, activity);
  d.last = activity;
  d.power_w = power;
  d.memory_power_w = memory_w;
  d.energy_j += power * dt;
  if (job) book_jobs(config, d, slices, power * dt, dt, now_s);
  if (!job && context) {
    add_utilization(d.workload_samples, activity.busy * dt, now_s + dt, false);
  } else {
    // Paused by a job, or no context: the driver samples nothing of the workload's process.
    d.workload_samples.period_start_s = now_s + dt;
    d.workload_samples.period_busy_s = 0;
  }
  for (int i = 0; i < static_cast<int>(Activity::count); ++i) {
    d.activity_seconds[i] += activity.activity[i] * dt;
  }
  // Coarse steps fill the whole window: the last second was uniform.
  const int slots = std::clamp(static_cast<int>(std::lround(dt / kTickSeconds)), 1, kWindowTicks);
  for (int i = 0; i < slots; ++i) {
    d.window_power_w[d.window_pos] = power;
    d.window_busy[d.window_pos] = activity.busy;
    d.window_dram[d.window_pos] = activity.dram;
    d.window_memory_power_w[d.window_pos] = memory_w;
    d.window_pos = (d.window_pos + 1) % kWindowTicks;
  }

  // Thermal: two first-order stages, each integrated exactly for constant power over dt.
  const double r_sink = spec.sink_k_per_w * config.cooling_factor;
  const double tau_sink = r_sink * spec.sink_heat_capacity_j_per_k;
  const double sink_target = config.ambient_c + r_sink * power;
  // cooling_factor 0: an ideal sink (a cold plate) holds ambient; only the die warms.
  d.sink_c = tau_sink > 0 ? d.sink_c + (sink_target - d.sink_c) * (1 - std::exp(-dt / tau_sink))
                          : sink_target;
  const double die_target = d.sink_c + spec.die_k_per_w * power;
  d.die_c += (die_target - d.die_c) * (1 - std::exp(-dt / spec.die_time_constant_s));

  // Event reasons for this step, then the thermal controllers for the next.
  std::uint64_t reasons = 0;
  if (!context) reasons |= reason::gpu_idle;
  if (context && range.high_mhz < spec.sm_max_mhz) reasons |= reason::applications_clocks;
  if (f < ceiling) reasons |= reason::sw_power_cap;
  if (spec.floor_sm_clock(d.thermal_cap_mhz) < wanted &&
      f >= spec.floor_sm_clock(d.thermal_cap_mhz)) {
    reasons |= reason::sw_thermal;
  }
  if (d.hw_slowdown) reasons |= reason::hw_slowdown | reason::hw_thermal;
  reasons |= fault_reasons(config, now_s);
  d.event_reasons = reasons;
  const auto add_violation = [&](Policy p) {
    d.violation_ns[static_cast<int>(p)] += static_cast<std::uint64_t>(std::llround(dt * 1e9));
  };
  if (reasons & reason::sw_power_cap) add_violation(Policy::power);
  if (reasons & (reason::sw_thermal | reason::hw_thermal)) add_violation(Policy::thermal);
  if (reasons & reason::applications_clocks) add_violation(Policy::total_app_clocks);
  if ((reasons & (reason::sw_power_cap | reason::sw_thermal | reason::hw_slowdown)) &&
      f < spec.sm_base_mhz) {
    add_violation(Policy::total_base_clocks);
  }

  if (d.die_c > spec.gpu_max_c) {
    d.thermal_cap_mhz = spec.lower_sm_clock(spec.floor_sm_clock(std::min(d.thermal_cap_mhz, f)));
  } else if (d.die_c < spec.gpu_max_c - kSwThermalReleaseC) {
    d.thermal_cap_mhz = spec.higher_sm_clock(spec.floor_sm_clock(d.thermal_cap_mhz));
  }
  if (d.die_c >= spec.slowdown_c) {
    d.hw_slowdown = 1;
  } else if (d.die_c < spec.slowdown_c - kHwSlowdownHysteresisC) {
    d.hw_slowdown = 0;
  }
  if (d.die_c >= spec.shutdown_c) d.lost = 1;  // the board protects itself: off the bus

  accrue_fault_counters(config, d, dt);
  // ECC: corrected errors accrue at the scenario's rate.
  d.ecc_corrected_accrued += config.ecc_corrected_per_hour * dt / 3600.0;
  if (d.ecc_corrected_accrued >= 1) {
    const auto whole = static_cast<std::uint64_t>(d.ecc_corrected_accrued);
    d.ecc_corrected_accrued -= static_cast<double>(whole);
    d.ecc_corrected_volatile += whole;
    d.ecc_corrected_aggregate += whole;
  }
}

Process context_process(const GpuConfig& config, const GpuState& state) {
  for (const InjectedJob& job : state.dynamics.jobs) {
    if (job.running) return {job.pid, "gpuclk sim-job", 2ULL << 30, {}};  // a host process
  }
  return config.workload.process;
}

double average_power_w(const GpuState& state) {
  return window_sum(state.dynamics.window_power_w) / kWindowTicks;
}
double average_busy(const GpuState& state) {
  return window_sum(state.dynamics.window_busy) / kWindowTicks;
}
double average_dram(const GpuState& state) {
  return window_sum(state.dynamics.window_dram) / kWindowTicks;
}
double average_memory_power_w(const GpuState& state) {
  return window_sum(state.dynamics.window_memory_power_w) / kWindowTicks;
}

}  // namespace gpuclk::sim
