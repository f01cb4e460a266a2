// `gpuclk fleet`: every GPU of every node from the Prometheus that scrapes their `gpuclk serve`
// (src/fleet), then what is wrong across the fleet (docs/fleet.md). Exit codes as doctor's:
// 0 nothing above info, 10 a warning, 11 a critical finding; 255 when Prometheus gave no
// usable answer within --timeout; 2 for a bad option.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <iostream>
#include <map>
#include <set>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/findings_view.h"
#include "fleet/fleet_rules.h"
#include "fleet/prometheus.h"
#include "fleet/snapshot.h"
#include "util/error.h"
#include "util/parse.h"

namespace gpuclk::cli {
namespace {

struct FleetOptions {
  std::string prometheus;
  std::string selector = "{job=\"gpuclk\"}";
  std::string range = "1h";
  std::string timeout = "10s";
};

double duration_option(const std::string& text, const char* option, double min, double max,
                       const char* example) {
  const auto s = parse::try_duration_seconds(text, max);
  if (!s || *s < min)
    throw bad_argument(
        fmt::format("bad {} '{}'", option, parse::quote(text)),
        fmt::format("give a duration from {} s to {} s, e.g. {}", min, max, example));
  return *s;
}

output::Value opt(const std::optional<double>& v, const char* unit, int precision = 0) {
  return v ? output::number(*v, unit, precision) : output::na();
}

output::Table gpu_table(const fleet::Snapshot& snap,
                        const std::vector<fleet::FleetFinding>& findings) {
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

output::Table node_table(const fleet::Snapshot& snap) {
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

output::Node json_tree(const fleet::Snapshot& snap,
                       const std::vector<fleet::FleetFinding>& findings) {
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
  auto& list = root.section("findings", "Findings", true);
  for (const auto& ff : findings) {
    const auto& f = ff.finding;
    auto& n = list.section("finding", "");
    n.add("rule", "", output::text(f.rule));
    n.add("severity", "", output::text(std::string(rules::to_string(f.severity))));
    n.add("instance", "", output::text(ff.instance));
    auto& indexes = n.section("gpus", "", true);
    for (auto g : f.gpus) indexes.add("gpu", "", output::integer(g));
    n.add("summary", "", output::text(f.summary));
    auto& evidence = n.section("evidence", "");
    for (const auto& e : f.evidence)
      evidence.add(
          e.key, e.key,
          e.text.empty() ? output::number(e.value, e.unit, e.precision) : output::text(e.text));
    n.add("fix", "", output::text(f.fix));
  }
  return root;
}

int run_fleet(Context& ctx, const FleetOptions& o) {
  if (o.prometheus.empty())
    throw bad_argument("fleet needs --prometheus URL",
                       "give the Prometheus that scrapes the nodes' gpuclk serve, e.g. "
                       "--prometheus http://prometheus:9090");
  const auto selector = fleet::check_selector(o.selector);
  const auto range = duration_option(o.range, "--range", 1, 366.0 * 86400, "1h or 30m");
  const auto timeout = duration_option(o.timeout, "--timeout", 0.1, 3600, "10s");
  const auto format = ctx.format();
  fleet::Prometheus prometheus(
      o.prometheus,
      std::chrono::milliseconds(static_cast<long long>(std::llround(timeout * 1000))));
  const auto snap = fleet::collect(prometheus, selector, std::lround(std::ceil(range)));
  const auto findings = fleet::evaluate(snap);

  auto printer = ctx.printer();
  if (format.kind == output::Format::Kind::json) {
    printer->print_tree(json_tree(snap, findings));
    return fleet::exit_code(findings);
  }
  printer->print_table(gpu_table(snap, findings));
  if (format.kind == output::Format::Kind::table) {
    std::cout << '\n';
    printer->print_table(node_table(snap));
    if (snap.nodes.empty())
      std::cout << fmt::format("no node matches {} at {}\n", selector.empty() ? "{}" : selector,
                               snap.prometheus);
    // Problems with their evidence and cause; notes in two lines each.
    std::vector<rules::Finding> problems, notes;
    for (const auto& f : findings)
      (f.finding.severity > rules::Severity::info ? problems : notes).push_back(f.finding);
    if (!findings.empty()) std::cout << '\n';
    print_finding_lines(std::cout, problems, true);
    print_finding_lines(std::cout, notes, false);
  }
  return fleet::exit_code(findings);
}

}  // namespace

void add_fleet_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<FleetOptions>();
  auto* sub = app.add_subcommand(
      "fleet",
      "Every GPU of every node from the Prometheus that scrapes their gpuclk serve; settings that "
      "differ across nodes, throttled, straggling, idle and lost GPUs, nodes not scraped");
  sub->add_option("--prometheus", o->prometheus, "the Prometheus server's URL (http://host:9090)");
  sub->add_option("--selector", o->selector,
                  "label matchers of the nodes' series (default '{job=\"gpuclk\"}'; '' for all)");
  sub->add_option("--range", o->range, "the range aggregates cover (default 1h)");
  sub->add_option("--timeout", o->timeout,
                  "the longest all queries together may take (default 10s)");
  sub->callback([&ctx, o] { ctx.run = [&ctx, o] { return run_fleet(ctx, *o); }; });
}

}  // namespace gpuclk::cli
