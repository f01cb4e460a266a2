#include "govern/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "gpu_model.h"
#include "physics.h"
#include "scenario.h"
#include "util/error.h"

namespace gpuclk::govern {
namespace {

namespace fs = std::filesystem;
using sim::Activity;
constexpr std::size_t kNoPhase = std::numeric_limits<std::size_t>::max();

// Energy and time of one GPU's job, in total and per phase index.
struct RunStats {
  double energy = 0;
  double time = 0;
  std::vector<double> phase_energy, phase_time;
  std::vector<double> phase_clock_time;  // Σ SM clock × dt, MHz·s
  std::uint64_t writes = 0;
};

// What sets the clocks during a run: nothing (the driver), a governor, a fixed lock, or a lock
// per phase index (the oracle). A clock of 0 means released.
struct ClockDriver {
  Governor* governor = nullptr;
  double fixed_mhz = 0;
  const std::vector<double>* per_phase_mhz = nullptr;
};

double activity(const sim::GpuDynamics& d, Activity a) {
  return d.activity_seconds[static_cast<int>(a)];
}

void lock(sim::GpuSettings& s, double min_mhz, double max_mhz) {
  s.locked_sm_min_mhz = static_cast<std::uint32_t>(std::lround(min_mhz));
  s.locked_sm_max_mhz = static_cast<std::uint32_t>(std::lround(max_mhz));
}

void apply(sim::GpuSettings& s, const Decision& d) {
  if (d.locked) {
    lock(s, d.min.value(), d.max.value());
  } else {
    lock(s, 0, 0);
  }
}

// What NVML would report for the interval that just ended: the fast fields as the simulator
// library serves them, GPM differenced over the interval.
Signals signals_of(const sim::GpuState& state, const sim::GpuDynamics& before, double window_s,
                   double now_s) {
  const auto& d = state.dynamics;
  Signals s;
  s.time_s = now_s;
  s.sm_clock = Megahertz(d.sm_mhz);
  s.memory_clock = Megahertz(d.memory_mhz);
  s.power = Watts(std::round(sim::average_power_w(state) * 1000) / 1000);
  s.gpu_utilization = Ratio(std::round(100 * sim::average_busy(state)) / 100.0);
  s.reasons = gpu::ClockReasons(d.event_reasons);
  const auto gpm = [&](Activity a) {
    return Ratio(std::clamp((activity(d, a) - activity(before, a)) / window_s, 0.0, 1.0));
  };
  s.sm_active = gpm(Activity::sm_active);
  s.tensor_active = gpm(Activity::tensor);
  s.dram_active = gpm(Activity::dram);
  s.fp64_active = gpm(Activity::fp64);
  s.fp32_active = gpm(Activity::fp32);
  s.fp16_active = gpm(Activity::fp16);
  return s;
}

bool finished(const sim::GpuConfig& config, const sim::GpuDynamics& d, int iterations) {
  if (config.workload.repeat) return d.iterations >= static_cast<std::uint64_t>(iterations);
  return d.started && d.phase_index >= config.workload.phases.size();
}

ClockLadder ladder_of(const sim::GpuSpec& spec) {
  return ClockLadder::uniform(Megahertz(spec.sm_min_mhz), Megahertz(spec.sm_max_mhz),
                              Megahertz(spec.sm_step_mhz), Megahertz(spec.sm_base_mhz));
}

RunStats run_gpu(const sim::GpuConfig& config, const ClockDriver& driver, const EvaluateOptions& o,
                 const std::string& what) {
  const auto& phases = config.workload.phases;
  RunStats out;
  out.phase_energy.assign(phases.size(), 0);
  out.phase_time.assign(phases.size(), 0);
  out.phase_clock_time.assign(phases.size(), 0);
  sim::GpuState state = sim::initial_gpu_state(config);
  auto& d = state.dynamics;
  if (driver.fixed_mhz > 0) lock(state.settings, config.spec->sm_min_mhz, driver.fixed_mhz);
  const double dt = sim::kTickSeconds;
  const int ticks_per_decision = std::max(1, static_cast<int>(std::lround(o.interval_s / dt)));
  const double start_s = std::max(0.0, config.workload.start_s);
  sim::GpuDynamics at_last_decision = d;
  double now = 0;
  std::optional<double> energy_at_start;
  for (long tick = 0;; ++tick) {
    if (now > start_s + o.time_limit_s && config.workload.repeat) {
      // A repeating workload always ends: it was --iterations that asked too much, not the
      // scenario (which the message blamed).
      throw bad_argument(
          fmt::format("--iterations {}: {} passes of {}'s workload fit in {:.0f} s of simulated "
                      "time, the most --evaluate runs",
                      o.iterations, d.iterations, what, o.time_limit_s),
          fmt::format("give --iterations {} or fewer", std::max<std::uint64_t>(1, d.iterations)));
    }
    if (now > start_s + o.time_limit_s) {
      throw Error(ExitCode::other,
                  fmt::format("{}: the workload did not finish within {:.0f} s of simulated time",
                              what, o.time_limit_s),
                  "give a scenario whose workload ends, or one that repeats (see --iterations)");
    }
    if (!energy_at_start && now >= start_s - 1e-9) energy_at_start = d.energy_j;
    const std::size_t phase = d.started && d.phase_index < phases.size() ? d.phase_index : kNoPhase;
    if (driver.per_phase_mhz && phase != kNoPhase) {
      const double f = (*driver.per_phase_mhz)[phase];
      if (f > 0) {
        lock(state.settings, config.spec->sm_min_mhz, f);
      } else {
        lock(state.settings, 0, 0);
      }
    }
    const double energy_before = d.energy_j;
    sim::step_gpu(config, state, now, dt);
    now += dt;
    if (phase != kNoPhase) {
      out.phase_energy[phase] += d.energy_j - energy_before;
      out.phase_time[phase] += dt;
      out.phase_clock_time[phase] += d.sm_mhz * dt;
    }
    if (finished(config, d, o.iterations)) break;
    if (driver.governor && (tick + 1) % ticks_per_decision == 0) {
      const double window = ticks_per_decision * dt;
      const Step step = driver.governor->step(signals_of(state, at_last_decision, window, now));
      at_last_decision = d;
      if (step.write) apply(state.settings, step.decision);
    }
  }
  out.energy = d.energy_j - energy_at_start.value_or(0);
  out.time = now - start_s;
  if (driver.governor) out.writes = driver.governor->writes();
  return out;
}

// The oracle's clocks: every `oracle_step_mhz` from the top down, and the lowest.
std::vector<double> oracle_sweep(const sim::GpuSpec& spec, const EvaluateOptions& o) {
  const ClockLadder ladder = ladder_of(spec);
  std::vector<double> sweep;
  for (double f = spec.sm_max_mhz; f >= spec.sm_min_mhz; f -= o.oracle_step_mhz) {
    sweep.push_back(ladder.floor(Megahertz(f)).value());
  }
  if (sweep.back() != spec.sm_min_mhz) sweep.push_back(spec.sm_min_mhz);
  return sweep;
}

// The best fixed clock of each phase within the budget: the lowest-energy clock of the sweep
// whose phase time stays within (1 + budget) × the phase's time with the driver's default.
std::vector<double> oracle_clocks(const sim::GpuConfig& config, const RunStats& none,
                                  const EvaluateOptions& o, const std::string& what) {
  const auto& spec = *config.spec;
  const std::vector<double> sweep = oracle_sweep(spec, o);
  const std::size_t n = config.workload.phases.size();
  std::vector<double> best_clock(n, 0), best_energy(n);
  for (std::size_t i = 0; i < n; ++i) best_energy[i] = none.phase_energy[i];
  for (double f : sweep) {
    ClockDriver fixed;
    fixed.fixed_mhz = f;
    const RunStats run = run_gpu(config, fixed, o, what);
    for (std::size_t i = 0; i < n; ++i) {
      const bool within =
          run.phase_time[i] <= none.phase_time[i] * (1 + o.policy.max_slowdown) + 1e-9;
      if (within && run.phase_energy[i] < best_energy[i]) {
        best_energy[i] = run.phase_energy[i];
        best_clock[i] = f >= spec.sm_max_mhz ? 0 : f;
      }
    }
  }
  return best_clock;
}

// The oracle's run: each phase at its best clock (oracle_clocks), then held to the budget over
// the whole job. Each phase within its own budget does not make the job so: the clock changes
// on a model tick, so a phase's first partial tick runs at the clock of the phase before (the
// stencil's reduction entered from the halo gap's 345 MHz), and a phase's time is counted in
// whole ticks (3 % of the 100 ms reduction is under one tick). While the job is over, the
// phase that overran its own share most takes the next clock up in the sweep.
RunStats oracle_run(const sim::GpuConfig& config, const RunStats& none, const EvaluateOptions& o,
                    const std::string& what) {
  std::vector<double> clocks = oracle_clocks(config, none, o, what);
  const std::vector<double> sweep = oracle_sweep(*config.spec, o);
  ClockDriver driver;
  driver.per_phase_mhz = &clocks;
  const double budget = o.policy.max_slowdown;
  for (std::size_t round = 0;; ++round) {
    RunStats run = run_gpu(config, driver, o, what);
    if (run.time <= none.time * (1 + budget) + 1e-9 || round > sweep.size() * clocks.size()) {
      return run;
    }
    std::size_t worst = clocks.size();
    double worst_excess = 0;
    for (std::size_t i = 0; i < clocks.size(); ++i) {
      const double excess = run.phase_time[i] - none.phase_time[i] * (1 + budget);
      if (clocks[i] > 0 && excess > worst_excess + 1e-9) {
        worst = i;
        worst_excess = excess;
      }
    }
    if (worst == clocks.size()) return run;  // every locked phase within its share
    double up = 0;                           // released when no sweep clock is above
    for (double f : sweep) {
      if (f > clocks[worst] && f < config.spec->sm_max_mhz) up = f;
    }
    clocks[worst] = up;
  }
}

std::shared_ptr<const sim::GpuSpec> with_knee(std::shared_ptr<const sim::GpuSpec> spec, Knee k) {
  if (k == Knee::model_default || spec->bandwidth_vs_sm_throughput.empty()) return spec;
  auto copy = std::make_shared<sim::GpuSpec>(*spec);
  std::vector<sim::CurvePoint> points;
  for (const auto& p : spec->bandwidth_vs_sm_throughput.points()) {
    points.push_back({1 - (1 - p.x) / kPessimisticKneeSteepness, p.y});
  }
  copy->bandwidth_vs_sm_throughput = sim::Curve(std::move(points));
  return copy;
}

sim::Scenario load(const fs::path& file, const EvaluateOptions& o) {
  std::vector<fs::path> dirs{file.parent_path(), file.parent_path().parent_path()};
  dirs.insert(dirs.end(), o.model_dirs.begin(), o.model_dirs.end());
  sim::Scenario scenario;
  try {
    scenario = sim::load_scenario(file, dirs);
  } catch (const std::exception& e) {
    throw bad_argument(fmt::format("cannot load scenario {}: {}", file.string(), e.what()),
                       "give a simulator scenario file (docs/simulator.md describes the format)");
  }
  bool any = false;
  for (auto& gpu : scenario.gpus) {
    if (!o.input.empty()) {
      const auto activity = sim::input_activity(*gpu.spec, o.input);
      if (!activity) {
        throw bad_argument(fmt::format("bad --input '{}'", o.input),
                           "give zeros, constant, pattern or random");
      }
      for (auto& phase : gpu.workload.phases) phase.data_activity = *activity;
    }
    gpu.spec = with_knee(gpu.spec, o.knee);
    any = any || !gpu.workload.phases.empty();
  }
  if (!any) {
    throw bad_argument(fmt::format("scenario {} has no workload to govern", file.string()),
                       "give a scenario whose GPUs run workload phases");
  }
  return scenario;
}

std::string kind_name(sim::PhaseKind k) {
  switch (k) {
    case sim::PhaseKind::compute:
      return "compute";
    case sim::PhaseKind::memory:
      return "memory";
    case sim::PhaseKind::transfer:
      return "transfer";
    case sim::PhaseKind::p2p:
      return "p2p";
    case sim::PhaseKind::idle:
      return "idle";
    case sim::PhaseKind::off:
      return "off";
  }
  return "unknown";
}

PolicyResult total(std::string policy, const std::vector<RunStats>& runs,
                   const sim::Scenario& scenario) {
  PolicyResult r;
  r.policy = std::move(policy);
  for (std::size_t g = 0; g < runs.size(); ++g) {
    const auto& run = runs[g];
    const auto& phases = scenario.gpus[g].workload.phases;
    for (std::size_t i = 0; i < phases.size(); ++i) {
      if (phases[i].kind == sim::PhaseKind::idle) r.idle_energy_joules += run.phase_energy[i];
      PhaseResult p;
      p.gpu = scenario.gpus[g].index;
      p.index = i;
      p.name = phases[i].name;
      p.kind = kind_name(phases[i].kind);
      p.energy_joules = run.phase_energy[i];
      p.time_seconds = run.phase_time[i];
      p.mean_sm_mhz = run.phase_time[i] > 0 ? run.phase_clock_time[i] / run.phase_time[i] : 0;
      r.phases.push_back(std::move(p));
    }
    r.energy_joules += run.energy;
    r.time_seconds = std::max(r.time_seconds, run.time);
    r.writes += run.writes;
  }
  return r;
}

}  // namespace

std::string_view to_string(Knee k) { return k == Knee::model_default ? "default" : "pessimistic"; }

std::vector<std::string> evaluated_policies() {
  std::vector<std::string> out{"none"};
  for (const auto& p : policy_names()) out.push_back(p);
  out.push_back("oracle");
  return out;
}

const PolicyResult* ScenarioResult::find(std::string_view policy) const {
  for (const auto& r : results) {
    if (r.policy == policy) return &r;
  }
  return nullptr;
}

// What the scenario's working phases move, as ScenarioResult::data says it.
std::string data_of(const sim::Scenario& scenario) {
  double lo = 1;
  double hi = 0;
  // The input name every working phase's activity stands for, where they all agree on one.
  std::optional<std::string> name;
  bool one_name = true;
  for (const auto& gpu : scenario.gpus) {
    for (const auto& phase : gpu.workload.phases) {
      if (phase.kind == sim::PhaseKind::idle || phase.kind == sim::PhaseKind::off) continue;
      lo = std::min(lo, phase.data_activity);
      hi = std::max(hi, phase.data_activity);
      std::optional<std::string> this_name;
      for (const char* input : {"zeros", "constant", "pattern", "random"}) {
        if (sim::input_activity(*gpu.spec, input) == phase.data_activity) this_name = input;
      }
      if (!this_name || (name && *name != *this_name)) one_name = false;
      if (!name) name = this_name;
    }
  }
  if (lo > hi) return "random";
  if (one_name && name) return *name;
  return fmt::format("activity {:g}-{:g}", lo, hi);
}

std::vector<ScenarioResult> evaluate(const EvaluateOptions& o) {
  std::vector<ScenarioResult> out;
  for (const auto& file : o.scenarios) {
    const sim::Scenario scenario = load(file, o);
    ScenarioResult result;
    result.scenario = file.string();
    result.description = scenario.description;
    result.data = data_of(scenario);
    result.knee = o.knee;
    const auto note = [&](const std::string& policy) {
      if (o.progress)
        o.progress(
            fmt::format("{} [{} knee]: {}", file.filename().string(), to_string(o.knee), policy));
    };
    // none: the driver's default clocks; also the reference of every ratio and of the oracle.
    note("none");
    std::vector<RunStats> none_runs;
    for (const auto& gpu : scenario.gpus) {
      none_runs.push_back(run_gpu(gpu, {}, o, file.string()));
    }
    result.results.push_back(total("none", none_runs, scenario));
    for (const auto& name : policy_names()) {
      note(name);
      std::vector<RunStats> runs;
      for (const auto& gpu : scenario.gpus) {
        PolicyOptions policy_options = o.policy;
        policy_options.seed = o.policy.seed + gpu.index;
        Governor governor(make_policy(name, policy_options), ladder_of(*gpu.spec), o.governor);
        ClockDriver driver;
        driver.governor = &governor;
        runs.push_back(run_gpu(gpu, driver, o, file.string()));
      }
      result.results.push_back(total(name, runs, scenario));
    }
    note("oracle (sweeping every " + fmt::format("{:.0f}", o.oracle_step_mhz) + " MHz)");
    std::vector<RunStats> oracle_runs;
    for (std::size_t g = 0; g < scenario.gpus.size(); ++g) {
      const auto& gpu = scenario.gpus[g];
      oracle_runs.push_back(oracle_run(gpu, none_runs[g], o, file.string()));
    }
    result.results.push_back(total("oracle", oracle_runs, scenario));
    const auto& none = result.results.front();
    for (auto& r : result.results) {
      r.energy_saved_ratio = none.energy_joules > 0 ? 1 - r.energy_joules / none.energy_joules : 0;
      r.slowdown_ratio = none.time_seconds > 0 ? r.time_seconds / none.time_seconds - 1 : 0;
      r.idle_energy_saved_ratio =
          none.idle_energy_joules > 0 ? 1 - r.idle_energy_joules / none.idle_energy_joules : 0;
    }
    out.push_back(std::move(result));
  }
  return out;
}

}  // namespace gpuclk::govern
