// `gpuclk govern --evaluate`: runs scenarios on the simulator model in-process, with simulated
// time (no wall-clock waiting), once per policy — none (the driver's default), threshold, geopm,
// phase, bandit — and once with the per-phase oracle (the best fixed clock for each phase within
// the slowdown budget, found by sweeping every clock). The policies run inside the same
// Governor (classification, hysteresis, write decisions) that `gpuclk govern` runs on a GPU;
// their signals are what NVML would report (GPM over the interval, utilisation over the
// driver's 1 s window, clock event reasons), built from the model state.
// Phases are amounts of work, so a slower clock shows up as a longer job: energy and time are
// measured from the workload's start to its end (for a repeating workload, `iterations` passes).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "govern/governor.h"
#include "govern/policy.h"

namespace gpuclk::govern {

// How bandwidth falls below the knee clock: the model's curve (default) or falling earlier
// (pessimistic: the bandwidth lost at clock fraction x is what the default loses at 1 − 2(1 − x)).
enum class Knee { model_default, pessimistic };
std::string_view to_string(Knee k);  // "default", "pessimistic"
inline constexpr double kPessimisticKneeSteepness = 2.0;

struct EvaluateOptions {
  std::vector<std::filesystem::path> scenarios;
  std::vector<std::filesystem::path> model_dirs;  // searched after each scenario's own folders
  Knee knee = Knee::model_default;
  // Every phase's data instead of the scenario's own `input`: "zeros", "constant", "pattern" or
  // "random" (empty: as the scenario says). Random data draws the most power.
  std::string input;
  double interval_s = 0.02;
  int iterations = 3;           // passes of a repeating workload
  double oracle_step_mhz = 30;  // the oracle's sweep grid
  double time_limit_s = 3600;   // simulated; a run that does not finish is an error
  PolicyOptions policy;
  GovernorOptions governor;
  std::function<void(const std::string&)> progress;  // one line per run (may be empty)
};

// One workload phase of one GPU under one policy, summed over the passes: where the energy goes.
struct PhaseResult {
  unsigned gpu = 0;
  std::size_t index = 0;  // in the workload
  std::string name;
  std::string kind;  // compute, memory, transfer, idle, off
  double energy_joules = 0;
  double time_seconds = 0;
  double mean_sm_mhz = 0;  // time-weighted SM clock while the phase ran
};

struct PolicyResult {
  std::string policy;  // none, threshold, geopm, phase, bandit, oracle
  double energy_joules = 0;
  double time_seconds = 0;
  double energy_saved_ratio = 0;       // 1 − energy / energy(none)
  double slowdown_ratio = 0;           // time / time(none) − 1
  std::uint64_t writes = 0;            // clock writes the governor made (all GPUs)
  double idle_energy_joules = 0;       // spent in the workload's idle phases (context held)
  double idle_energy_saved_ratio = 0;  // 1 − idle energy / idle energy(none); 0 without idle phases
  std::vector<PhaseResult> phases;     // every GPU's phases, in workload order
};

struct ScenarioResult {
  std::string scenario;  // the path as given
  std::string description;
  // The data its kernels move, which sets their power (the phases' `input`): "random" (the
  // default, what training data is closest to), "zeros", or "activity LO-HI" when they differ.
  std::string data;
  Knee knee = Knee::model_default;
  std::vector<PolicyResult> results;  // none first, oracle last

  const PolicyResult* find(std::string_view policy) const;
};

// Throws gpuclk::Error (exit 2) for a scenario that cannot be loaded, has no workload, or does
// not finish within time_limit_s.
std::vector<ScenarioResult> evaluate(const EvaluateOptions& options);

// The policies evaluated, in order: none, then policy_names(), then oracle.
std::vector<std::string> evaluated_policies();

}  // namespace gpuclk::govern
