// The slowdown budget over the whole job, and spending what the idle and memory-bound phases
// leave on the power-capped ones.
//
// A power-capped phase (BF16 GEMMs under the 700 W limit) runs at whatever clock the power
// controller allows; below it, time and energy trade about one for one (the voltage there is
// above its floor, so each MHz given up saves its V²f share). Memory-bound phases use the
// budget far better (a fifth of their energy for 3 % of their time) and idle phases need none
// of theirs. So the budget that idle and memory-bound intervals earn (budget × their time) and
// do not spend (the slowdown their clock is predicted to cost, as the policy books it) may be
// spent on power-capped phases: locked below the controller's clock by the spare seconds over
// the power-capped seconds so far, at most `kCappedShare` × the budget. A job with nothing
// but compute never gets a lock under the cap (the compute-bound goal: ≤ 1 % slowdown).
// Held under the cap, the phase no longer reads as power-capped (the lock, not the controller,
// holds the clock): while the lock is below the clock the controller chose in the same busy
// stretch, a compute-bound interval whose busiest pipe is as busy as under the cap keeps the
// lock (another kernel — a decode after a prefill — is not held); every `kProbeIntervals` the lock
// is released for one interval to see whether the controller still caps (a following kernel that is
// not capped then gets the top clock back). Not thread-safe.
#pragma once

#include <optional>

#include "govern/policy.h"

namespace gpuclk::govern {

class SlowdownBudget {
 public:
  static constexpr double kCappedShare = 2.0;  // × the budget: the most a capped phase is slowed
  static constexpr int kProbeIntervals = 50;   // a release every 1 s at 20 ms
  static constexpr double kSamePipe = 0.8;     // held: pipe activity ≥ this × the capped one
  static constexpr double kMaxBookedS = 0.25;  // the longest interval the ledger books

  explicit SlowdownBudget(double max_slowdown) : budget_(max_slowdown) {}

  // What an interval was, for the ledger: it earns budget (idle, memory-bound), spends it on a
  // power-capped phase, or neither (compute-bound, missing readings).
  enum class Kind { earns, capped, neutral };
  // Books the interval that just ended (from the last signals' time to this one's): its kind
  // and the share of its work the clock in force lost against the top clock (predicted by the
  // policy: 1 − time(top)/time(f)), also for a transition (a lock chosen for the phase before).
  void account(double time_s, Kind kind, double lost);
  // The slowdown a power-capped phase may take now (0: none left).
  double capped_allowance() const;

  // A power-capped interval: a lock below the controller's clock (or release when the budget
  // has nothing left). Remembers the controller's clock for `held`.
  Proposal capped(const PolicyInput& in);
  // A compute-bound interval: when it is a power-capped phase this budget holds under the cap,
  // the proposal that keeps it there (or the periodic release that probes the cap); else empty.
  std::optional<Proposal> held(const PolicyInput& in);
  // An idle interval: the lowest clock. With no budget at all (--max-slowdown 0) the burst that
  // ends the gap must not start slower than it would have: the clock the power controller held
  // the last power-capped burst at (entered from it, a capped burst loses nothing), or the top
  // clock before any was seen.
  Proposal idle(const PolicyInput& in) const;
  // The busy stretch ended (idle, memory-bound, missing readings): forget the capped clock.
  void end_stretch() { cap_mhz_ = 0, cap_pipe_ = 0, held_ = 0; }
  // The slowdown the lock in force costs a phase held under the cap (0 when none is held).
  double held_slowdown(const Decision& current) const;

 private:
  Proposal lock_below(const PolicyInput& in, const char* what);

  double budget_;
  double last_time_s_ = -1;
  double earned_s_ = 0;        // budget × the time of intervals that earn
  double spent_s_ = 0;         // predicted time lost, every interval
  double capped_s_ = 0;        // time of power-capped intervals (held or not)
  double spent_capped_s_ = 0;  // the part of spent_s_ that power-capped intervals lost
  double cap_mhz_ = 0;         // the controller's clock in this busy stretch (0: none)
  double cap_pipe_ = 0;        // the busiest pipe's activity then
  int held_ = 0;               // intervals held under the cap since the last probe
  double last_cap_mhz_ = 0;    // the controller's clock at the last power-capped interval
};

}  // namespace gpuclk::govern
