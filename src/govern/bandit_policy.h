// `bandit`: an online learner over clock levels per class (UCB1 with a switching cost, after
// EnergyUCB). Arms: the top clock and levels below it in `kArmStepMhz` down to `kArmFloor` × max
// (idle also has the lowest clock). Reward of an interval at clock f: the share of clock given
// up, 1 − f / f_max (a stand-in for energy: the fast path reads no energy counter), minus
// `kPenalty` × the slowdown beyond the budget, where slowdown = throughput at the top arm /
// throughput now − 1 (throughput_proxy of phase_policy.h). Power-capped and unknown: released.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "govern/policy.h"

namespace gpuclk::govern {

class BanditPolicy final : public Policy {
 public:
  static constexpr double kArmStepMhz = 90;
  static constexpr double kArmFloor = 0.6;
  static constexpr double kPenalty = 30;
  static constexpr double kExploration = 0.05;
  static constexpr double kSwitchCost = 0.01;

  explicit BanditPolicy(double max_slowdown);
  std::string_view name() const override { return "bandit"; }
  Proposal decide(const PolicyInput& input) override;

  struct Arm {
    Megahertz clock;
    double reward_sum = 0;
    double pulls = 0;
  };
  const std::vector<Arm>& arms(PhaseClass c) const {
    return classes_[static_cast<std::size_t>(c)].arms;
  }

 private:
  struct ClassState {
    std::vector<Arm> arms;                          // descending clock; arms[0] is the top
    double reference_sum = 0, reference_count = 0;  // throughput at the top arm
    double total_pulls = 0;
  };
  void build_arms(const ClockLadder& ladder);
  void reward(ClassState& state, std::size_t arm, const Signals& signals, PhaseClass c,
              const ClockLadder& ladder);
  std::size_t choose(const ClassState& state, std::size_t current) const;

  double max_slowdown_;
  bool built_ = false;
  std::array<ClassState, kPhaseClassCount> classes_;
  PhaseClass last_class_ = PhaseClass::unknown;
  std::size_t last_arm_ = 0;
  double last_clock_ = 0;
};

}  // namespace gpuclk::govern
