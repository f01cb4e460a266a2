#include "govern/bandit_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "govern/phase_policy.h"

namespace gpuclk::govern {

BanditPolicy::BanditPolicy(double max_slowdown)
    : max_slowdown_(max_slowdown), budget_(max_slowdown) {}

void BanditPolicy::book(const PolicyInput& in, bool ending) {
  using Kind = SlowdownBudget::Kind;
  // The interval in which a memory phase ended is that phase's tail: booked as memory-bound.
  const auto c = ending ? PhaseClass::memory_bound : in.phase_class;
  const auto lost = [](double s) { return s / (1 + s); };
  const double time = in.signals.time_s;
  // The slowdown of the lock in force: the arm's mean so far (memory-bound); 1/f (compute).
  double s = 0;
  if (in.current.locked && built_) {
    const double f = in.current.max.value();
    s = in.ladder.max().value() / f - 1;
    if (c == PhaseClass::memory_bound) {
      for (const auto& a : classes_[static_cast<std::size_t>(c)].arms) {
        if (a.clock.value() <= f + 0.5 && a.pulls > 0) {
          s = std::max(0.0, a.slowdown_sum / a.pulls);
          break;
        }
      }
    }
  }
  // The interval that ends an idle gap loses against the clock the phase after the last gap ran
  // at (entered from a rise to it: nothing), not against the top clock.
  if (const double entry = budget_.entry_clock(in); entry > 0 && in.current.locked) {
    s = std::max(0.0, entry / in.current.max.value() - 1);
  }
  const double held = budget_.held_slowdown(in.current);
  switch (c) {
    case PhaseClass::idle:
      return budget_.account(time, Kind::earns, 0);
    case PhaseClass::memory_bound:
      return budget_.account(time, Kind::earns, lost(s));
    case PhaseClass::power_capped:
      return budget_.account(time, Kind::capped, 0);
    case PhaseClass::compute_bound:
      if (held > 0) return budget_.account(time, Kind::capped, lost(held));
      return budget_.account(time, Kind::neutral, lost(s));
    case PhaseClass::unknown:
      break;
  }
  budget_.account(time, Kind::neutral, 0);
}
void BanditPolicy::build_arms(const ClockLadder& ladder) {
  std::vector<Arm> levels;
  const Megahertz top = ladder.max();
  for (double f = top.value(); f >= top.value() * kArmFloor - 1e-9; f -= kArmStepMhz) {
    const Megahertz clock = ladder.floor(Megahertz(f));
    if (levels.empty() || levels.back().clock != clock) levels.push_back({clock});
  }
  for (auto& c : classes_) c.arms = levels;
  built_ = true;
}

void BanditPolicy::reward(ClassState& state, std::size_t arm, double throughput,
                          const ClockLadder& ladder) {
  auto& a = state.arms[arm];
  if (arm == 0) {
    if (!state.run_reference_from_top) state.run_reference = state.run_reference_count = 0;
    state.run_reference_from_top = true;
    state.run_reference_count += 1;
    state.run_reference += (throughput - state.run_reference) / state.run_reference_count;
    state.top_sum += throughput;
    state.top_count += 1;
  } else if (state.run_reference_count == 0) {
    // No top-arm interval in this run yet: anchor on this arm's mean slowdown so far, or for
    // an arm not pulled yet on the top arm's mean over every run.
    if (a.pulls > 0) {
      state.run_reference = throughput * (1 + a.slowdown_sum / a.pulls);
    } else if (state.top_count > 0) {
      state.run_reference = state.top_sum / state.top_count;
    } else {
      return;  // nothing to compare with yet
    }
    state.run_reference_count = 1;
  }
  const double slowdown = state.run_reference / throughput - 1;
  // Energy per unit of work, as far as the clock tells it: power a static share plus a part
  // ∝ f, time ∝ 1 + slowdown. A compute-bound arm loses (its time grows as its clock falls and
  // the static power runs longer); a memory-bound one saves nearly its share of clock.
  const double x = a.clock / ladder.max();
  const double r = 1 - (kStaticShare + (1 - kStaticShare) * x) * (1 + slowdown) -
                   kPenalty * std::max(0.0, slowdown - max_slowdown_);
  a.reward_sum += r;
  a.slowdown_sum += slowdown;
  a.pulls += 1;
  state.total_pulls += 1;
}

std::size_t BanditPolicy::candidates(const ClassState& state) const {
  // With no budget, no arm below the top can be within it; trying one already costs.
  if (max_slowdown_ <= 0) return 1;
  const double top = state.arms.front().clock.value();
  // The elasticity measured at the lowest arm tried so far (below the top): where it predicts
  // an untried arm within kSkipShare × the budget, exploration may skip down to it.
  double elasticity = -1;
  for (std::size_t a = state.arms.size(); a-- > 1;) {
    const auto& arm = state.arms[a];
    if (arm.pulls > 0) {
      const double s = std::max(0.0, arm.slowdown_sum / arm.pulls);
      elasticity = std::log(1 + s) / std::log(top / arm.clock.value());
      break;
    }
  }
  std::size_t n = 1;
  while (n < state.arms.size()) {
    const auto& above = state.arms[n - 1];
    if (above.pulls > 0) {
      if (above.slowdown_sum / above.pulls > max_slowdown_) break;
    } else {
      const double predicted = std::pow(top / above.clock.value(), elasticity) - 1;
      if (elasticity < 0 || predicted > kSkipShare * max_slowdown_) break;
    }
    // Where the throughput follows the clock (elasticity ≥ kFollowsClock, as `phase` rules), a
    // lower clock trades time for energy about one for one: not a candidate, nor any below.
    const auto& arm = state.arms[n];
    if (arm.pulls > 0) {
      const double s = std::max(0.0, arm.slowdown_sum / arm.pulls);
      if (std::log(1 + s) >= kFollowsClock * std::log(top / arm.clock.value())) break;
    }
    ++n;
  }
  return n;
}

std::size_t BanditPolicy::choose(const ClassState& state, std::size_t current) const {
  const std::size_t n = candidates(state);
  // Untried candidates first, the lowest one below every arm tried within the budget:
  // exploring steps down, skipping the arms the measured elasticity puts well within the budget
  // (a skipped arm above one that stayed within it would only save less: never tried).
  std::size_t lowest_within = 0;
  for (std::size_t a = 0; a < n; ++a) {
    const auto& arm = state.arms[a];
    if (arm.pulls > 0 && arm.slowdown_sum / arm.pulls <= max_slowdown_) lowest_within = a;
  }
  if (state.arms[0].pulls == 0) return 0;
  for (std::size_t a = n; a-- > lowest_within + 1;) {
    if (state.arms[a].pulls == 0) return a;
  }
  std::size_t best = 0;
  double best_score = -std::numeric_limits<double>::infinity();
  const double log_total = std::log(std::max(1.0, state.total_pulls));
  for (std::size_t a = 0; a < n; ++a) {
    const auto& arm = state.arms[a];
    if (arm.pulls == 0) continue;
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
  const bool new_run = c != last_class_;
  const bool ending = memory_phase_ending(in.signals, c, last_class_);
  last_class_ = c;
  book(in, ending);
  budget_.observe(in);
  if (c == PhaseClass::unknown) {
    pending_.reset();
    budget_.end_stretch();
    return {Decision::release(), "readings missing: max clock"};
  }
  if (c == PhaseClass::power_capped) return budget_.capped(in);
  if (c == PhaseClass::idle) {
    budget_.end_stretch();
    return budget_.idle(in);
  }
  if (c == PhaseClass::compute_bound) {
    if (auto held = budget_.held(in)) return *held;
    if (ending) {
      pending_.reset();
      return budget_.ending(in);
    }
  } else {
    budget_.end_stretch();
  }
  auto& state = classes_[static_cast<std::size_t>(c)];
  if (new_run) {
    state.run_reference = state.run_reference_count = 0;
    state.run_reference_from_top = false;
  }
  // The arm in force now: the one written (or the top when released).
  const Megahertz ceiling = in.current.ceiling_or(in.ladder.max());
  std::size_t arm = 0;
  for (std::size_t a = 0; a < state.arms.size(); ++a) {
    if (state.arms[a].clock >= ceiling) arm = a;
  }
  // Reward an interval spent wholly at the arm's clock in this class run, once the next
  // interval shows the run went on: the last interval of a run straddles the next phase.
  if (new_run) pending_.reset();
  if (pending_) reward(state, pending_->arm, pending_->throughput, in.ladder);
  pending_.reset();
  const double throughput = throughput_proxy(in.signals, c);
  // Released, the top arm is whatever clock the driver runs (a thermal limit may hold it lower).
  const bool at_arm =
      arm == 0 ? !in.current.locked : std::abs(clock - state.arms[arm].clock.value()) < 0.5;
  if (!new_run && clock > 0 && clock == last_clock_ && throughput > 0 && at_arm) {
    pending_ = Pending{arm, throughput};
  }
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
