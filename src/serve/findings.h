// The node findings the service exports (`gpuclk_findings` series): the rules engine (src/rules)
// over the service's latest status, the same findings `gpuclk status` prints, held over a window
// (FindingsHold) so that /metrics does not flap with each look.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "attribution/attribution.h"
#include "gpu/status.h"
#include "rules/finding.h"
#include "rules/input.h"
#include "telemetry/sampler.h"

namespace gpuclk::serve {

std::vector<rules::Finding> node_findings(const std::vector<gpu::StatusSnapshot>& status);

// The rules that judge a window of samples rather than one look — the straggler: a GPU of a
// multi-GPU job slower than the job's others (doctor's rule) — over the sampler's last `window`,
// with the jobs from the attribution's running processes; and the NCCL rules
// (communication_bound, late_rank) over the jobs' `communicators` (serve/nccl_jobs.h), the late
// rank's GPU judged over the same window. One look misses them: a status snapshot has no window.
inline constexpr std::chrono::seconds kFindingsWindow{8};
std::vector<rules::Finding> window_findings(
    const std::vector<gpu::StatusSnapshot>& status, const telemetry::Sampler& sampler,
    const attribution::Attribution* attribution,
    std::vector<rules::CommunicatorWindow> communicators = {},
    telemetry::Duration window = kFindingsWindow);

// Findings as /metrics shows them: one look at the node (a status snapshot's temperatures, its
// clocks) finds some of them in one refresh and not the next as the load moves, so
// hotter_than_peers appeared in 2 of 21 scrapes, on the coolest GPU of the moment (issue 42).
// Doctor judges a window of samples; here a finding (its rule and GPUs) is shown once seen in
// every look so far or in at least `raise` of the looks of the last `window`, and kept until
// seen in at most `clear` of them (hysteresis: a share between the two changes nothing).
// Findings of a window of samples (window_findings) are smoothed by their window already: they
// are shown once seen in `windowed_raise` looks in a row — a straggler shows seconds after its
// onset, not half a minute — and kept until missing from `windowed_clear` looks in a row.
class FindingsHold {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  struct Options {
    std::chrono::seconds window{60};
    double raise = 0.5;
    double clear = 0.2;
    unsigned windowed_raise = 3;
    unsigned windowed_clear = 15;
  };
  FindingsHold() : FindingsHold(Options{}) {}
  explicit FindingsHold(Options options) : options_(options) {}

  // This look's findings in (`windowed`: those of window_findings); the findings held out
  // (each as last seen), in the rules' order, the windowed ones after the others.
  std::vector<rules::Finding> update(const std::vector<rules::Finding>& look, TimePoint now,
                                     const std::vector<rules::Finding>& windowed = {});

 private:
  Options options_;
  std::deque<std::pair<TimePoint, std::set<std::string>>> looks_;  // the window's, oldest first
  std::map<std::string, rules::Finding> last_seen_;                // by key, while in the window
  std::set<std::string> held_;
  // Windowed findings by key.
  struct Windowed {
    unsigned seen = 0, missed = 0;  // looks in a row
    bool shown = false;
    rules::Finding last;
  };
  std::map<std::string, Windowed> windowed_;
};

}  // namespace gpuclk::serve
