#include "fleet/job_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "fleet/fleet_view.h"
#include "util/error.h"
#include "util/text.h"

namespace gpuclk::fleet {
namespace {

output::Value or_na(const std::optional<double>& v, const char* unit, int precision = 0) {
  return v ? output::number(*v, unit, precision) : output::na();
}

// "sw_power_cap 3420 s, sw_thermal_slowdown 180 s"; "-" when none held it a second.
std::string held_text(const GpuState* g, long range_s) {
  std::string out;
  if (!g) return "-";
  for (const auto reason : kLimitingReasons) {
    const auto it = g->reason_fraction.find(std::string(reason));
    if (it == g->reason_fraction.end()) continue;
    const double seconds = it->second * static_cast<double>(range_s);
    if (seconds < 1) continue;
    out += fmt::format("{}{} {:.0f} s", out.empty() ? "" : ", ", reason, seconds);
  }
  return out.empty() ? "-" : out;
}

// The findings of the job's nodes that concern it: on its GPUs, about a node as a whole, and
// the stragglers of this job (not another job's on a shared GPU).
std::vector<FleetFinding> job_findings(const std::vector<FleetFinding>& all, const JobReport& job) {
  std::set<std::pair<std::string, unsigned>> mine;
  std::set<std::string> nodes;
  for (const auto& g : job.gpus) {
    mine.insert({g.use->instance, g.use->index});
    nodes.insert(g.use->instance);
  }
  std::vector<FleetFinding> out;
  for (const auto& f : all) {
    if (!nodes.count(f.instance)) continue;
    if (f.finding.rule == "straggler" && !f.job.empty() && f.job != job.key) continue;
    bool concerns = f.finding.gpus.empty();
    for (auto g : f.finding.gpus) concerns = concerns || mine.count({f.instance, g});
    if (concerns) out.push_back(f);
  }
  return out;
}

}  // namespace

JobReport look_up_job(Prometheus& prometheus, const JobQuery& q, Snapshot& snap) {
  const auto uses = collect_job(prometheus, q.selector, q.range_s, q.job, q.pod);
  const auto what = q.pod ? "pod " + q.job : "Slurm job " + q.job;
  if (uses.empty())
    throw Error(ExitCode::gpu_not_found,
                fmt::format("no GPU ran {} in the last {} s at {} ({})", what, q.range_s,
                            prometheus.url(), q.selector.empty() ? "{}" : q.selector),
                "the nodes' gpuclk serve books a GPU to a job from its processes' Slurm cgroup "
                "or pod (docs/attribution.md); a longer --range reaches further back");
  // A pod's name may have had several UIDs in the range (restarted): the one that used most.
  std::map<std::string, double> seconds;
  for (const auto& u : uses) seconds[u.job] += u.context_s;
  JobReport job;
  for (const auto& [key, s] : seconds)
    if (job.key.empty() || s > seconds[job.key]) job.key = key;
  for (const auto& [key, s] : seconds)
    if (key != job.key) job.other_keys.push_back(key);
  std::vector<std::string> instances;
  for (const auto& u : uses)
    if (u.job == job.key) instances.push_back(u.instance);
  std::sort(instances.begin(), instances.end());
  instances.erase(std::unique(instances.begin(), instances.end()), instances.end());
  snap = collect(prometheus, with_instances(q.selector, instances), q.range_s, true);
  snap.selector = q.selector;
  job.gpus = job_gpus(snap, job.key);
  job.nodes = instances.size();
  for (const auto& g : job.gpus) {
    job.name = g.use->name;
    job.user = g.use->user;
    job.energy_j += g.use->energy_j.value_or(0);
    job.gpu_hours += g.use->context_s / 3600;
  }
  job.findings = job_findings(evaluate(snap), job);
  return job;
}

output::Table job_table(const JobReport& job, long range_s) {
  std::map<std::pair<std::string, unsigned>, std::set<std::string>> rules_of;
  for (const auto& f : job.findings)
    for (auto g : f.finding.gpus) rules_of[{f.instance, g}].insert(f.finding.rule);
  output::Table t;
  t.columns = {{"instance", "Node", true},    {"gpu", "GPU"},
               {"model", "Model", true},      {"sm_clock_median_mhz", "SM MHz"},
               {"sm_clock_p5_mhz", "p5"},     {"power_avg_w", "Power W"},
               {"power_limit_w", "Limit W"},  {"held_back", "Held back by", true},
               {"energy_kj", "Energy kJ"},    {"busy_pct", "Busy %"},
               {"findings", "Findings", true}};
  for (const auto& jg : job.gpus) {
    const auto* g = jg.gpu;
    const auto rules = rules_of.find({jg.use->instance, jg.use->index});
    std::string names;
    if (rules != rules_of.end())
      for (const auto& r : rules->second) names += (names.empty() ? "" : ",") + r;
    t.rows.push_back({
        output::text(jg.use->instance),
        output::integer(jg.use->index),
        output::text(g ? g->model : ""),
        g ? or_na(g->sm_clock_median_mhz, "MHz") : output::na(),
        g ? or_na(g->sm_clock_p5_mhz, "MHz") : output::na(),
        g ? or_na(g->power_avg_w, "W") : output::na(),
        g ? or_na(g->power_limit_w, "W") : output::na(),
        output::text(held_text(g, range_s)),
        jg.use->energy_j ? output::number(*jg.use->energy_j / 1000, "kJ", 1) : output::na(),
        output::number(jg.use->busy_share() * 100, "%", 0),
        output::text(names.empty() ? "-" : names),
    });
  }
  return t;
}

output::Node job_tree(const JobReport& job, const Snapshot& snap) {
  output::Node root;
  root.add("prometheus", "", output::text(snap.prometheus));
  root.add("selector", "", output::text(snap.selector));
  root.add("range_s", "", output::integer(snap.range_s));
  auto& j = root.section("job", "Job");
  j.add("key", "", output::text(job.key));
  j.add("name", "", output::text(job.name));
  j.add("user", "", output::text(job.user));
  j.add("gpus", "", output::integer(static_cast<long long>(job.gpus.size())));
  j.add("nodes", "", output::integer(static_cast<long long>(job.nodes)));
  j.add("energy_j", "", output::number(job.energy_j, "J", 1));
  j.add("gpu_hours", "", output::number(job.gpu_hours, "h", 3));
  auto& gpus = root.section("gpus", "GPUs", true);
  for (const auto& jg : job.gpus) {
    const auto* g = jg.gpu;
    auto& n = gpus.section("gpu", "");
    n.add("instance", "", output::text(jg.use->instance));
    n.add("gpu", "", output::integer(jg.use->index));
    n.add("uuid", "", output::text(g ? g->uuid : ""));
    n.add("model", "", output::text(g ? g->model : ""));
    n.add("sm_clock_median_mhz", "", g ? or_na(g->sm_clock_median_mhz, "MHz") : output::na());
    n.add("sm_clock_p5_mhz", "", g ? or_na(g->sm_clock_p5_mhz, "MHz") : output::na());
    n.add("power_avg_w", "", g ? or_na(g->power_avg_w, "W", 1) : output::na());
    n.add("power_limit_w", "", g ? or_na(g->power_limit_w, "W", 1) : output::na());
    auto& held = n.section("clock_event_reasons_s", "");
    if (g)
      for (const auto& [reason, share] : g->reason_fraction)
        if (share > 0)
          held.add(reason, "", output::number(share * static_cast<double>(snap.range_s), "s", 0));
    n.add("energy_j", "",
          jg.use->energy_j ? output::number(*jg.use->energy_j, "J", 1) : output::na());
    n.add("gpu_seconds", "", output::number(jg.use->context_s, "s", 1));
    n.add("busy_share", "", output::number(jg.use->busy_share(), "", 3));
  }
  add_findings(root, job.findings);
  return root;
}

std::string job_heading(const JobReport& job, long range_s) {
  return fmt::format("{}{}: {} on {} over the last {} s\n", job.name,
                     job.user.empty() ? "" : " (user " + job.user + ")",
                     text::counted(job.gpus.size(), "GPU"), text::counted(job.nodes, "node"),
                     range_s);
}

std::string job_totals(const JobReport& job) {
  std::string out = fmt::format("\nTotal: {:.1f} kJ booked to the job, {:.3f} GPU-hours\n",
                                job.energy_j / 1000, job.gpu_hours);
  if (!job.other_keys.empty())
    out += fmt::format("(the name also had {} in the range: gpuclk fleet --pod UID shows it)\n",
                       fmt::join(job.other_keys, ", "));
  bool straggler = false;
  for (const auto& f : job.findings) straggler = straggler || f.finding.rule == "straggler";
  if (!straggler)
    out += job.gpus.size() < 2
               ? "No straggler: the job ran on one GPU (no peers to compare).\n"
               : "No straggler: no GPU of the job ran clearly slower than its others.\n";
  return out;
}

}  // namespace gpuclk::fleet
