// `bandit`: an online learner over clock levels per class (UCB1 with a switching cost, after
// EnergyUCB). Arms: the top clock and levels below it in `kArmStepMhz` down to `kArmFloor` × max.
// Reward of an interval at clock f: 1 − (σ + (1 − σ) f / f_max) × (1 + slowdown), the energy
// per unit of work saved if a share σ = `kStaticShare` of the power stayed and the rest
// followed the clock (a stand-in: the fast path reads no energy counter; a compute-bound arm
// loses, a memory-bound one saves nearly its share of clock), minus `kPenalty` × the slowdown
// beyond the budget, where slowdown = throughput at the top arm / throughput now − 1
// (throughput_proxy of phase_policy.h). The top arm's throughput is the one of the same class run
// (one stretch of the class: one kernel mix) when the run had an interval there, else the run's
// first interval at a lower arm scaled by that arm's mean slowdown so far: phases of one class but
// different efficiency (a 55 % and a 70 % decode) are never compared with each other. Exploration
// descends: an arm is a candidate only when the arm above it was tried and its mean slowdown stayed
// within the budget — or, untried, is predicted within `kSkipShare` × the budget by the elasticity
// ln(1 + slowdown) / ln(f_max / f) measured at the lowest arm tried — and it is dropped (with every
// arm below) once its measured elasticity reaches `kFollowsClock`: a compute-bound class tries one
// arm below the top, then keeps the top. Untried candidates go first, the lowest one below every
// arm tried within the budget (a skipped arm above such an arm would only save less). With no
// budget only the top arm is a candidate. Idle (nothing runs, nothing to slow): the lowest clock,
// no arms. Power-capped: under the controller's clock by the budget the idle and memory-bound
// phases left, as `phase` does (budget.h; the ledger books each memory arm at its mean slowdown).
// Unknown: released.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "govern/budget.h"
#include "govern/policy.h"

namespace gpuclk::govern {

class BanditPolicy final : public Policy {
 public:
  static constexpr double kArmStepMhz = 45;
  static constexpr double kArmFloor = 0.6;
  static constexpr double kPenalty = 30;
  // Of a busy H100's power, what does not follow the SM clock: ~75 W idle of 540–700 W.
  static constexpr double kStaticShare = 0.12;
  static constexpr double kExploration = 0.02;
  static constexpr double kSwitchCost = 0.01;
  static constexpr double kFollowsClock = 0.5;  // an arm at this elasticity is dropped
  // Exploration skips down to the arms the measured elasticity predicts within this × the budget.
  static constexpr double kSkipShare = 1.0;

  explicit BanditPolicy(double max_slowdown);
  std::string_view name() const override { return "bandit"; }
  Proposal decide(const PolicyInput& input) override;

  struct Arm {
    Megahertz clock;
    double reward_sum = 0;
    double pulls = 0;
    double slowdown_sum = 0;  // measured slowdown against the top arm, summed over the pulls
  };
  const std::vector<Arm>& arms(PhaseClass c) const {
    return classes_[static_cast<std::size_t>(c)].arms;
  }

 private:
  struct ClassState {
    std::vector<Arm> arms;  // descending clock; arms[0] is the top
    double total_pulls = 0;
    // The current class run's throughput at the top arm (0: none yet).
    double run_reference = 0, run_reference_count = 0;
    bool run_reference_from_top = false;
    double top_sum = 0, top_count = 0;  // the top arm's throughput over every run
  };
  void build_arms(const ClockLadder& ladder);
  void reward(ClassState& state, std::size_t arm, double throughput, const ClockLadder& ladder);
  std::size_t candidates(const ClassState& state) const;  // arms [0, n) may be chosen
  std::size_t choose(const ClassState& state, std::size_t current) const;
  // The interval that ended, in the budget's ledger (`ending`: a memory phase ended in it).
  void book(const PolicyInput& in, bool ending);

  double max_slowdown_;
  bool built_ = false;
  SlowdownBudget budget_;
  std::array<ClassState, kPhaseClassCount> classes_;
  struct Pending {
    std::size_t arm;
    double throughput;
  };
  std::optional<Pending> pending_;  // the last clean interval, rewarded if the run goes on
  PhaseClass last_class_ = PhaseClass::unknown;
  std::size_t last_arm_ = 0;
  double last_clock_ = 0;
};

}  // namespace gpuclk::govern
