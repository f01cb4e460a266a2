#include "govern/budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuclk::govern {

void SlowdownBudget::account(double time_s, Kind kind, double lost) {
  if (time_s <= last_time_s_) return;  // a reading without time (missing data) books nothing
  if (last_time_s_ >= 0) {
    // A gap in the readings is not all of this interval's kind: book at most kMaxBookedS.
    const double dt = std::min(time_s - last_time_s_, kMaxBookedS);
    if (kind == Kind::earns) earned_s_ += budget_ * dt;
    if (kind == Kind::capped) capped_s_ += dt;
    spent_s_ += dt * std::clamp(lost, 0.0, 1.0);
    if (kind == Kind::capped) spent_capped_s_ += dt * std::clamp(lost, 0.0, 1.0);
  }
  last_time_s_ = time_s;
}

double SlowdownBudget::capped_allowance() const {
  if (earned_s_ - spent_s_ <= 0) return 0;
  // What the other phases left, spread over every power-capped second so far: the rate a held
  // phase may lose and, kept up, end with the ledger even (the spare after what the capped
  // phases spent would ration them down to half of it).
  const double left = earned_s_ - (spent_s_ - spent_capped_s_);
  const double cap = budget_ * kCappedShare;
  return capped_s_ > 0 ? std::min(cap, left / capped_s_) : cap;
}

double SlowdownBudget::held_slowdown(const Decision& current) const {
  if (cap_mhz_ <= 0 || !current.locked || current.max.value() >= cap_mhz_) return 0;
  return cap_mhz_ / current.max.value() - 1;
}

Proposal SlowdownBudget::lock_below(const PolicyInput& in, const char* what) {
  const double allowance = capped_allowance();
  // The highest step within the allowance (ceil: never more than the allowance below the cap).
  const Megahertz target = in.ladder.ceil(Megahertz(cap_mhz_ / (1 + allowance)));
  if (allowance <= 0 || target >= Megahertz(cap_mhz_) || target >= in.ladder.max()) {
    return {Decision::release(), "power-capped: the power controller sets the clock"};
  }
  return {Decision::lock(in.ladder.min(), target),
          fmt::format("{}: {:.0f} MHz, {:.1f} % under the controller's {:.0f} MHz (budget left)",
                      what, target.value(), (cap_mhz_ / target.value() - 1) * 100, cap_mhz_)};
}

Proposal SlowdownBudget::idle(const PolicyInput& in) const {
  if (budget_ > 0) {
    return {Decision::lock(in.ladder.min(), in.ladder.min()),
            "idle with nothing running: lowest clock"};
  }
  // Before any burst was capped: the base clock, the one a GPU sustains at its power limit
  // under full load (GEOPM's agent idles there too).
  const Megahertz clock =
      last_cap_mhz_ > 0 ? in.ladder.floor(Megahertz(last_cap_mhz_)) : in.ladder.base();
  if (last_cap_mhz_ <= 0) {
    return {Decision::lock(in.ladder.min(), clock),
            fmt::format("idle, no slowdown budget: base clock {:.0f} MHz (no power cap seen yet)",
                        clock.value())};
  }
  return {Decision::lock(in.ladder.min(), clock),
          fmt::format("idle, no slowdown budget: {:.0f} MHz, the power controller's clock of the "
                      "last burst",
                      clock.value())};
}

Proposal SlowdownBudget::capped(const PolicyInput& in) {
  held_ = 0;
  if (!in.signals.sm_clock) return {Decision::release(), "power-capped: no clock reading"};
  cap_mhz_ = in.signals.sm_clock->value();
  cap_pipe_ = in.signals.pipe_active();
  last_cap_mhz_ = cap_mhz_;
  return lock_below(in, "power-capped");
}

std::optional<Proposal> SlowdownBudget::held(const PolicyInput& in) {
  // Held under the cap, a kernel of the same mix keeps its pipe activity (the clock it lost is
  // the allowance); another kernel (a decode after a prefill) does not: it is not held.
  const bool same_kernel = in.signals.pipe_active() >= kSamePipe * cap_pipe_;
  if (cap_mhz_ <= 0 || !in.current.locked || in.current.max.value() >= cap_mhz_ || !same_kernel) {
    end_stretch();
    return std::nullopt;
  }
  if (++held_ >= kProbeIntervals) {
    end_stretch();
    return Proposal{Decision::release(), "power-capped phase held under the cap: probing the cap"};
  }
  Proposal p = lock_below(in, "power-capped phase held under the cap");
  // The allowance drifts as the ledger fills: keep the lock unless it moves by more than a step.
  if (p.decision.locked && std::abs(p.decision.max.value() - in.current.max.value()) <= 15.5) {
    p.decision = in.current;
  }
  return p;
}

}  // namespace gpuclk::govern
