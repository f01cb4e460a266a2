// `gpuclk stat [options] -- CMD [ARGS…]`: run a command, sample the GPUs while it runs, and
// report per GPU what it cost and what held it back (as `perf stat` does for CPUs).
// The report goes to stderr, so the command's own stdout stays clean; --json FILE writes the
// same report as JSON. The exit code is the command's.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "cli/context.h"
#include "gpu/simulator.h"
#include "gpu/status.h"
#include "serve/client.h"
#include "serve/protocol.h"
#include "telemetry/child_process.h"
#include "telemetry/interval.h"
#include "telemetry/sampler.h"
#include "telemetry/verdict.h"
#include "util/error.h"

namespace gpuclk::cli {
namespace {

using namespace std::chrono_literals;
using output::Node;
using telemetry::Summary;

struct StatOptions {
  std::vector<std::string> command;
  std::string json_file;
  std::string interval = "100ms";
  bool all_gpus = false;
};

// What one GPU did during the run.
struct GpuReport {
  telemetry::GpuInfo info;
  Summary summary;
  telemetry::GpuHealth health;
  std::optional<double> truth_energy_j;  // the simulator's exact energy over the run
};

struct RunReport {
  std::vector<std::string> command;
  telemetry::ChildExit exit;
  std::set<unsigned> gpus_used;  // by the command's processes, as NVML lists them
  bool attributed = false;
  telemetry::SamplerOptions sampling;
  std::string sampled_by = "this process";  // or "gpuclk serve" (its socket's stream)
  telemetry::TimingStats timing;
  std::vector<GpuReport> gpus;
};

double ms(telemetry::Duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

template <class Q>
output::Value number(const std::optional<Q>& q, const char* unit, int precision, double scale = 1) {
  return q ? output::number(q->value() * scale, unit, precision) : output::na();
}
output::Value pct(const std::optional<units::Ratio>& r) { return number(r, "%", 1, 100); }

Node gpu_node(const GpuReport& g) {
  const Summary& s = g.summary;
  Node n{"gpu", fmt::format("GPU {} ({})", g.info.index, g.info.name), {}, {}, false};
  n.add("index", "Index", output::integer(g.info.index));
  n.add("uuid", "UUID", output::text(g.info.uuid));
  n.add("duration_s", "Duration", output::number(s.seconds(), "s", 2));
  n.add("samples", "Samples", output::integer(static_cast<long long>(s.fast_samples)));
  n.add("lost", "Lost", output::flag(s.lost));
  n.add("energy_j", "Energy", number(s.energy, "J", 1));
  n.add("energy_source", "Energy from",
        s.energy ? output::text(std::string(to_string(s.energy_source))) : output::na());
  if (!s.energy_note.empty()) n.add("energy_note", "Energy note", output::text(s.energy_note));
  // The memory's share: what no SM clock setting can save (boards that report it: Hopper on).
  if (s.memory_energy) {
    n.add("memory_energy_j", "Energy of the memory", number(s.memory_energy, "J", 1));
    if (s.energy && s.energy->value() > 0) {
      n.add("memory_energy_pct", "Memory's share",
            pct(units::Ratio(std::min(1.0, s.memory_energy->value() / s.energy->value()))));
    }
  }
  if (g.truth_energy_j)
    n.add("simulator_energy_j", "Energy (simulator truth)",
          output::number(*g.truth_energy_j, "J", 1));
  auto& power = n.section("power_w", "Power");
  power.add("mean", "Mean", number(s.power_mean, "W", 1));
  power.add("peak", "Peak", number(s.power_peak, "W", 1));
  if (s.memory_power_mean)
    power.add("memory", "Memory (mean)", number(s.memory_power_mean, "W", 1));
  power.add("limit", "Limit", number(g.info.power_limit, "W", 0));
  auto& sm = n.section("sm_clock_mhz", "SM clock");
  const auto* c = s.sm_clock ? &*s.sm_clock : nullptr;
  sm.add("p5", "p5", c ? output::integer(std::lround(c->p5.value()), "MHz") : output::na());
  sm.add("median", "Median",
         c ? output::integer(std::lround(c->median.value()), "MHz") : output::na());
  sm.add("p95", "p95", c ? output::integer(std::lround(c->p95.value()), "MHz") : output::na());
  sm.add("max", "Max (GPU)", number(g.info.max_sm_clock, "MHz", 0));
  n.add("memory_clock_median_mhz", "Memory clock median",
        s.memory_clock ? output::integer(std::lround(s.memory_clock->median.value()), "MHz")
                       : output::na());
  auto& reasons = n.section("clock_reasons_pct", "Clock event reasons (time active)");
  for (const auto& info : gpu::clock_reasons()) {
    if (auto f = s.reason_fraction(info.bit); f && f->value() > 0) {
      reasons.add(std::string(info.key), std::string(info.key), pct(f));
    }
  }
  if (reasons.children.empty())
    reasons.value = s.reason_seconds > 0 ? output::text("none") : output::na();
  auto& violation = n.section("violation_pct", "Held down by policy (driver counters)");
  violation.add("power", "Power", pct(s.power_violation));
  violation.add("thermal", "Thermal", pct(s.thermal_violation));
  auto& util = n.section("utilization_pct", "Utilization (mean)");
  util.add("gpu", "GPU", pct(s.gpu_utilization));
  util.add("memory", "Memory", pct(s.memory_utilization));
  auto& gpm = n.section("gpm_pct", "GPM activity (mean)");
  const auto none = std::optional<units::Ratio>{};
  gpm.add("sm", "SM", pct(s.gpm ? s.gpm->sm : none));
  gpm.add("tensor", "Tensor", pct(s.gpm ? s.gpm->tensor : none));
  gpm.add("dram", "DRAM", pct(s.gpm ? s.gpm->dram : none));
  gpm.add("sm_occupancy", "SM occupancy", pct(s.gpm ? s.gpm->sm_occupancy : none));
  auto& temp = n.section("temperature_max_c", "Max temperature");
  temp.add("gpu", "GPU", number(s.temperature_max, "C", 0));
  temp.add("memory", "Memory", number(s.memory_temperature_max, "C", 0));
  n.add("read_errors", "Read errors",
        output::integer(static_cast<long long>(g.health.read_errors)));
  if (g.health.read_errors > 0 && g.health.last_error != 0) {
    // Which field failed and how: a count alone cannot be acted on.
    n.add("last_read_error", "Last read error",
          output::text(
              fmt::format("{}: {} (NVML error {})",
                          g.health.last_error_field.empty() ? "?" : g.health.last_error_field,
                          gpu::describe_read_error(g.health.last_error), g.health.last_error)));
  }
  const auto v = telemetry::verdicts(s, g.info);
  n.add("verdict", "Verdict", output::text(v.front().text));
  std::vector<std::string> more;
  for (std::size_t i = 1; i < v.size(); ++i) more.push_back(v[i].text);
  if (!more.empty()) n.add("also", "Also", output::text(fmt::format("{}", fmt::join(more, "; "))));
  return n;
}

Node report_tree(const RunReport& r) {
  Node root;
  root.add("command", "Command", output::text(fmt::format("{}", fmt::join(r.command, " "))));
  root.add("exit_code", "Exit code", output::integer(r.exit.exit_code));
  const char* abbrev = r.exit.signal ? sigabbrev_np(*r.exit.signal) : nullptr;
  root.add("signal", "Killed by signal",
           abbrev ? output::text(fmt::format("SIG{} ({})", abbrev, strsignal(*r.exit.signal)))
                  : output::na());
  root.add("wall_time_s", "Wall time",
           output::number(std::chrono::duration<double>(r.exit.wall).count(), "s", 2));
  std::string used;
  for (auto i : r.gpus_used) used += (used.empty() ? "" : ",") + std::to_string(i);
  root.add("gpus_used_by_command", "GPUs used by the command",
           r.attributed ? output::text(used) : output::na());
  auto& sampling = root.section("sampling", "Sampling");
  sampling.add("sampled_by", "Sampled by", output::text(r.sampled_by));
  sampling.add("interval_ms", "Interval", output::number(ms(r.sampling.fast_interval), "ms", 0));
  sampling.add("slow_interval_ms", "Slow fields every",
               output::number(ms(r.sampling.slow_interval), "ms", 0));
  sampling.add("ticks", "Ticks", output::integer(static_cast<long long>(r.timing.ticks)));
  sampling.add("missed_ticks", "Missed ticks",
               output::integer(static_cast<long long>(r.timing.missed_ticks)));
  sampling.add("lateness_p99_ms", "Lateness p99",
               output::number(ms(r.timing.lateness_p99), "ms", 2));
  auto& gpus = root.section("gpus", "GPUs", true);
  for (const auto& g : r.gpus) gpus.children.push_back(gpu_node(g));
  return root;
}

// The report on stderr (and --json FILE); the command's exit code.
int print_report(Context& ctx, const RunReport& report, std::ofstream& json_file,
                 const std::string& json_path) {
  const Node tree = report_tree(report);
  std::cout.flush();
  std::cerr << '\n';
  ctx.printer(std::cerr)->print_tree(tree);
  if (ctx.format().kind == output::Format::Kind::table && !report.attributed) {
    std::cerr << "note: no process of the command appeared in NVML's process lists, so every "
                 "selected GPU is shown (-i picks GPUs)\n";
  }
  if (json_file.is_open()) {
    output::make_printer(output::Format{output::Format::Kind::json}, json_file)->print_tree(tree);
    json_file.flush();
    if (!json_file) std::cerr << "gpuclk: error: writing " << json_path << " failed\n";
  }
  return report.exit.exit_code;
}

telemetry::TimePoint time_point_of(double seconds) {
  return telemetry::TimePoint(
      std::chrono::duration_cast<telemetry::Duration>(std::chrono::duration<double>(seconds)));
}

// stat from the service's sampler (docs/serve.md): a `stream` of every sample of the selected
// GPUs while the command runs, summarised here by the same SummaryBuilder the sampler uses; this
// process loads no NVML. nullopt (read NVML yourself) when no service answers or it samples at
// another interval than --interval.
// The selected GPUs' static facts, from the service's status answer.
std::vector<telemetry::GpuInfo> gpu_infos(const nlohmann::json& status,
                                          const std::vector<std::size_t>& positions) {
  std::vector<telemetry::GpuInfo> infos;
  for (auto pos : positions) {
    const auto st = serve::status_from_json(status.at("status").at(pos));
    telemetry::GpuInfo info;
    info.index = st.index;
    info.uuid = st.uuid;
    info.name = st.name;
    info.max_sm_clock = st.sm_max.optional();
    info.max_memory_clock = st.memory_max.optional();
    info.power_limit = st.power_limit.optional();
    infos.push_back(std::move(info));
  }
  return infos;
}

// The service sampler's ticks, missed ticks and lateness between two of its snapshots.
telemetry::TimingStats timing_between(const nlohmann::json& from, const nlohmann::json& to) {
  telemetry::TimingStats t;
  t.ticks = to.value("ticks", std::uint64_t{0}) - from.value("ticks", std::uint64_t{0});
  t.missed_ticks =
      to.value("missed_ticks", std::uint64_t{0}) - from.value("missed_ticks", std::uint64_t{0});
  t.lateness_p99 = std::chrono::duration_cast<telemetry::Duration>(
      std::chrono::duration<double, std::milli>(to.value("lateness_p99_ms", 0.0)));
  return t;
}

// The service's stream, as one stat run sees it: a summary per GPU from the window's start (the
// counter read the service made for the stream), the read errors after the first line, a loss.
struct StreamWindow {
  explicit StreamWindow(std::size_t gpus) : builders(gpus), health(gpus), errors_before(gpus) {}

  void consume(const nlohmann::json& line) {
    const auto now = time_point_of(line.at("time").get<double>());
    const auto& gpus = line.at("gpus");
    if (!start) {
      // The first line comes after a counter read the service made for this stream: the window
      // starts there, so that the energy counter covers it from its first moment.
      start = now;
      for (const auto& g : gpus) {
        for (const auto& sl : g.at("slow_samples"))
          start = std::min(*start, serve::slow_sample_from_json(sl, now).time);
      }
    }
    last = now;
    for (std::size_t k = 0; k < builders.size() && k < gpus.size(); ++k) add(k, gpus[k], now);
  }

  // The samples up to the command's end: every line up to the service's time in `asked` (a
  // snapshot taken once the command has ended), then the next one. The counters are read once a
  // second: the window's last part, after the last read, comes from the power readings. (A
  // service that does not say its time, an older gpuclk serve: the next line.)
  void read_to(serve::Client& client, const nlohmann::json& asked, double line_seconds) {
    const auto end = asked.contains("time")
                         ? std::optional(time_point_of(asked.at("time").get<double>()))
                         : std::nullopt;
    const auto wait = std::chrono::milliseconds(static_cast<long long>(line_seconds * 1000) + 5000);
    do {
      auto line = client.read_line(wait);
      if (!line) break;
      consume(*line);
    } while (end && (!last || *last < *end));
  }

  std::optional<telemetry::TimePoint> start, last;
  std::vector<std::optional<telemetry::SummaryBuilder>> builders;
  std::vector<telemetry::GpuHealth> health;

 private:
  void add(std::size_t k, const nlohmann::json& g, telemetry::TimePoint now) {
    if (!builders[k]) builders[k].emplace(*start);
    for (const auto& f : g.at("samples")) builders[k]->add(serve::fast_sample_from_json(f, now));
    for (const auto& sl : g.at("slow_samples"))
      builders[k]->add(serve::slow_sample_from_json(sl, now));
    // The service counts read errors since it started: the run's are those after its first line.
    const auto errors = g.value("read_errors", std::uint64_t{0});
    if (!errors_before[k]) errors_before[k] = errors;
    health[k].read_errors = errors - std::min(errors, *errors_before[k]);
    if (health[k].read_errors > 0) {
      health[k].last_error = g.value("last_error", 0);
      health[k].last_error_field = g.value("last_error_field", std::string());
    }
    if (g.contains("lost_t") && !health[k].lost) {
      health[k].lost = true;
      health[k].lost_at = now + std::chrono::duration_cast<telemetry::Duration>(
                                    std::chrono::duration<double>(g.at("lost_t").get<double>()));
      builders[k]->mark_lost(*health[k].lost_at);
    }
  }
  std::vector<std::optional<std::uint64_t>> errors_before;
};

std::optional<int> stat_through_service(Context& ctx, const StatOptions& o,
                                        telemetry::Duration interval, std::ofstream& json_file) {
  auto hello = ctx.service_hello();
  if (!hello) return std::nullopt;
  const double sampling = hello->value("interval_seconds", 0.0);
  if (std::abs(sampling - std::chrono::duration<double>(interval).count()) > 1e-6)
    return std::nullopt;
  const auto status = ctx.ask_service({{"request", "status"}});
  if (!status) return std::nullopt;
  const auto positions = ctx.select_from(status->at("gpus"));
  const std::vector<telemetry::GpuInfo> infos = gpu_infos(*status, positions);
  nlohmann::json indexes = nlohmann::json::array();
  for (const auto& info : infos) indexes.push_back(info.index);
  // The sampler's timing, and on the simulator each GPU's exact energy (in `indexes` order).
  auto snapshot_now = [&ctx, &indexes] {
    return ctx.ask_service({{"request", "snapshot"}, {"gpus", indexes}}).value();
  };
  auto truth_of = [](const nlohmann::json& snapshot, std::size_t k) -> std::optional<double> {
    const auto& g = snapshot.at("gpus").at(k);
    if (!g.contains("simulator_energy_j")) return std::nullopt;
    return g.at("simulator_energy_j").get<double>();
  };
  // Which GPUs the command uses: the processes in the service's `top` view (asked once now,
  // so that the service reads it while the command runs).
  auto processes = [&ctx] { return ctx.ask_service({{"request", "view"}, {"name", "top"}}); };
  processes();

  auto client = serve::Client::connect(ctx.service_socket());
  if (!client) throw Error(ExitCode::other, "the service (gpuclk serve) stopped answering");
  // A line per sampling interval: the window ends at most one interval after the command.
  const double line_seconds = sampling;
  client->send({{"request", "stream"},
                {"gpus", indexes},
                {"interval_seconds", line_seconds},
                {"samples", "all"}});

  RunReport report;
  report.command = o.command;
  report.sampled_by = "gpuclk serve";
  report.sampling.fast_interval = interval;
  report.sampling.slow_interval = std::chrono::duration_cast<telemetry::Duration>(
      std::chrono::duration<double>(hello->value("slow_interval_seconds", 1.0)));
  StreamWindow window(infos.size());
  auto first = client->read_line(10000ms);
  if (!first) throw Error(ExitCode::other, "the service (gpuclk serve) did not start streaming");
  window.consume(*first);
  // After the first line (which waits for the service's next slow read, up to a second): the
  // window starts here, and so do the ticks and the simulator's energy counted for it.
  const auto snapshot_start = snapshot_now();
  const auto& timing_start = snapshot_start.at("timing");
  // The lines that have come, for at most `budget` of wall time: where parsing them is slower
  // than the service sends them (a sanitized build on a loaded machine), an unbounded drain never
  // returned, no other request went out, and the service dropped the idle connection.
  auto drain = [&](std::chrono::milliseconds budget) {
    const auto until = std::chrono::steady_clock::now() + budget;
    while (std::chrono::steady_clock::now() < until) {
      auto line = client->read_line(0ms);
      if (!line) break;
      window.consume(*line);
    }
  };

  telemetry::ChildProcess child(o.command);
  // A service that stops during the run leaves the command running to its end: its exit code
  // is still stat's, with no report.
  std::optional<Error> failed;
  auto attribute = [&] {
    if (failed) return;
    try {
      drain(200ms);
      auto view = processes();
      if (!view) return;
      const auto& rows = view->at("rows");
      for (auto pos : positions) {
        for (const auto& p : rows.at(pos).value("processes", nlohmann::json::array())) {
          if (child.owns(static_cast<pid_t>(p.value("pid", 0))))
            report.gpus_used.insert(status->at("gpus").at(pos).at("index").get<unsigned>());
        }
      }
    } catch (const Error& e) {
      failed = e;
    }
  };
  report.exit = child.wait(attribute, 500ms);
  nlohmann::json snapshot_end;
  try {
    if (failed) throw *failed;
    window.read_to(*client, snapshot_now(), line_seconds);
    snapshot_end = snapshot_now();
  } catch (const Error& e) {
    std::cerr << fmt::format(
        "gpuclk: stat: no report: {} (during the run; --direct samples the "
        "GPUs itself)\n",
        e.what());
    return report.exit.exit_code;
  }
  report.attributed = !report.gpus_used.empty();
  report.timing = timing_between(timing_start, snapshot_end.at("timing"));
  for (std::size_t k = 0; k < infos.size(); ++k) {
    const bool used = report.gpus_used.count(infos[k].index) > 0;
    if (report.attributed && !used && !o.all_gpus && !ctx.selection_given()) continue;
    GpuReport g{infos[k], window.builders[k] ? window.builders[k]->finish(*window.last) : Summary{},
                window.health[k], std::nullopt};
    const auto truth_start = truth_of(snapshot_start, k), truth_end = truth_of(snapshot_end, k);
    if (truth_start && truth_end && !g.summary.lost) g.truth_energy_j = *truth_end - *truth_start;
    report.gpus.push_back(std::move(g));
  }
  return print_report(ctx, report, json_file, o.json_file);
}

int run_stat(Context& ctx, const StatOptions& o) {
  // From here a SIGTERM waits for the command and is passed on to it: stat stops as asked and
  // still writes its report, however early it came (a Slurm job cancelled at once).
  const telemetry::EarlySignalForwarding early_signals;
  if (o.command.empty()) {
    throw bad_argument("stat needs a command to run", "gpuclk stat [options] -- CMD [ARGS...]");
  }
  auto interval = telemetry::parse_interval(o.interval);
  if (!interval) {
    throw bad_argument(fmt::format("bad interval --interval {}", o.interval),
                       "give seconds (0.1) or milliseconds (100ms), at least 10ms");
  }
  ctx.format();  // a malformed --format fails before the command runs
  // Opened before the command runs: a path that cannot be written is a bad argument, not a
  // surprise after an hour of training.
  std::ofstream json_file;
  if (!o.json_file.empty()) {
    ctx.effect("write --json FILE");
    json_file.open(o.json_file);
    if (!json_file) throw bad_argument(fmt::format("cannot write --json {}", o.json_file));
  }
  if (auto through_service = stat_through_service(ctx, o, *interval, json_file))
    return *through_service;
  const auto devices = ctx.selected();

  RunReport report;
  report.command = o.command;
  report.sampling.fast_interval = *interval;
  report.sampling.slow_interval = std::max<telemetry::Duration>(*interval, 1s);
  report.sampling.fields = telemetry::FieldSet::standard();
  report.sampling.fast_capacity = 600;  // summaries do not need the rings; keep them small
  report.sampling.slow_capacity = 60;
  telemetry::Sampler sampler(telemetry::device_sources(devices, report.sampling.fields),
                             ctx.clock(), report.sampling);
  // On the simulator, its exact energy counter beside NVML's (not_supported on real GPUs).
  std::vector<gpu::Reading<units::Joules>> truth_start(devices.size());

  // The truth is read right before start() and right after stop(), which read the counters first
  // and last: the two windows match to a millisecond or so.
  for (std::size_t i = 0; i < devices.size(); ++i)
    truth_start[i] = gpu::simulator_energy(*devices[i]);
  sampler.start();
  telemetry::ChildProcess child(o.command);
  // Which GPUs the command uses: NVML lists the processes holding a context on each GPU.
  auto attribute = [&] {
    for (const auto* d : devices) {
      auto processes = d->processes();
      if (!processes) continue;
      for (const auto& p : *processes) {
        if (child.owns(static_cast<pid_t>(p.pid))) report.gpus_used.insert(d->index());
      }
    }
  };
  report.exit = child.wait(attribute, 500ms);
  sampler.stop();
  report.attributed = !report.gpus_used.empty();
  report.sampling = sampler.options();
  report.timing = sampler.timing();

  for (std::size_t i = 0; i < devices.size(); ++i) {
    const bool used = report.gpus_used.count(devices[i]->index()) > 0;
    if (report.attributed && !used && !o.all_gpus && !ctx.selection_given()) continue;
    GpuReport g{sampler.info(i), sampler.summary(i), sampler.health(i), std::nullopt};
    if (const auto truth_end = gpu::simulator_energy(*devices[i]);
        truth_start[i] && truth_end && !g.summary.lost) {
      g.truth_energy_j = truth_end->value() - truth_start[i]->value();
    }
    report.gpus.push_back(std::move(g));
  }

  return print_report(ctx, report, json_file, o.json_file);
}

}  // namespace

void add_stat_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<StatOptions>();
  auto* sub = app.add_subcommand("stat",
                                 "Run a command and report per GPU its energy, power, clocks, "
                                 "clock event reasons, utilization and a verdict (as perf stat)");
  sub->add_option("--json", opts->json_file, "also write the report as JSON to this file");
  sub->add_option("--interval", opts->interval,
                  "fast sampling interval: 0.1, 100ms (default 100ms)");
  sub->add_flag("--all-gpus", opts->all_gpus,
                "report every selected GPU, not only those the command used");
  // Everything from the first word that is not a stat option on is the command, with or without
  // a `--` before it, so the command's own options are never taken for ours.
  sub->add_option("command", opts->command, "the command and its arguments")->expected(-1);
  sub->positionals_at_end();
  sub->footer(
      "Usage: gpuclk stat [options] [--] CMD [ARGS...]\n"
      "Exit code: the command's (128 + signal if a signal killed it). The report goes to stderr.");
  sub->callback([&ctx, opts] { ctx.run = [&ctx, opts] { return run_stat(ctx, *opts); }; });
}

}  // namespace gpuclk::cli
