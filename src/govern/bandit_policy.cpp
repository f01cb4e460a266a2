#include "govern/bandit_policy.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "govern/phase_policy.h"

namespace gpuclk::govern {

BanditPolicy::BanditPolicy(double max_slowdown) : max_slowdown_(max_slowdown) {}

void BanditPolicy::build_arms(const ClockLadder& ladder) {
  std::vector<Arm> levels;
  const Megahertz top = ladder.max();
  for (double f = top.value(); f >= top.value() * kArmFloor - 1e-9; f -= kArmStepMhz) {
    const Megahertz clock = ladder.floor(Megahertz(f));
    if (levels.empty() || levels.back().clock != clock) levels.push_back({clock});
  }
  for (std::size_t c = 0; c < classes_.size(); ++c) classes_[c].arms = levels;
  auto& idle = classes_[static_cast<std::size_t>(PhaseClass::idle)].arms;
  if (idle.back().clock != ladder.min()) idle.push_back({ladder.min()});
  built_ = true;
}

void BanditPolicy::reward(ClassState& state, std::size_t arm, const Signals& s, PhaseClass c,
                          const ClockLadder& ladder) {
  const Megahertz clock = state.arms[arm].clock;
  double slowdown = 0;
  if (c != PhaseClass::idle) {
    const double throughput = throughput_proxy(s, c);
    if (!(throughput > 0)) return;
    if (arm == 0) {
      state.reference_sum += throughput;
      state.reference_count += 1;
    }
    if (state.reference_count == 0) return;  // nothing to compare with yet
    slowdown = (state.reference_sum / state.reference_count) / throughput - 1;
  }
  const double r = (1 - clock / ladder.max()) - kPenalty * std::max(0.0, slowdown - max_slowdown_);
  state.arms[arm].reward_sum += r;
  state.arms[arm].pulls += 1;
  state.total_pulls += 1;
}

std::size_t BanditPolicy::choose(const ClassState& state, std::size_t current) const {
  // Untried arms first, from the top down: exploring steps down gradually.
  for (std::size_t a = 0; a < state.arms.size(); ++a) {
    if (state.arms[a].pulls == 0) return a;
  }
  std::size_t best = 0;
  double best_score = -std::numeric_limits<double>::infinity();
  const double log_total = std::log(std::max(1.0, state.total_pulls));
  for (std::size_t a = 0; a < state.arms.size(); ++a) {
    const auto& arm = state.arms[a];
    double score = arm.reward_sum / arm.pulls + kExploration * std::sqrt(2 * log_total / arm.pulls);
    if (a != current) score -= kSwitchCost;
    if (score > best_score) {
      best_score = score;
      best = a;
    }
  }
  return best;
}

Proposal BanditPolicy::decide(const PolicyInput& in) {
  if (!built_) build_arms(in.ladder);
  const auto c = in.phase_class;
  const double clock = in.signals.sm_clock ? in.signals.sm_clock->value() : 0;
  if (c == PhaseClass::unknown) {
    last_class_ = c;
    return {Decision::release(), "readings missing: max clock"};
  }
  if (c == PhaseClass::power_capped) {
    last_class_ = c;
    return {Decision::release(), "power-capped: the power controller sets the clock"};
  }
  auto& state = classes_[static_cast<std::size_t>(c)];
  // The arm in force now: the one written (or the top when released).
  const Megahertz ceiling = in.current.ceiling_or(in.ladder.max());
  std::size_t arm = 0;
  for (std::size_t a = 0; a < state.arms.size(); ++a) {
    if (state.arms[a].clock >= ceiling) arm = a;
  }
  // Reward an interval spent wholly at the arm's clock in this class.
  if (c == last_class_ && clock > 0 && clock == last_clock_ &&
      std::abs(clock - state.arms[arm].clock.value()) < 0.5) {
    reward(state, arm, in.signals, c, in.ladder);
  }
  last_class_ = c;
  last_clock_ = clock;
  last_arm_ = choose(state, arm);
  const auto& chosen = state.arms[last_arm_];
  const double mean = chosen.pulls > 0 ? chosen.reward_sum / chosen.pulls : 0;
  if (last_arm_ == 0) {
    return {Decision::release(), fmt::format("{}: top arm (mean reward {:.3f}, {} pulls)",
                                             to_string(c), mean, static_cast<long>(chosen.pulls))};
  }
  return {Decision::lock(in.ladder.min(), chosen.clock),
          fmt::format("{}: arm {:.0f} MHz (mean reward {:.3f}, {} pulls)", to_string(c),
                      chosen.clock.value(), mean, static_cast<long>(chosen.pulls))};
}

}  // namespace gpuclk::govern
