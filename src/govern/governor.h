// One GPU's governor: classify the interval, ask the policy, and decide whether to write.
// The same code runs in `gpuclk govern` (signals from the sampler, writes through src/control)
// and in `gpuclk govern --evaluate` (signals from the in-process simulator model).
//
// Hysteresis: a decision that raises the clock ceiling (or releases the clocks) is written at
// once — performance and safety first; one that lowers it is written only after `hold_ticks`
// consecutive lowering proposals, and then the highest of them. A workload that changes class
// every interval therefore does not make the governor write every interval. Where the classes
// have been stable — each of the last `stable_runs` class runs lasted at least `stable_ticks`
// intervals; a run of one interval is a transition between two phases (its GPM window
// straddles them) and is not counted — a lowering is written at the first proposal: a phase of
// 60 ms and more does not spend its first intervals at the top clock. Likewise an idle interval
// right after a run of at least `stable_ticks` intervals (the work stopped; a one-interval
// transition between them skipped) lowers at once: the idle clock slows nothing. A class
// flapping every interval or two never looks stable and never counts as work that stopped.
// Missing readings classify as unknown, which every policy answers with "release": never a low
// clock on missing data. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "govern/classifier.h"
#include "govern/policy.h"

namespace gpuclk::govern {

struct GovernorOptions {
  int hold_ticks = 3;
  int stable_ticks = 3;
  int stable_runs = 4;
  ClassifierThresholds thresholds;
};

struct Step {
  PhaseClass phase_class = PhaseClass::unknown;
  Proposal proposal;   // what the policy asked for, and why
  Decision decision;   // what is in force after this step
  bool write = false;  // `decision` differs from what was in force: write it now
};

class Governor {
 public:
  Governor(std::unique_ptr<Policy> policy, ClockLadder ladder, GovernorOptions options = {});

  Step step(const Signals& signals);
  // The last write did not take: the next step writes its decision again.
  void write_failed();

  const Decision& current() const { return current_; }
  const ClockLadder& ladder() const { return ladder_; }
  Policy& policy() { return *policy_; }
  std::uint64_t writes() const { return writes_; }
  std::uint64_t steps() const { return steps_; }

 private:
  std::unique_ptr<Policy> policy_;
  ClockLadder ladder_;
  GovernorOptions options_;
  Decision current_ = Decision::release();  // the driver's own control at start
  bool unwritten_ = false;
  int pending_ = 0;
  PhaseClass run_class_ = PhaseClass::unknown;
  int run_ticks_ = 0;
  std::vector<int> recent_runs_;  // lengths of the last completed class runs, newest last
  int ended_run_ = 0;    // the run before the current one (a one-interval transition skipped)
  int transitions_ = 0;  // one-interval runs since the last longer one
  Decision pending_decision_;
  std::uint64_t writes_ = 0, steps_ = 0;
};

}  // namespace gpuclk::govern
