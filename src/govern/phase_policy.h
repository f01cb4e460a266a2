// `phase` (gpuclk's own): per class, the lowest clock whose predicted slowdown stays within the
// budget, from each class's clock sensitivity learned online (sensitivity.h).
//   compute- and memory-bound: a class whose throughput follows the clock (elasticity ≥ 0.5 at
//     the top clock) keeps it (released): there a lower clock trades time for energy about
//     one for one. Otherwise the lowest clock within the budget, descending at most
//     `kExploreStep` below the lowest clock the class was seen at, so a wrong prior costs a step.
//   idle (context held, nothing runs): the lowest clock — there is no work to slow.
//   power-capped: the power controller sets the clock; never above it, and below it only by
//     the budget the other phases left (budget.h); released when none is left.
//   unknown (missing readings): released — never a low clock on missing data.
#pragma once

#include <array>
#include <cstdint>

#include "govern/budget.h"
#include "govern/policy.h"
#include "govern/sensitivity.h"

namespace gpuclk::govern {

// Work done per second, in any unit, for the throughput-following classes: DRAM activity ×
// memory clock for memory-bound, the busiest pipe's activity × SM clock for compute-bound.
// 0 when the readings are missing.
double throughput_proxy(const Signals& signals, PhaseClass phase_class);

// An interval that reads compute-bound although nothing computed in it (the busiest pipe below
// the idle threshold) right after a memory-bound one: the memory-bound phase ended inside the
// interval (its GPM window straddles the end). Not a compute phase to release the clock for:
// the clock in force is kept, and the next interval tells what follows.
bool memory_phase_ending(const Signals& signals, PhaseClass phase_class, PhaseClass last_class);

class PhasePolicy final : public Policy {
 public:
  static constexpr double kBudgetShare = 1.0;   // of the budget the predicted slowdown may use
  static constexpr double kFollowsClock = 0.5;  // elasticity at which the clock is kept
  static constexpr double kExploreStepMhz = 150;

  explicit PhasePolicy(double max_slowdown);
  std::string_view name() const override { return "phase"; }
  Proposal decide(const PolicyInput& input) override;

  const ClockSensitivity& sensitivity(PhaseClass c) const {
    return sensitivity_[static_cast<std::size_t>(c)];
  }

 private:
  Proposal decide_class(const PolicyInput& in);
  Proposal throughput_class(const PolicyInput& in);

  // Books the interval that ended in the budget's ledger.
  void book(const PolicyInput& in);

  double max_slowdown_;
  std::array<ClockSensitivity, kPhaseClassCount> sensitivity_;
  SlowdownBudget budget_;
  Decision last_proposal_;
  PhaseClass last_class_ = PhaseClass::unknown;
  std::uint64_t run_ = 0;
  double last_clock_ = 0;
};

}  // namespace gpuclk::govern
