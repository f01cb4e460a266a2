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
// not capped then gets the top clock back). The ledger's own costs are kept low where they can be
// seen coming: a repeating workload's idle gap ends at the clock the phase after it ran at the
// last time (`idle`), and the interval that ends a gap is booked against that clock. Not
// thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "govern/policy.h"

namespace gpuclk::govern {

class SlowdownBudget {
 public:
  static constexpr double kCappedShare = 2.0;  // × the budget: the most a capped phase is slowed
  static constexpr int kProbeIntervals = 50;   // a release every 1 s at 20 ms
  static constexpr double kSamePipe = 0.8;     // held: pipe activity ≥ this × the capped one
  static constexpr double kMaxBookedS = 0.25;  // the longest interval the ledger books
  // An idle gap of at least this many intervals ends at the clock the phase after the last such
  // gap ran at (shorter ones: one interval at that clock costs over a tenth of what they save).
  static constexpr int kRiseMinGap = 10;
  // A memory phase that ended inside an interval in which the SMs were busy less than this share
  // of the time (and no pipe computed): what follows runs nothing so far.
  static constexpr double kEndedActivity = 0.5;

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
  // Every interval, before the policy decides: the length of each idle gap (in intervals) and
  // the clock the phase after it ran at once entered (the interval after the one that straddles
  // the gap's end), for `idle`.
  void observe(const PolicyInput& in);
  // Before `observe`: when this interval ends an idle gap (it straddles the gap's end), the clock
  // the phase after the predicted gap ran at — the clock against which a lock in force in it
  // loses work (a power-capped phase entered at its controller's clock loses nothing); else 0.
  double entry_clock(const PolicyInput& in) const;
  // An idle interval: the lowest clock. With no budget at all (--max-slowdown 0) the burst that
  // ends the gap must not start slower than it would have: the clock the power controller held
  // the last power-capped burst at (entered from it, a capped burst loses nothing), or the top
  // clock before any was seen. A repeating workload's gap ends as the gap a period before it
  // did (predicted_gap): while the ledger is short (a capped phase gets less than it may take),
  // from one interval before that gap's length to one after it, a gap of at least `kRiseMinGap`
  // intervals holds the clock the phase after that gap ran at, so the phase is not entered from
  // the lowest clock (one interval of it costs a power-capped GEMM most of an interval's work,
  // which the ledger would pay instead of holding the GEMM under the cap).
  Proposal idle(const PolicyInput& in) const;
  // The interval in which a memory-bound phase ended with no pipe busy after it
  // (memory_phase_ending in phase_policy.h). When the SMs were busy less than kEndedActivity of
  // it, the work stopped for most of it: the idle clock at once (as GEOPM's agent lowers by
  // SM_ACTIVE / UTIL there), else the clock in force (the next interval tells what follows).
  Proposal ending(const PolicyInput& in) const;
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
  struct Gap {
    int length = 0;       // idle intervals
    double next_mhz = 0;  // the clock the phase after it ran at (0: not seen)
  };
  // The gap now, as the last gaps predict it: the one a period of the workload ago, for the
  // shortest period (1 to kGapPeriods gaps) that every remembered gap repeats (±1 interval);
  // with one gap remembered, that one. None when no period fits (gaps of varying length).
  const Gap* predicted_gap() const;
  static constexpr std::size_t kGapHistory = 8, kGapPeriods = 4;

  int gap_ = 0;            // idle intervals in the gap now (0: not in one)
  std::vector<Gap> gaps_;  // the last kGapHistory gaps, oldest first
  int after_gap_ = 0;      // 1: the interval after the one that ended the last gap comes next
};

}  // namespace gpuclk::govern
