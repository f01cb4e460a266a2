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
#include "fleet/fleet_rules.h"
#include "fleet/fleet_view.h"
#include "fleet/job_report.h"
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

// --dmon: one line per node, every --interval. On a terminal the lines are redrawn in place
// under a status line; piped or redirected, they stream (a time column, no escape codes, no
// status line) in the format asked for, as `gpuclk dmon` does.
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
      std::cout << fleet::node_lines_heading(nodes, time, interval);
      output::Table t;
      t.columns = fleet::node_line_columns(nodes, false);
      for (const auto& n : nodes) t.rows.push_back(fleet::node_line_row(n, ""));
      printer->print_table(t);
      std::cout << std::flush;
      drawn = 2 + nodes.size();
    } else {
      const auto columns = fleet::node_line_columns(nodes, true);
      if (!header) printer->begin_stream(columns);
      header = true;
      for (const auto& n : nodes) printer->stream_row(columns, fleet::node_line_row(n, time));
    }
    if (o.count && ++refreshes >= o.count) break;
    const auto next = started + std::chrono::milliseconds(std::llround(interval * 1000));
    while (!util::StopFlag::raised() && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

// --job / --pod: one job's GPUs on every node side by side (fleet/job_report.h).
int run_fleet_job(Context& ctx, const FleetOptions& o, const fleet::JobQuery& q,
                  std::chrono::milliseconds timeout, std::optional<double> at) {
  fleet::Prometheus prometheus(o.prometheus, timeout);
  if (at) prometheus.set_time(*at);
  ctx.effect("ask Prometheus");
  fleet::Snapshot snap;
  const auto job = fleet::look_up_job(prometheus, q, snap);
  const auto code = fleet::exit_code(job.findings);
  auto printer = ctx.printer();
  const auto format = ctx.format();
  if (format.kind == output::Format::Kind::json) {
    printer->print_tree(fleet::job_tree(job, snap));
    return code;
  }
  if (format.kind == output::Format::Kind::csv) {
    printer->print_table(fleet::job_table(job, snap.range_s));
    return code;
  }
  std::cout << fleet::job_heading(job, snap.range_s);
  printer->print_table(fleet::job_table(job, snap.range_s));
  std::cout << fleet::job_totals(job);
  if (!job.findings.empty()) std::cout << '\n';
  fleet::print_findings(std::cout, job.findings);
  return code;
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
    return run_fleet_job(ctx, o, {selector, range_s, id, o.pod.has_value()}, timeout_ms, at);
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
    printer->print_tree(fleet::fleet_tree(snap, findings));
    return fleet::exit_code(findings);
  }
  printer->print_table(fleet::gpu_table(snap, findings));
  if (format.kind == output::Format::Kind::table) {
    std::cout << '\n';
    printer->print_table(fleet::node_table(snap));
    if (!findings.empty()) std::cout << '\n';
    fleet::print_findings(std::cout, findings);
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
