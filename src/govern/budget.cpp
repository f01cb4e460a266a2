#include "govern/budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

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

void SlowdownBudget::observe(const PolicyInput& in) {
  if (in.phase_class == PhaseClass::idle) {
    ++gap_;
    after_gap_ = 0;
    return;
  }
  if (gap_ > 0) {
    if (gaps_.size() == kGapHistory) gaps_.erase(gaps_.begin());
    gaps_.push_back({gap_, 0});
    gap_ = 0;
    after_gap_ = 1;  // this interval straddles the gap's end: the next one shows the phase
    return;
  }
  if (after_gap_ == 1) {
    // The phase after the gap, entered: its clock (the controller's under a power cap, the
    // policy's lock, the top clock when released). Missing readings leave nothing to rise to.
    if (in.phase_class != PhaseClass::unknown && in.signals.sm_clock) {
      gaps_.back().next_mhz = in.signals.sm_clock->value();
    }
    after_gap_ = 0;
  }
}

const SlowdownBudget::Gap* SlowdownBudget::predicted_gap() const {
  const std::size_t n = gaps_.size();
  if (n == 1) return &gaps_[0];
  for (std::size_t k = 1; k <= kGapPeriods && k < n; ++k) {
    bool repeats = true;
    for (std::size_t i = k; i < n && repeats; ++i) {
      repeats = std::abs(gaps_[i].length - gaps_[i - k].length) <= 1;
    }
    if (repeats) return &gaps_[n - k];
  }
  return nullptr;
}

double SlowdownBudget::entry_clock(const PolicyInput& in) const {
  if (in.phase_class == PhaseClass::idle || gap_ == 0) return 0;
  const Gap* g = predicted_gap();
  return g ? g->next_mhz : 0;
}

Proposal SlowdownBudget::idle(const PolicyInput& in) const {
  if (budget_ > 0) {
    // Only while the ledger is short (a capped phase gets less than it may take): with budget
    // to spare, entering from the lowest clock costs time that is not worth the rise's energy.
    const bool short_of_budget = capped_allowance() < budget_ * kCappedShare;
    const Gap* g = short_of_budget ? predicted_gap() : nullptr;
    if (g && g->length >= kRiseMinGap && g->next_mhz > 0 && gap_ >= g->length - 1 &&
        gap_ <= g->length + 1) {
      const Megahertz clock = in.ladder.floor(Megahertz(g->next_mhz));
      return {Decision::lock(in.ladder.min(), clock),
              fmt::format("idle, the gap ends as the one a period ago did ({} intervals): {:.0f} "
                          "MHz, the clock the phase after it ran at",
                          g->length, clock.value())};
    }
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

Proposal SlowdownBudget::ending(const PolicyInput& in) const {
  if (in.signals.sm_active && in.signals.sm_active->value() < kEndedActivity) {
    Proposal p = idle(in);
    p.reason = "memory-bound phase ended, SMs mostly idle: " + p.reason;
    return p;
  }
  return {in.current, "memory-bound phase ending: clock kept"};
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
