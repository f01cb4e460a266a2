#include "govern/governor.h"

namespace gpuclk::govern {

Governor::Governor(std::unique_ptr<Policy> policy, ClockLadder ladder, GovernorOptions options)
    : policy_(std::move(policy)), ladder_(std::move(ladder)), options_(options) {}

void Governor::write_failed() { unwritten_ = true; }

Step Governor::step(const Signals& signals) {
  ++steps_;
  Step out;
  out.phase_class = classify(signals, options_.thresholds);
  if (out.phase_class != run_class_) {
    // A run of one interval is a transition (its GPM window straddles two phases), not a
    // phase: it neither makes the workload unstable nor stable.
    if (run_ticks_ > 1) {
      recent_runs_.push_back(run_ticks_);
      if (recent_runs_.size() > static_cast<std::size_t>(options_.stable_runs)) {
        recent_runs_.erase(recent_runs_.begin());
      }
      ended_run_ = run_ticks_;
      transitions_ = 0;
    } else if (++transitions_ > 1) {
      ended_run_ = run_ticks_;  // two short runs in a row: flapping, not a phase that ended
    }
    run_class_ = out.phase_class;
    run_ticks_ = 0;
  }
  ++run_ticks_;
  bool stable = recent_runs_.size() >= static_cast<std::size_t>(options_.stable_runs);
  for (int ticks : recent_runs_) stable = stable && ticks >= options_.stable_ticks;
  // Work that ran for a while has stopped: the idle clock costs that work nothing, so it is
  // written at once (a flapping class never gets here: its runs are shorter than stable_ticks).
  const bool work_stopped =
      out.phase_class == PhaseClass::idle && ended_run_ >= options_.stable_ticks;
  const int hold = stable || work_stopped ? 1 : options_.hold_ticks;
  out.proposal = policy_->decide({signals, out.phase_class, ladder_, current_});
  const Decision& wanted = out.proposal.decision;
  const auto commit = [&](const Decision& d) {
    current_ = d;
    pending_ = 0;
    unwritten_ = false;
    ++writes_;
    out.write = true;
  };
  if (wanted == current_) {
    pending_ = 0;
    if (unwritten_) commit(current_);
  } else if (wanted.ceiling_or(ladder_.max()) >= current_.ceiling_or(ladder_.max())) {
    commit(wanted);  // raising (or a lock at the same ceiling): at once
  } else {
    if (pending_ == 0 ||
        wanted.ceiling_or(ladder_.max()) > pending_decision_.ceiling_or(ladder_.max())) {
      pending_decision_ = wanted;
    }
    if (++pending_ >= hold) {
      commit(pending_decision_);
    } else if (unwritten_) {
      commit(current_);
    }
  }
  out.decision = current_;
  return out;
}

}  // namespace gpuclk::govern
