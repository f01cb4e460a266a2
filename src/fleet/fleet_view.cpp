#include "fleet/fleet_view.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>
#include <ostream>
#include <set>

#include "util/text.h"
#include "views/findings.h"

namespace gpuclk::fleet {
namespace {

output::Value opt(const std::optional<double>& v, const char* unit, int precision = 0) {
  return v ? output::number(*v, unit, precision) : output::na();
}

}  // namespace

output::Table gpu_table(const Snapshot& snap, const std::vector<FleetFinding>& findings) {
  std::map<std::pair<std::string, unsigned>, std::set<std::string>> rules_of;
  for (const auto& f : findings)
    for (auto g : f.finding.gpus) rules_of[{f.instance, g}].insert(f.finding.rule);
  output::Table t;
  t.columns = {{"instance", "Node", true},
               {"gpu", "GPU"},
               {"model", "Model", true},
               {"sm_clock_mhz", "SM MHz"},
               {"sm_clock_median_mhz", "Median"},
               {"power_w", "Power W"},
               {"power_limit_w", "Limit W"},
               {"app_sm_clock_mhz", "App SM"},
               {"app_memory_clock_mhz", "App Mem"},
               {"locked_sm_clocks", "Lock", true},
               {"persistence_mode", "Persist"},
               {"temperature_c", "Temp C"},
               {"findings", "Findings", true}};
  for (const auto& g : snap.gpus) {
    const auto rules = rules_of.find({g.instance, g.index});
    t.rows.push_back({
        output::text(g.instance),
        output::integer(g.index),
        output::text(g.model),
        opt(g.sm_clock_mhz, "MHz"),
        opt(g.sm_clock_median_mhz, "MHz"),
        opt(g.power_w, "W"),
        opt(g.power_limit_w, "W"),
        opt(g.app_sm_clock_mhz, "MHz"),
        opt(g.app_memory_clock_mhz, "MHz"),
        g.sm_clock_lock ? output::text(*g.sm_clock_lock) : output::na(),
        g.persistence_mode ? output::text(*g.persistence_mode ? "On" : "Off") : output::na(),
        opt(g.temperature_c, "C"),
        output::text(rules == rules_of.end() ? "-"
                                             : fmt::format("{}", fmt::join(rules->second, ","))),
    });
  }
  return t;
}

output::Table node_table(const Snapshot& snap) {
  output::Table t;
  t.columns = {{"instance", "Node", true},
               {"up", "Up"},
               {"gpus", "GPUs"},
               {"energy_j", fmt::format("Energy kJ ({} s)", snap.range_s)}};
  for (const auto& n : snap.nodes) {
    t.rows.push_back({output::text(n.instance),
                      n.up ? output::integer(std::lround(*n.up)) : output::text("absent"),
                      output::integer(static_cast<long long>(n.gpus)),
                      n.energy_j ? output::number(*n.energy_j / 1000, "kJ", 1) : output::na()});
  }
  return t;
}

output::Node fleet_tree(const Snapshot& snap, const std::vector<FleetFinding>& findings) {
  output::Node root;
  root.add("prometheus", "", output::text(snap.prometheus));
  root.add("selector", "", output::text(snap.selector));
  root.add("range_s", "", output::integer(snap.range_s));
  auto& gpus = root.section("gpus", "GPUs", true);
  for (const auto& g : snap.gpus) {
    auto& n = gpus.section("gpu", "");
    n.add("instance", "", output::text(g.instance));
    n.add("gpu", "", output::integer(g.index));
    n.add("uuid", "", output::text(g.uuid));
    n.add("model", "", output::text(g.model));
    n.add("lost", "", output::flag(g.lost));
    n.add("sm_clock_mhz", "", opt(g.sm_clock_mhz, "MHz"));
    n.add("sm_clock_median_mhz", "", opt(g.sm_clock_median_mhz, "MHz"));
    n.add("max_sm_clock_mhz", "", opt(g.max_sm_clock_mhz, "MHz"));
    n.add("power_w", "", opt(g.power_w, "W", 1));
    n.add("power_avg_w", "", opt(g.power_avg_w, "W", 1));
    n.add("power_limit_w", "", opt(g.power_limit_w, "W", 1));
    n.add("app_sm_clock_mhz", "", opt(g.app_sm_clock_mhz, "MHz"));
    n.add("app_memory_clock_mhz", "", opt(g.app_memory_clock_mhz, "MHz"));
    n.add("locked_sm_clocks", "", g.sm_clock_lock ? output::text(*g.sm_clock_lock) : output::na());
    n.add("persistence_mode", "",
          g.persistence_mode ? output::flag(*g.persistence_mode) : output::na());
    n.add("temperature_c", "", opt(g.temperature_c, "C"));
    n.add("utilization_avg", "", opt(g.utilization_avg, "", 3));
    auto& reasons = n.section("clock_event_reasons_share", "");
    for (const auto& [reason, share] : g.reason_fraction)
      if (share > 0) reasons.add(reason, "", output::number(share, "", 3));
  }
  auto& nodes = root.section("nodes", "Nodes", true);
  for (const auto& n : snap.nodes) {
    auto& node = nodes.section("node", "");
    node.add("instance", "", output::text(n.instance));
    node.add("up", "", n.up ? output::flag(*n.up == 1) : output::na());
    node.add("gpus", "", output::integer(static_cast<long long>(n.gpus)));
    node.add("energy_j", "", opt(n.energy_j, "J", 1));
  }
  add_findings(root, findings);
  return root;
}

std::vector<output::Column> node_line_columns(const std::vector<NodeLine>& nodes, bool with_time) {
  std::size_t width = 4;
  for (const auto& n : nodes) width = std::max(width, n.instance.size());
  std::vector<output::Column> c;
  if (with_time) c.push_back({"time", "time    ", true});  // HH:MM:SS
  c.push_back({"instance", fmt::format("{:<{}}", "node", width), true});
  c.push_back({"up", "up"});
  c.push_back({"gpus", "gpus"});
  c.push_back({"lost", "lost"});
  c.push_back({"sm_clock_mhz", "SM MHz"});
  c.push_back({"power_w", "pwr W"});
  c.push_back({"power_limit_w", "limit W"});
  c.push_back({"temperature_max_c", "max C"});
  c.push_back({"utilization_pct", "util %"});
  c.push_back({"critical", "crit"});
  c.push_back({"warning", "warn"});
  return c;
}

std::vector<output::Value> node_line_row(const NodeLine& n, const std::string& time) {
  std::vector<output::Value> row;
  if (!time.empty()) row.push_back(output::text(time));
  row.push_back(output::text(n.instance));
  row.push_back(n.up ? output::integer(std::lround(*n.up)) : output::text("-"));
  row.push_back(opt(n.gpus, ""));
  row.push_back(opt(n.lost, ""));
  row.push_back(opt(n.sm_clock_mhz, "MHz"));
  row.push_back(opt(n.power_w, "W"));
  row.push_back(opt(n.power_limit_w, "W"));
  row.push_back(opt(n.temperature_max_c, "C"));
  row.push_back(n.utilization ? output::number(*n.utilization * 100, "%", 0) : output::na());
  row.push_back(output::integer(n.critical));
  row.push_back(output::integer(n.warning));
  return row;
}

std::string node_lines_heading(const std::vector<NodeLine>& nodes, const std::string& time,
                               double interval_s) {
  double power = 0, limit = 0, gpus = 0, lost = 0;
  int critical = 0, warning = 0;
  for (const auto& n : nodes) {
    power += n.power_w.value_or(0);
    limit += n.power_limit_w.value_or(0);
    gpus += n.gpus.value_or(0);
    lost += n.lost.value_or(0);
    critical += n.critical;
    warning += n.warning;
  }
  return fmt::format(
      "{}  {}, {} ({:.0f} lost), {:.1f} of {:.1f} kW; findings: {} critical, "
      "{}  (every {} s, Ctrl-C ends)\n",
      time, text::counted(nodes.size(), "node"),
      text::counted(static_cast<unsigned long long>(gpus), "GPU"), lost, power / 1000, limit / 1000,
      critical, text::counted(static_cast<unsigned long long>(warning), "warning"), interval_s);
}

void add_findings(output::Node& root, const std::vector<FleetFinding>& findings) {
  auto& list = root.section("findings", "Findings", true);
  for (const auto& ff : findings) {
    const auto& f = ff.finding;
    auto& n = list.section("finding", "");
    n.add("rule", "", output::text(f.rule));
    n.add("severity", "", output::text(std::string(rules::to_string(f.severity))));
    n.add("instance", "", output::text(ff.instance));
    auto& indexes = n.section("gpus", "", true);
    for (auto g : f.gpus) indexes.add("gpu", "", output::integer(g));
    if (!ff.job.empty()) n.add("job", "", output::text(ff.job));
    n.add("summary", "", output::text(f.summary));
    auto& evidence = n.section("evidence", "");
    for (const auto& e : f.evidence)
      evidence.add(
          e.key, e.key,
          e.text.empty() ? output::number(e.value, e.unit, e.precision) : output::text(e.text));
    n.add("cause", "", output::text(f.cause));
    n.add("fix", "", output::text(f.fix));
  }
}

void print_findings(std::ostream& out, const std::vector<FleetFinding>& findings) {
  std::vector<rules::Finding> problems, notes;
  for (const auto& f : findings)
    (f.finding.severity > rules::Severity::info ? problems : notes).push_back(f.finding);
  views::print_finding_lines(out, problems, true);
  views::print_finding_lines(out, notes, false);
}

}  // namespace gpuclk::fleet
