// `gpuclk fleet --job ID` / `--pod NAMESPACE/NAME`: one Slurm job's (or pod's) GPUs on every node
// side by side, from the Prometheus that scrapes the nodes' gpuclk serve: per GPU its SM clock
// (median and 5th percentile over the range), power and limit, the clock event reasons that held
// it back and for how long, the energy the node booked to the job and its busy share; the job's
// totals; and its straggler, with the cause (docs/fleet.md#a-job-across-nodes).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <set>

#include "cli/context.h"
#include "cli/fleet_views.h"
#include "fleet/job_rules.h"
#include "fleet/prometheus.h"
#include "fleet/snapshot.h"
#include "util/error.h"
#include "util/text.h"

namespace gpuclk::cli {
namespace {

output::Value or_na(const std::optional<double>& v, const char* unit, int precision = 0) {
  return v ? output::number(*v, unit, precision) : output::na();
}

// "sw_power_cap 3420 s, sw_thermal_slowdown 180 s"; "-" when none held it a second.
std::string held_text(const fleet::GpuState* g, long range_s) {
  std::string out;
  if (!g) return "-";
  for (const auto reason : fleet::kLimitingReasons) {
    const auto it = g->reason_fraction.find(std::string(reason));
    if (it == g->reason_fraction.end()) continue;
    const double seconds = it->second * static_cast<double>(range_s);
    if (seconds < 1) continue;
    out += fmt::format("{}{} {:.0f} s", out.empty() ? "" : ", ", reason, seconds);
  }
  return out.empty() ? "-" : out;
}

struct JobView {
  std::string key, name, user;
  std::vector<fleet::JobGpu> gpus;
  std::size_t nodes = 0;
  double energy_j = 0, gpu_hours = 0;
  std::vector<fleet::FleetFinding> findings;  // on its GPUs and nodes; stragglers of this job
  std::vector<std::string> other_keys;        // other pod UIDs of the same name
};

// The findings of the job's nodes that concern it: on its GPUs, about a node as a whole, and
// the stragglers of this job (not another job's on a shared GPU).
std::vector<fleet::FleetFinding> job_findings(const std::vector<fleet::FleetFinding>& all,
                                              const JobView& job) {
  std::set<std::pair<std::string, unsigned>> mine;
  std::set<std::string> nodes;
  for (const auto& g : job.gpus) {
    mine.insert({g.use->instance, g.use->index});
    nodes.insert(g.use->instance);
  }
  std::vector<fleet::FleetFinding> out;
  for (const auto& f : all) {
    if (!nodes.count(f.instance)) continue;
    if (f.finding.rule == "straggler" && !f.job.empty() && f.job != job.key) continue;
    bool concerns = f.finding.gpus.empty();
    for (auto g : f.finding.gpus) concerns = concerns || mine.count({f.instance, g});
    if (concerns) out.push_back(f);
  }
  return out;
}

JobView look_up(fleet::Prometheus& prometheus, const FleetJobQuery& q, fleet::Snapshot& snap) {
  const auto uses = fleet::collect_job(prometheus, q.selector, q.range_s, q.job, q.pod);
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
  JobView job;
  for (const auto& [key, s] : seconds)
    if (job.key.empty() || s > seconds[job.key]) job.key = key;
  for (const auto& [key, s] : seconds)
    if (key != job.key) job.other_keys.push_back(key);
  std::vector<std::string> instances;
  for (const auto& u : uses)
    if (u.job == job.key) instances.push_back(u.instance);
  std::sort(instances.begin(), instances.end());
  instances.erase(std::unique(instances.begin(), instances.end()), instances.end());
  snap = fleet::collect(prometheus, fleet::with_instances(q.selector, instances), q.range_s, true);
  snap.selector = q.selector;
  job.gpus = fleet::job_gpus(snap, job.key);
  job.nodes = instances.size();
  for (const auto& g : job.gpus) {
    job.name = g.use->name;
    job.user = g.use->user;
    job.energy_j += g.use->energy_j.value_or(0);
    job.gpu_hours += g.use->context_s / 3600;
  }
  job.findings = job_findings(fleet::evaluate(snap), job);
  return job;
}

output::Table job_table(const JobView& job, long range_s) {
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

output::Node job_tree(const JobView& job, const fleet::Snapshot& snap) {
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
  add_fleet_findings(root, job.findings);
  return root;
}

}  // namespace

int run_fleet_job(Context& ctx, const FleetJobQuery& q) {
  fleet::Prometheus prometheus(q.prometheus, q.timeout);
  if (q.at) prometheus.set_time(*q.at);
  ctx.effect("ask Prometheus");
  fleet::Snapshot snap;
  const auto job = look_up(prometheus, q, snap);
  const auto code = fleet::exit_code(job.findings);
  auto printer = ctx.printer();
  const auto format = ctx.format();
  if (format.kind == output::Format::Kind::json) {
    printer->print_tree(job_tree(job, snap));
    return code;
  }
  if (format.kind == output::Format::Kind::csv) {
    printer->print_table(job_table(job, snap.range_s));
    return code;
  }
  std::cout << fmt::format("{}{}: {} on {} over the last {} s\n", job.name,
                           job.user.empty() ? "" : " (user " + job.user + ")",
                           text::counted(job.gpus.size(), "GPU"), text::counted(job.nodes, "node"),
                           snap.range_s);
  printer->print_table(job_table(job, snap.range_s));
  std::cout << fmt::format("\nTotal: {:.1f} kJ booked to the job, {:.3f} GPU-hours\n",
                           job.energy_j / 1000, job.gpu_hours);
  if (!job.other_keys.empty())
    std::cout << fmt::format(
        "(the name also had {} in the range: gpuclk fleet --pod UID shows it)\n",
        fmt::join(job.other_keys, ", "));
  bool straggler = false;
  for (const auto& f : job.findings) straggler = straggler || f.finding.rule == "straggler";
  if (!straggler)
    std::cout << (job.gpus.size() < 2
                      ? "No straggler: the job ran on one GPU (no peers to compare).\n"
                      : "No straggler: no GPU of the job ran clearly slower than its others.\n");
  if (!job.findings.empty()) std::cout << '\n';
  print_fleet_findings(std::cout, job.findings);
  return code;
}

}  // namespace gpuclk::cli
