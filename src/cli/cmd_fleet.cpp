// `gpuclk fleet`: every GPU of every node from the Prometheus that scrapes their `gpuclk serve`
// (src/fleet), then what is wrong across the fleet (docs/fleet.md). Exit codes as doctor's:
// 0 nothing above info, 10 a warning, 11 a critical finding; 255 when Prometheus gave no
// usable answer within --timeout; 2 for a bad option.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/findings_view.h"
#include "cli/fleet_views.h"
#include "fleet/fleet_rules.h"
#include "fleet/prometheus.h"
#include "fleet/snapshot.h"
#include "util/error.h"
#include "util/parse.h"
#include "util/stop_signal.h"
#include "util/text.h"

namespace gpuclk::cli {
namespace {

struct FleetOptions {
  std::string prometheus;
  std::string selector = "{job=\"gpuclk\"}";
  std::string range = "1h";
  std::string timeout = "10s";
  bool dmon = false;
  std::string interval;  // --dmon's; 5s when not given
  long long count = 0;
  std::optional<std::string> job, pod;  // the job view
  std::string at;                       // evaluate at this time, not now
};

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
  add_fleet_findings(root, findings);
  return root;
}

// --dmon: one line per node, every --interval. On a terminal the lines are redrawn in place
// under a status line; piped or redirected, they stream (a time column, no escape codes, no
// status line) in the format asked for, as `gpuclk dmon` does.

std::vector<output::Column> node_line_columns(const std::vector<fleet::NodeLine>& nodes,
                                              bool with_time) {
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

std::vector<output::Value> node_line_row(const fleet::NodeLine& n, const std::string& time) {
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

int run_fleet_dmon(Context& ctx, const FleetOptions& o, const std::string& selector,
                   std::chrono::milliseconds timeout) {
  const auto interval =
      parse::duration_seconds(o.interval.empty() ? "5s" : o.interval, "--interval", 1, 3600, "5s");
  if (o.count < 0)
    throw bad_argument(fmt::format("bad --count {}", o.count),
                       "give a count >= 1 (or none: until Ctrl-C)");
  const bool live = ::isatty(STDOUT_FILENO) && ctx.format().kind == output::Format::Kind::table;
  util::StopFlag stop;  // Ctrl-C, kill, a closed terminal: --dmon ends (exit 0)
  auto printer = ctx.printer();
  std::size_t drawn = 0;  // lines of the last refresh (live)
  bool header = false;
  long long refreshes = 0;
  while (!util::StopFlag::raised()) {
    const auto started = std::chrono::steady_clock::now();
    fleet::Prometheus prometheus(o.prometheus, timeout);  // a fresh deadline per refresh
    ctx.effect("ask Prometheus");
    const auto nodes = fleet::collect_nodes(prometheus, selector);
    const auto time = fmt::format(
        "{:%H:%M:%S}",
        fmt::localtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
    if (live) {
      if (drawn) std::cout << fmt::format("\x1b[{}A\x1b[J", drawn);
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
      std::cout << fmt::format(
          "{}  {}, {} ({:.0f} lost), {:.1f} of {:.1f} kW; findings: {} critical, "
          "{}  (every {} s, Ctrl-C ends)\n",
          time, text::counted(nodes.size(), "node"),
          text::counted(static_cast<unsigned long long>(gpus), "GPU"), lost, power / 1000,
          limit / 1000, critical,
          text::counted(static_cast<unsigned long long>(warning), "warning"), interval);
      output::Table t;
      t.columns = node_line_columns(nodes, false);
      for (const auto& n : nodes) t.rows.push_back(node_line_row(n, ""));
      printer->print_table(t);
      std::cout << std::flush;
      drawn = 2 + nodes.size();
    } else {
      const auto columns = node_line_columns(nodes, true);
      if (!header) printer->begin_stream(columns);
      header = true;
      for (const auto& n : nodes) printer->stream_row(columns, node_line_row(n, time));
    }
    if (o.count && ++refreshes >= o.count) break;
    const auto next = started + std::chrono::milliseconds(std::llround(interval * 1000));
    while (!util::StopFlag::raised() && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

int run_fleet(Context& ctx, const FleetOptions& o) {
  if (o.prometheus.empty())
    throw bad_argument("fleet needs --prometheus URL",
                       "give the Prometheus that scrapes the nodes' gpuclk serve, e.g. "
                       "--prometheus http://prometheus:9090");
  const auto selector = fleet::check_selector(o.selector);
  const auto range = parse::duration_seconds(o.range, "--range", 1, 366.0 * 86400, "1h or 30m");
  const auto timeout = parse::duration_seconds(o.timeout, "--timeout", 0.1, 3600, "10s");
  const auto format = ctx.format();
  const std::chrono::milliseconds timeout_ms(std::llround(timeout * 1000));
  if (o.job && o.pod) throw bad_argument("--job and --pod name one job each", "give one of them");
  if (o.dmon && (o.job || o.pod))
    throw bad_argument(fmt::format("{} and --dmon are two views", o.job ? "--job" : "--pod"),
                       "leave out --dmon for the job's GPUs over --range");
  std::optional<double> at;
  if (!o.at.empty()) {
    if (o.dmon)
      throw bad_argument(
          "--at and --dmon are two views",
          "--dmon shows the fleet now: leave out --at, or --dmon for the fleet as it "
          "was at --at");
    at = fleet::Prometheus::parse_time(o.at, "--at");
  }
  if (o.dmon) return run_fleet_dmon(ctx, o, selector, timeout_ms);
  if (!o.interval.empty() || o.count)
    throw bad_argument("--interval and --count go with --dmon",
                       "add --dmon for one line per node every --interval");
  const long range_s = std::lround(std::ceil(range));
  if (o.job || o.pod) {
    const auto& id = o.job ? *o.job : *o.pod;
    const auto* what = o.job ? "--job" : "--pod";
    if (text::trim(id).empty() || id.find_first_of("\n\r") != std::string::npos ||
        (o.pod && (id.front() == '/' || id.back() == '/')))
      throw bad_argument(fmt::format("bad {} '{}'", what, parse::quote(id)),
                         o.job ? "give a Slurm job id, e.g. --job 1234"
                               : "give the pod as NAMESPACE/NAME (--pod ml/train-0) or its UID");
    return run_fleet_job(ctx,
                         {o.prometheus, selector, range_s, timeout_ms, id, o.pod.has_value(), at});
  }
  fleet::Prometheus prometheus(o.prometheus, timeout_ms);
  if (at) prometheus.set_time(*at);
  ctx.effect("ask Prometheus");
  const auto snap = fleet::collect(prometheus, selector, range_s);
  if (snap.nodes.empty() && snap.gpus.empty())
    throw Error(ExitCode::gpu_not_found,
                fmt::format("no node matches {} at {}", selector.empty() ? "{}" : selector,
                            snap.prometheus),
                "--selector must match the nodes' gpuclk serve targets: up{SELECTOR} lists them "
                "in Prometheus");
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
    if (!findings.empty()) std::cout << '\n';
    print_fleet_findings(std::cout, findings);
  }
  return fleet::exit_code(findings);
}

}  // namespace

void add_fleet_findings(output::Node& root, const std::vector<fleet::FleetFinding>& findings) {
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

void print_fleet_findings(std::ostream& out, const std::vector<fleet::FleetFinding>& findings) {
  std::vector<rules::Finding> problems, notes;
  for (const auto& f : findings)
    (f.finding.severity > rules::Severity::info ? problems : notes).push_back(f.finding);
  print_finding_lines(out, problems, true);
  print_finding_lines(out, notes, false);
}

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
                  "the longest all queries together may take (default 10s; with --dmon, each "
                  "refresh's)");
  sub->add_flag("--dmon", o->dmon,
                "one line per node, refreshed every --interval (streamed when not a terminal)");
  sub->add_option("--interval", o->interval, "--dmon's refresh interval (default 5s)");
  sub->add_option("-c,--count", o->count,
                  "--dmon: stop after this many refreshes (default: Ctrl-C)");
  sub->add_option("--job", o->job,
                  "a Slurm job's GPUs on every node over --range, its totals and its straggler");
  sub->add_option("--pod", o->pod, "the same for a Kubernetes pod (NAMESPACE/NAME or its UID)");
  sub->add_option("--at", o->at,
                  "the fleet as it was at this time, --range up to it (Unix seconds or RFC 3339, "
                  "2024-06-01T12:00:00Z; default now)");
  sub->callback([&ctx, o] { ctx.run = [&ctx, o] { return run_fleet(ctx, *o); }; });
}

}  // namespace gpuclk::cli
