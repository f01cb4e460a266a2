#include "govern/phase_policy.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpuclk::govern {

double throughput_proxy(const Signals& s, PhaseClass c) {
  if (c == PhaseClass::memory_bound) {
    if (!s.dram_active) return 0;
    return s.dram_active->value() * (s.memory_clock ? s.memory_clock->value() : 1.0);
  }
  if (c == PhaseClass::compute_bound) {
    if (!s.sm_clock) return 0;
    double pipe = s.pipe_active();
    if (pipe <= 0 && s.sm_active) pipe = s.sm_active->value();
    return pipe * s.sm_clock->value();
  }
  return 0;
}

bool memory_phase_ending(const Signals& s, PhaseClass c, PhaseClass last) {
  return c == PhaseClass::compute_bound && last == PhaseClass::memory_bound &&
         s.pipe_active() < ClassifierThresholds{}.idle_activity;
}

// Priors: a compute-bound phase's throughput follows the clock; a memory-bound one's little
// (pessimistic against the measured knee: see docs/govern.md).
PhasePolicy::PhasePolicy(double max_slowdown)
    : max_slowdown_(max_slowdown),
      sensitivity_{ClockSensitivity(1.0), ClockSensitivity(0.3), ClockSensitivity(0.0),
                   ClockSensitivity(1.0), ClockSensitivity(1.0)},
      budget_(max_slowdown) {}

void PhasePolicy::book(const PolicyInput& in) {
  using Kind = SlowdownBudget::Kind;
  // The interval in which a memory phase ended is that phase's tail: booked as memory-bound.
  const auto c = memory_phase_ending(in.signals, in.phase_class, last_class_)
                     ? PhaseClass::memory_bound
                     : in.phase_class;
  // The share of the interval's work lost to the lock in force: time(top) / time(f) = 1/(1+s).
  // Also in the intervals a lock chosen for the previous phase still holds (a transition).
  const auto lost = [](double s) { return s / (1 + s); };
  const double held = budget_.held_slowdown(in.current);
  double s = 0;
  if (in.current.locked && (c == PhaseClass::compute_bound || c == PhaseClass::memory_bound)) {
    s = sensitivity_[static_cast<std::size_t>(c)].slowdown(in.current.max, in.ladder.max());
  }
  // The interval that ends an idle gap loses against the clock the phase after the last gap ran
  // at (entered from a rise to it: nothing), not against the top clock.
  if (const double entry = budget_.entry_clock(in); entry > 0 && in.current.locked) {
    s = std::max(0.0, entry / in.current.max.value() - 1);
  }
  switch (c) {
    case PhaseClass::idle:
      return budget_.account(in.signals.time_s, Kind::earns, 0);
    case PhaseClass::memory_bound:
      return budget_.account(in.signals.time_s, Kind::earns, lost(s));
    case PhaseClass::power_capped:
      return budget_.account(in.signals.time_s, Kind::capped, 0);
    case PhaseClass::compute_bound:
      if (held > 0) return budget_.account(in.signals.time_s, Kind::capped, lost(held));
      return budget_.account(in.signals.time_s, Kind::neutral, lost(s));
    case PhaseClass::unknown:
      break;
  }
  budget_.account(in.signals.time_s, Kind::neutral, 0);
}

Proposal PhasePolicy::decide(const PolicyInput& in) {
  Proposal p = decide_class(in);
  last_proposal_ = p.decision;
  return p;
}

Proposal PhasePolicy::decide_class(const PolicyInput& in) {
  const auto c = in.phase_class;
  book(in);
  budget_.observe(in);
  const bool ending = memory_phase_ending(in.signals, c, last_class_);
  if (c != last_class_) ++run_;
  last_class_ = c;
  // Learn from intervals whose clock held since the last one (a GPM window that straddles a
  // clock change mixes two clocks).
  if (in.signals.sm_clock) {
    const double clock = in.signals.sm_clock->value();
    if (clock == last_clock_ && (c == PhaseClass::compute_bound || c == PhaseClass::memory_bound)) {
      sensitivity_[static_cast<std::size_t>(c)].observe(run_, *in.signals.sm_clock,
                                                        throughput_proxy(in.signals, c));
    }
    last_clock_ = clock;
  }
  switch (c) {
    case PhaseClass::unknown:
      budget_.end_stretch();
      return {Decision::release(), "readings missing: max clock"};
    case PhaseClass::power_capped:
      return budget_.capped(in);
    case PhaseClass::idle:
      budget_.end_stretch();
      return budget_.idle(in);
    case PhaseClass::compute_bound:
      if (auto held = budget_.held(in)) return *held;
      if (ending) return budget_.ending(in);
      return throughput_class(in);
    case PhaseClass::memory_bound:
      budget_.end_stretch();
      return throughput_class(in);
  }
  return {Decision::release(), "unhandled class"};
}

Proposal PhasePolicy::throughput_class(const PolicyInput& in) {
  const auto& model = sensitivity_[static_cast<std::size_t>(in.phase_class)];
  const Megahertz top = in.ladder.max();
  const double e_top = model.elasticity_at(top - Megahertz(1));
  if (e_top >= kFollowsClock) {
    return {Decision::release(), fmt::format("{}: throughput follows the clock (elasticity {:.2f})",
                                             to_string(in.phase_class), e_top)};
  }
  const double budget = max_slowdown_ * kBudgetShare;
  Megahertz floor = in.ladder.min();
  if (model.lowest_observed().value() > 0) {
    floor = std::max(floor, model.lowest_observed() - Megahertz(kExploreStepMhz));
  } else {
    floor = std::max(floor, top - Megahertz(kExploreStepMhz));
  }
  Megahertz pick = top;
  for (auto it = in.ladder.clocks().rbegin(); it != in.ladder.clocks().rend(); ++it) {
    if (*it < floor) break;
    if (model.slowdown(*it, top) > budget) break;
    pick = *it;
  }
  if (pick >= top) {
    return {Decision::release(), fmt::format("{}: no lower clock within {:.1f} % slowdown",
                                             to_string(in.phase_class), budget * 100)};
  }
  return {Decision::lock(in.ladder.min(), pick),
          fmt::format("{}: predicted slowdown {:.1f} % at {:.0f} MHz (elasticity {:.2f})",
                      to_string(in.phase_class), model.slowdown(pick, top) * 100, pick.value(),
                      model.elasticity_at(pick))};
}

}  // namespace gpuclk::govern
