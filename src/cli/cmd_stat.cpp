// `gpuclk stat [options] -- CMD [ARGS…]`: run a command, sample the GPUs while it runs, and
// report per GPU what it cost and what held it back (as `perf stat` does for CPUs).
// The report goes to stderr, so the command's own stdout stays clean; --json FILE writes the
// same report as JSON. The exit code is the command's.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/install_paths.h"
#include "cli/stat_owner.h"
#include "gpu/status.h"
#include "host/child_process.h"
#include "serve/run_watch.h"
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
  std::string job, pod;  // a job the service watched, instead of a command
  bool job_given = false, pod_given = false;
  std::string json_file;
  std::string interval = "100ms";
  bool all_gpus = false;
};

using GpuReport = serve::WatchedGpu;

struct RunReport {
  std::vector<std::string> command;
  host::ChildExit exit;
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
    if (!json_file) {
      // The report asked for is not there: a command that succeeded does not make that exit 0
      // (a job script would take the missing file for a written one); a failed command's code
      // stays what it was, as it says more.
      std::cerr << "gpuclk: error: writing the report to --json " << json_path
                << " failed (the report above is all there is)\n"
                << "gpuclk: give --json a file this user can write\n";
      if (report.exit.exit_code == 0) return static_cast<int>(ExitCode::other);
    }
  }
  return report.exit.exit_code;
}

// --sim's scenario as libnvml-sim.so reads it from GPUCLK_SIM_SCENARIO (Context::nvml's rule: a
// file is its absolute path, a top-level name stays a name, a name in a subfolder its file).
std::string sim_scenario(const std::string& sim) {
  std::error_code ec;
  if (sim == "default" || sim.empty()) return "default";
  if (std::filesystem::exists(sim, ec)) return std::filesystem::absolute(sim).string();
  const auto named = install::scenarios_dir() / (sim + ".toml");
  if (sim.find('/') != std::string::npos && std::filesystem::exists(named, ec))
    return std::filesystem::absolute(named).string();
  return sim;
}

