#include "fleet/job_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "util/text.h"

namespace gpuclk::fleet {
namespace {

using rules::Evidence;
using rules::Severity;

std::optional<double> median_of(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double share(const GpuState& g, std::initializer_list<const char*> reasons) {
  double s = 0;
  for (const auto* r : reasons) {
    const auto it = g.reason_fraction.find(r);
    if (it != g.reason_fraction.end()) s += it->second;
  }
  return std::min(s, 1.0);
}

// The median over `peers` of `value` (those that have one).
template <class F>
std::optional<double> peers_median(const std::vector<const GpuState*>& peers, F value) {
  std::vector<double> v;
  for (const auto* p : peers)
    if (auto x = value(*p)) v.push_back(*x);
  return median_of(v);
}

// What held `g` back more than its peers, in words: a setting, heat, the power brake, a lower
// power limit, more power capping; else that no reason NVML reports sets it apart.
std::string cause_of(const GpuState& g, const std::vector<const GpuState*>& peers) {
  const auto app = peers_median(
      peers, [](const GpuState& p) -> std::optional<double> { return p.app_sm_clock_mhz; });
  if (g.app_sm_clock_mhz && app && *g.app_sm_clock_mhz < *app)
    return fmt::format("its application SM clock ({:.0f} MHz) is below its peers' ({:.0f} MHz)",
                       *g.app_sm_clock_mhz, *app);
  std::map<std::string, std::size_t> locks;
  for (const auto* p : peers)
    if (p->sm_clock_lock) ++locks[*p->sm_clock_lock];
  if (g.sm_clock_lock && *g.sm_clock_lock != "unlocked" && !locks.empty() &&
      !locks.count(*g.sm_clock_lock))
    return fmt::format("gpuclk's clock lock ({}) holds it, not its peers", *g.sm_clock_lock);
  const auto most = [&](std::initializer_list<const char*> reasons) {
    double m = 0;
    for (const auto* p : peers) m = std::max(m, share(*p, reasons));
    return m;
  };
  const double thermal = share(g, {"sw_thermal_slowdown", "hw_thermal_slowdown"});
  if (thermal > most({"sw_thermal_slowdown", "hw_thermal_slowdown"}) + 0.05)
    return fmt::format("heat: thermal slowdown held its clock {:.0f}% of the range{}",
                       thermal * 100,
                       g.temperature_c ? fmt::format(" ({:.0f} C now)", *g.temperature_c) : "");
  const double brake = share(g, {"hw_power_brake_slowdown"});
  const double slowdown = share(g, {"hw_slowdown"});
  if (std::max(brake, slowdown) > most({"hw_slowdown", "hw_power_brake_slowdown"}) + 0.05)
    return fmt::format(
        "the {} held its clock {:.0f}% of the range",
        brake > 0.05 ? "HW power brake (an external power-supply signal)" : "HW slowdown",
        std::max(brake, slowdown) * 100);
  const auto limit = peers_median(
      peers, [](const GpuState& p) -> std::optional<double> { return p.power_limit_w; });
  if (g.power_limit_w && limit && *g.power_limit_w < 0.97 * *limit)
    return fmt::format("its power limit ({:.0f} W) is below its peers' ({:.0f} W)",
                       *g.power_limit_w, *limit);
  const double cap = share(g, {"sw_power_cap"});
  const auto peer_cap = peers_median(
      peers, [](const GpuState& p) -> std::optional<double> { return share(p, {"sw_power_cap"}); });
  if (peer_cap && cap > *peer_cap + 0.2)
    return fmt::format("the power cap held it {:.0f}% of the range, its peers {:.0f}%", cap * 100,
                       *peer_cap * 100);
  return fmt::format(
      "no clock event reason NVML reports sets it apart from its peers (power cap {:.0f}% of "
      "the range, its peers {:.0f}%): look at the node",
      cap * 100, peer_cap.value_or(0) * 100);
}

struct Member {
  const JobUse* use;
  const GpuState* gpu;
};

void add_number(FleetFinding& f, std::string key, std::string unit, double value) {
  f.finding.evidence.push_back({std::move(key), std::move(unit), value, 0, {}});
}

void add_text(FleetFinding& f, std::string key, std::string value) {
  f.finding.evidence.push_back({std::move(key), "", 0, 0, std::move(value)});
}

FleetFinding straggler(const Member& me, const std::vector<const GpuState*>& peers,
                       std::size_t gpus, std::size_t nodes, bool slow_clock, double peer_clock,
                       double peer_busy) {
  const auto& g = *me.gpu;
  const auto& u = *me.use;
  FleetFinding f;
  f.instance = g.instance;
  f.job = u.job;
  f.finding.rule = "straggler";
  f.finding.severity = Severity::warning;
  f.finding.gpus = {g.index};
  f.finding.docs = "docs/fleet.md#straggler";
  const auto what = fmt::format("{} ({} on {})", u.name, text::counted(gpus, "GPU"),
                                text::counted(nodes, "node"));
  if (slow_clock) {
    f.finding.cause = cause_of(g, peers);
    f.finding.summary = fmt::format(
        "{}: GPU {} holds back {}: median SM clock {:.0f} MHz, {:.0f}% below its job's other "
        "GPUs' {:.0f} MHz; cause: {}",
        g.instance, g.index, what, *g.sm_clock_median_mhz,
        (1 - *g.sm_clock_median_mhz / peer_clock) * 100, peer_clock, f.finding.cause);
  } else {
    const auto reasons = cause_of(g, peers);
    f.finding.cause =
        reasons.starts_with("no clock event reason")
            ? "it has more to do than its peers or runs it slower at the same clock (its share "
              "of the data, a slower link or host); the others wait on it"
            : reasons + "; the others wait on it";
    f.finding.summary = fmt::format(
        "{}: GPU {} holds back {}: busy {:.0f}% of the time it held its context, its job's "
        "other GPUs {:.0f}%: they wait on it; cause: {}",
        g.instance, g.index, what, u.busy_share() * 100, peer_busy * 100, f.finding.cause);
  }
  f.finding.fix = fmt::format(
      "fix the cause on {} (gpuclk doctor -i {} there names it); gpuclk fleet --{} {} shows the "
      "job's GPUs side by side",
      g.instance, g.index, u.job.starts_with("pod:") ? "pod" : "job",
      u.job.substr(u.job.find(':') + 1));
  add_text(f, "job", u.job);
  add_number(f, "job_gpus", "", static_cast<double>(gpus));
  add_number(f, "job_nodes", "", static_cast<double>(nodes));
  if (g.sm_clock_median_mhz) add_number(f, "sm_clock_median_mhz", "MHz", *g.sm_clock_median_mhz);
  add_number(f, "peers_sm_clock_median_mhz", "MHz", peer_clock);
  add_number(f, "busy_pct", "%", u.busy_share() * 100);
  add_number(f, "peers_busy_pct", "%", peer_busy * 100);
  return f;
}

}  // namespace

std::map<std::string, std::vector<JobGpu>> jobs_of(const Snapshot& snap) {
  std::map<std::pair<std::string, unsigned>, const GpuState*> by_key;
  for (const auto& g : snap.gpus) by_key[{g.instance, g.index}] = &g;
  std::map<std::string, std::vector<JobGpu>> out;
  for (const auto& u : snap.jobs) {
    const auto it = by_key.find({u.instance, u.index});
    out[u.job].push_back({&u, it == by_key.end() ? nullptr : it->second});
  }
  return out;
}

std::vector<JobGpu> job_gpus(const Snapshot& snap, const std::string& key) {
  auto all = jobs_of(snap);
  const auto it = all.find(key);
  return it == all.end() ? std::vector<JobGpu>{} : std::move(it->second);
}

void job_stragglers(const Snapshot& snap, const Thresholds& t, const std::set<std::string>& scraped,
                    std::vector<FleetFinding>& out) {
  for (const auto& [key, all] : jobs_of(snap)) {
    if (all.size() < 2) continue;  // a job on one GPU has no peers
    std::set<std::string> nodes;
    std::map<std::string, std::vector<Member>> of_model;  // usable GPUs, by model
    for (const auto& m : all) {
      nodes.insert(m.use->instance);
      if (!m.gpu || m.gpu->lost || !scraped.count(m.gpu->instance) || !m.gpu->sm_clock_median_mhz)
        continue;
      of_model[m.gpu->model].push_back({m.use, m.gpu});
    }
    for (const auto& [model, same] : of_model) {
      for (const auto& me : same) {
        // An idle GPU of the job (it held a context and ran nothing) is idle, not slow.
        if (me.use->busy_share() < t.straggler_peer_busy) continue;
        std::vector<const GpuState*> peers;
        std::vector<double> clocks, busy;
        for (const auto& p : same) {
          if (p.gpu == me.gpu) continue;
          peers.push_back(p.gpu);
          busy.push_back(p.use->busy_share());
          if (p.use->busy_share() >= t.straggler_peer_busy)
            clocks.push_back(*p.gpu->sm_clock_median_mhz);
        }
        if (peers.empty()) continue;
        const auto peer_clock = median_of(clocks);
        const double peer_busy = *median_of(busy);
        const bool slow_clock =
            peer_clock && *me.gpu->sm_clock_median_mhz < t.straggler_ratio * *peer_clock;
        const bool waited_on = me.use->busy_share() > peer_busy + t.straggler_busy_delta;
        if (!slow_clock && !waited_on) continue;
        out.push_back(straggler(me, peers, all.size(), nodes.size(), slow_clock,
                                peer_clock.value_or(*me.gpu->sm_clock_median_mhz), peer_busy));
      }
    }
  }
}

}  // namespace gpuclk::fleet