int run_stat(Context& ctx, const StatOptions& o) {
  // From here a SIGTERM waits for the command and is passed on to it: stat stops as asked and
  // still writes its report, however early it came (a Slurm job cancelled at once).
  const host::EarlySignalForwarding early_signals;
  // An empty --job or --pod names no job ("stat needs a command" was no help).
  if ((o.job_given && o.job.empty()) || (o.pod_given && o.pod.empty())) {
    throw bad_argument(fmt::format("{} '': no job named", o.job_given ? "--job" : "--pod"),
                       "give the Slurm job ID (--job 4242) or the pod (--pod UID or "
                       "NAMESPACE/NAME), or a command: gpuclk stat -- CMD");
  }
  if (!o.job.empty() || !o.pod.empty()) {
    if (!o.command.empty() || (!o.job.empty() && !o.pod.empty())) {
      throw bad_argument("give one of --job, --pod or a command",
                         "gpuclk stat --job ID | --pod UID|NAMESPACE/NAME | -- CMD [ARGS...]");
    }
    return run_stat_owner(ctx, o.job.empty() ? "pod:" + o.pod : "slurm:" + o.job, o.json_file);
  }
  if (o.command.empty()) {
    throw bad_argument("stat needs a command to run", "gpuclk stat [options] -- CMD [ARGS...]");
  }
  const auto interval = telemetry::interval_option(o.interval, "--interval");
  ctx.format();  // a malformed --format fails before the command runs
  // Opened before the command runs: a path that cannot be written is a bad argument, not a
  // surprise after an hour of training.
  std::ofstream json_file;
  if (!o.json_file.empty()) {
    ctx.effect("write --json FILE");
    json_file.open(o.json_file);
    if (!json_file) throw bad_argument(fmt::format("cannot write --json {}", o.json_file));
  }
  // Where the readings come from: the stream of a service that answers and samples at
  // --interval (this process then loads no NVML), else stat's own sampler.
  std::unique_ptr<serve::RunWatch> watch;
  if (const auto* hello = ctx.service_hello()) {
    watch = serve::open_service_watch(
        *ctx.service(), *hello,
        [&ctx](const std::vector<gpu::DeviceKey>& keys) { return ctx.select_from(keys); },
        interval);
  }
  if (!watch) {
    telemetry::SamplerOptions sampling;
    sampling.fast_interval = interval;
    sampling.slow_interval = std::max<telemetry::Duration>(interval, 1s);
    sampling.fields = telemetry::FieldSet::standard();
    sampling.fast_capacity = 600;  // summaries do not need the rings; keep them small
    sampling.slow_capacity = 60;
    watch = serve::open_sampler_watch(ctx.selected(), ctx.clock(), sampling);
  }

  RunReport report;
  report.command = o.command;
  // On the simulated node the command sees it too, as sweep's does: a `gpuclk sim-job` (or a
  // pynvml script) under `gpuclk --sim stat` loaded the driver's library and failed (exit 9/12).
  // Named, not loaded: through the service this process loads no NVML.
  if (!ctx.options.sim.empty()) {
    const auto lib =
        ctx.options.nvml_lib.empty() ? install::sim_library().string() : ctx.options.nvml_lib;
    ::setenv("GPUCLK_NVML_LIB", lib.c_str(), 1);
    // And its scenario, as the context names it when it loads the simulator (which it has not,
    // through the service): a sim-job on another scenario's state lost its job.
    ::setenv("GPUCLK_SIM_SCENARIO", sim_scenario(ctx.options.sim).c_str(), 0);
  }
  watch->start();
  host::ChildProcess child(o.command);
  // Which GPUs the command uses: the GPUs where its processes hold a context.
  const auto owns = [&child](pid_t pid) { return child.owns(pid); };
  report.exit = child.wait([&] { watch->attribute(owns, report.gpus_used); }, 500ms);
  serve::Watched watched;
  try {
    watched = watch->finish();
  } catch (const Error& e) {
    // A service that stops during the run leaves the command running to its end: its exit code
    // is still stat's, with no report.
    std::cerr << fmt::format(
        "gpuclk: stat: no report: {} (during the run; --direct samples the GPUs itself)\n",
        e.what());
    return report.exit.exit_code;
  }
  report.attributed = !report.gpus_used.empty();
  report.sampled_by = watched.sampled_by;
  report.sampling = watched.sampling;
  report.timing = watched.timing;
  for (auto& g : watched.gpus) {
    const bool used = report.gpus_used.count(g.info.index) > 0;
    if (report.attributed && !used && !o.all_gpus && !ctx.selection_given()) continue;
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
  auto* job = sub->add_option(
      "--job", opts->job,
      "instead of a command: Slurm job ID as gpuclk serve saw it (running, or ended "
      "in the last day)");
  auto* pod = sub->add_option(
      "--pod", opts->pod,
      "instead of a command: the Kubernetes pod with this UID (or NAMESPACE/NAME, once the "
      "service has it from the kubelet)");
  // Everything from the first word that is not a stat option on is the command, with or without
  // a `--` before it, so the command's own options are never taken for ours.
  sub->add_option("command", opts->command, "the command and its arguments")->expected(-1);
  sub->positionals_at_end();
  sub->footer(
      "Usage: gpuclk stat [options] [--] CMD [ARGS...]\n"
      "       gpuclk stat --job ID | --pod UID|NS/NAME   (a job gpuclk serve watched; report on "
      "stdout)\n"
      "Exit code: the command's (128 + signal if a signal killed it). The report goes to stderr.");
  sub->callback([&ctx, opts, job, pod] {
    opts->job_given = job->count() > 0;
    opts->pod_given = pod->count() > 0;
    ctx.run = [&ctx, opts] { return run_stat(ctx, *opts); };
  });
}

}  // namespace gpuclk::cli
