// `gpuclk sweep`: throughput, power and energy against the SM clock lock or the power limit.
// Each point is one journaled transaction through src/control, written by a SettingsWriter
// (control/settings_writer.h): directly as root, as a delegated `set` through `gpuclk serve` for
// a user who is not root. The GPUs go back to the settings found before the sweep at the end, on
// SIGINT/SIGTERM/SIGHUP, and after a kill -9 by `gpuclk restore` (the journal holds the
// originals; through the service, also when the user's session ends). src/sweep does the rest.
//
// Checks run cheapest first: arguments (2), read-only mode (4), NVML and -i (12/9/6), the points
// against each GPU (2), the workload (3: no CUDA and no simulator).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "cli/cmd_control.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "control/validate.h"
#include "gpu/sim_jobs.h"
#include "sweep/best.h"
#include "sweep/plan.h"
#include "sweep/plot.h"
#include "sweep/report.h"
#include "sweep/run.h"
#include "sweep/workload.h"
#include "telemetry/interval.h"
#include "telemetry/summary.h"
#include "util/error.h"
#include "util/stop_signal.h"

namespace gpuclk::cli {
namespace {

namespace fs = std::filesystem;

struct SweepOptions {
  std::string sm_clocks, power_limits, workload;
  double warmup = 2, duration = 5;
  CLI::Option* warmup_option = nullptr;  // count() > 0: given on the command line
  CLI::Option* duration_option = nullptr;
  CLI::Option* sm_clocks_option = nullptr;  // an empty value given is no axis named
  CLI::Option* power_limits_option = nullptr;
  CLI::Option* out_option = nullptr;
  int repeat = 1;
  std::string max_slowdown = "5%";
  std::string out;
  std::string apply_best;
  std::string metric, metric_unit = "unit";
  std::string interval = "100ms";
  bool concurrent = false, fail_fast = false, snap = false, no_baseline = false;
  bool per_gpu = false;  // --apply-best: each GPU its own best point
  std::vector<std::string> command;
};

const std::vector<std::string> kBestKinds = {"max_throughput", "min_energy", "min_edp",
                                             "min_energy_within_slowdown", "knee"};

// "5%", "0.05", "5 %".
double parse_slowdown(const std::string& text) {
  std::string t = text;
  t.erase(std::remove(t.begin(), t.end(), ' '), t.end());
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v)) v = -1;
  if (percent) v /= 100;
  if (!(v >= 0 && v < 1)) {
    throw bad_argument(fmt::format("--max-slowdown {}: not a fraction below 100 %", text),
                       "e.g. 5% or 0.05");
  }
  return v;
}

// One change on `gpus`: the request each GPU gets, validated against it, then written by
// `writer` (a journaled transaction, or a delegated `set` the service checks). Throws the
// report's Error, or the service's refusal, when it fails (the sweep then restores and stops).
// `written` collects the GPUs a change may have reached: all it asks for, less those of a request
// the service refused (the policy, a holder, a bad value: nothing written); a request whose answer
// never came may have landed.
void apply_requests(control::SettingsWriter& writer, const std::string& command,
                    const std::vector<gpu::Device*>& gpus,
                    const std::function<control::Request(gpu::Device&)>& request_of,
                    std::set<std::string>* written = nullptr) {
  std::vector<control::GpuCheck> checks;
  checks.reserve(gpus.size());
  for (auto* g : gpus) checks.push_back({request_of(*g), control::facts_of(*g)});
  const auto checked = control::validate_all(checks, false);
  std::vector<control::SettingsWriter::Target> targets;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (!checked.targets[i].empty()) targets.push_back({gpus[i], checked.targets[i]});
  }
  std::vector<std::string> added;
  if (written) {
    for (const auto& t : targets)
      if (written->insert(t.gpu->uuid()).second) added.push_back(t.gpu->uuid());
  }
  control::ChangeReport report;
  try {
    report = writer.apply(targets, command);
  } catch (const Error& e) {
    const bool refused = e.code() == ExitCode::no_permission ||
                         e.code() == ExitCode::bad_argument || e.code() == ExitCode::gpu_not_found;
    if (written && refused)
      for (const auto& uuid : added) written->erase(uuid);
    throw;
  }
  if (report.exit != ExitCode::ok) throw Error(report.exit, report.error, report.hint);
}

control::Request point_request(sweep::Axis axis, double value) {
  control::Request r;
  if (axis == sweep::Axis::sm_clock) {
    const auto mhz = static_cast<unsigned>(std::lround(value));
    r.locked_gpu_clocks = control::Change<control::ClockLock>::of(control::ClockLock::range(
        control::ClockBound::megahertz(mhz), control::ClockBound::megahertz(mhz)));
  } else {
    r.power_limit = control::Change<units::Milliwatts>::of(
        units::Milliwatts(static_cast<std::uint64_t>(std::llround(value * 1000.0))));
  }
  return r;
}

// What each GPU had before the sweep, to go back to.
struct Before {
  bool journaled = false;  // gpuclk had already changed it: restore to these settings
  control::Settings settings;
};

std::map<std::string, Before> settings_before(Context& ctx, const std::vector<gpu::Device*>& gpus) {
  control::ControlSession peek(session_options(ctx, "sweep", true),
                               true);  // reads only: no lock, no write access
  auto controls = peek.open(gpus);
  std::map<std::string, Before> out;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    Before b;
    b.journaled = peek.journal().find(gpus[i]->uuid()) != nullptr;
    b.settings = control::known_settings(*controls[i], peek.journal());
    out[gpus[i]->uuid()] = b;
  }
  return out;
}

// Back to `before` (control::SettingsWriter::restore: from the journal where gpuclk had not touched
// a GPU before, else the swept setting as it was; through the service, its `restore`), on the GPUs
// the sweep may have reached (`written`): one whose every request was refused has nothing to undo.
void restore_settings(control::SettingsWriter& writer, const std::vector<gpu::Device*>& gpus,
                      sweep::Axis axis, const std::map<std::string, Before>& before,
                      const std::set<std::string>& written) {
  std::vector<control::SettingsWriter::Previous> previous;
  // The journaled GPUs' settings as they were, checked as a change is (written exactly).
  std::vector<std::size_t> journaled;  // in `previous`
  std::vector<control::GpuCheck> checks;
  for (auto* g : gpus) {
    if (!written.count(g->uuid())) continue;
    const auto& b = before.at(g->uuid());
    previous.push_back({g, b.journaled, {}});
    if (!b.journaled) continue;
    control::Request r;
    if (axis == sweep::Axis::sm_clock) {
      const auto lock = b.settings.locked_gpu_clocks.value_or(control::ClockLock::none());
      r.locked_gpu_clocks = lock.locked ? control::Change<control::ClockLock>::of(lock)
                                        : control::Change<control::ClockLock>::driver_default();
    } else if (b.settings.power_limit_mw) {
      r.power_limit = control::Change<units::Milliwatts>::of(*b.settings.power_limit_mw);
    }
    journaled.push_back(previous.size() - 1);
    checks.push_back({r, control::facts_of(*g)});
  }
  const auto checked = control::validate_all(checks, false);
  for (std::size_t i = 0; i < journaled.size(); ++i)
    previous[journaled[i]].settings = checked.targets[i];
  if (previous.empty()) return;
  const auto report = writer.restore(previous, "sweep (restore)");
  if (report.exit != ExitCode::ok) throw Error(report.exit, report.error, report.hint);
}

std::unique_ptr<sweep::Workload> make_workload(Context& ctx, const SweepOptions& o,
                                               sweep::Timing timing) {
  if (!o.command.empty()) {
    sweep::CommandOptions c;
    c.argv = o.command;
    if (!o.metric.empty()) c.metric = o.metric;
    c.metric_unit = o.metric_unit;
    c.repeat = static_cast<unsigned>(o.repeat);
    if (ctx.simulated()) c.nvml_library = ctx.nvml_library_path();
    return sweep::command_workload(std::move(c), ctx.clock());
  }
  if (auto jobs = gpu::SimJobs::of(ctx.nvml())) {
    return sweep::simulated_workload(*jobs, o.workload, ctx.clock(), timing);
  }
  return sweep::bench_workload(o.workload, timing);
}

void print_progress(const sweep::ProgressInfo& p) {
  std::string eta = p.eta_seconds >= 0 ? fmt::format(", about {:.0f} s left", p.eta_seconds) : "";
  std::cerr << fmt::format("\r\033[Ksweep: point {}/{} ({}){}", std::min(p.done + 1, p.total),
                           p.total, p.label, eta);
  if (p.label == "done") std::cerr << "\r\033[K";
  std::cerr.flush();
}

void write_text(const fs::path& path, const std::function<void(std::ostream&)>& body) {
  std::ofstream out(path);
  body(out);
  out.close();
  if (!out) throw Error(ExitCode::other, "cannot write " + path.string());
}

// The report: stdout in --format; with --out also sweep.json, sweep.csv and the plots. Returns
// 0, or the exit code of plots that could not be written (said on stderr).
int print_report(Context& ctx, const sweep::Report& report,
                 const std::optional<fs::path>& out_dir) {
  const auto format = ctx.format();
  const auto tree = sweep::report_tree(report);
  if (format.kind == output::Format::Kind::json) {
    ctx.printer()->print_tree(tree);
  } else {
    ctx.printer()->print_table(sweep::points_table(report));
    if (format.kind == output::Format::Kind::table) {
      if (!report.best.empty()) {
        std::cout << "\nBest points (" << report.workload << ", " << report.data
                  << " data; base: the settings found before, else the fastest point):\n";
        ctx.printer()->print_table(sweep::best_table(report));
      }
      if (!report.best_per_gpu.empty()) {
        std::cout << "\nBest points per GPU (each GPU's own curve; base: its settings found "
                     "before):\n";
        ctx.printer()->print_table(sweep::best_per_gpu_table(report));
      }
      for (const auto& n : report.notes) std::cout << "note: " << n << '\n';
    }
  }
  std::cout.flush();
  int rc = 0;
  if (out_dir) {
    write_text(*out_dir / "sweep.json", [&](std::ostream& s) {
      output::make_printer(output::Format{output::Format::Kind::json}, s)->print_tree(tree);
    });
    write_text(*out_dir / "sweep.csv", [&](std::ostream& s) {
      output::make_printer(output::Format{output::Format::Kind::csv}, s)
          ->print_table(sweep::points_table(report));
    });
    try {
      sweep::write_plots(report, *out_dir);
    } catch (const Error& e) {
      std::cerr << "gpuclk: " << e.what() << (e.hint().empty() ? "" : " (" + e.hint() + ")")
                << '\n';
      rc = static_cast<int>(e.code());
    }
    if (format.kind == output::Format::Kind::table) {
      std::cout << "wrote " << (*out_dir / "sweep.json").string() << ", sweep.csv, sweep.png, "
                << "sweep.svg\n";
    }
  }
  return rc;
}

// The options that do not depend on the GPUs: each bad one is exit 2, before anything runs.
void check_options(const SweepOptions& o) {
  const auto given_empty = [](const CLI::Option* option, const std::string& value) {
    return option && option->count() > 0 && value.empty();
  };
  if (given_empty(o.sm_clocks_option, o.sm_clocks))
    throw bad_argument("--sm-clocks '': no clock named",
                       "e.g. --sm-clocks 810:1980:90 or 1410,1980");
  if (given_empty(o.power_limits_option, o.power_limits))
    throw bad_argument("--power-limits '': no limit named",
                       "e.g. --power-limits 200:700:50 or 450,700");
  if (given_empty(o.out_option, o.out))
    throw bad_argument("--out '': no directory named",
                       "give a directory for sweep.json, sweep.csv and the plots, or leave --out "
                       "out");
  if (o.sm_clocks.empty() == o.power_limits.empty()) {
    throw bad_argument("give one of --sm-clocks or --power-limits",
                       "e.g. --sm-clocks 810:1980:90 or --power-limits 200:700:50");
  }
  if (o.workload.empty() == o.command.empty()) {
    throw bad_argument("give --workload NAME or a command after --",
                       "e.g. --workload gemm-bf16, or -- python train.py");
  }
  const auto& names = sweep::workload_names();
  if (!o.workload.empty() && std::find(names.begin(), names.end(), o.workload) == names.end()) {
    std::string valid;
    for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
    throw bad_argument(fmt::format("unknown --workload '{}'", o.workload), "valid: " + valid);
  }
  if (!o.metric.empty() && o.command.empty()) {
    throw bad_argument("--metric reads a command's output: give the command after --");
  }
  if (o.repeat < 1) {
    throw bad_argument(fmt::format("--repeat {}: need at least 1 run per point", o.repeat),
                       "e.g. --repeat 3");
  }
  // A command's window is its own runs: --warmup/--duration would be silently ignored.
  const bool duration_given = o.duration_option && o.duration_option->count() > 0;
  const bool warmup_given = o.warmup_option && o.warmup_option->count() > 0;
  if (!o.command.empty() && (warmup_given || duration_given)) {
    throw bad_argument(
        fmt::format("{} times --workload's measured window; a command is measured over its own "
                    "runs",
                    duration_given ? "--duration" : "--warmup"),
        "drop it, and give --repeat N to run the command N times per point");
  }
  if (!(o.warmup >= 0) || !(o.duration > 0)) {
    throw bad_argument(fmt::format("--warmup {} / --duration {}: need warmup ≥ 0, duration > 0",
                                   o.warmup, o.duration));
  }
  // A shorter window gets no energy (the power reading is a 1 s average): every point's Power
  // and Energy were N/A and no best point was found, without a word why.
  if (o.command.empty() && o.duration < telemetry::kShortestEnergyWindowSeconds) {
    throw bad_argument(
        fmt::format("--duration {:g}: a window shorter than {:g} s gets no energy or mean power",
                    o.duration, telemetry::kShortestEnergyWindowSeconds),
        "give --duration 1 or more (seconds; default 5)");
  }
  if (!o.apply_best.empty() &&
      std::find(kBestKinds.begin(), kBestKinds.end(), o.apply_best) == kBestKinds.end()) {
    throw bad_argument(fmt::format("--apply-best {}: unknown kind", o.apply_best),
                       "valid: max_throughput, min_energy, min_edp, min_energy_within_slowdown, "
                       "knee");
  }
  if (o.per_gpu && o.apply_best.empty()) {
    throw bad_argument("--per-gpu chooses which best point --apply-best applies: give --apply-best",
                       "e.g. --apply-best min_energy --per-gpu");
  }
}

// --out DIR, created now (exit 2 when it cannot be); nullopt without --out.
std::optional<fs::path> make_out_dir(Context& ctx, const std::string& out) {
  if (out.empty()) return std::nullopt;
  fs::path dir(out);
  ctx.effect("create --out DIR");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw bad_argument(fmt::format("--out {}: cannot create the directory ({})", out,
                                   ec ? ec.message() : "not a directory"));
  }
  return dir;
}

int run_sweep(Context& ctx, const SweepOptions& o) {
  check_options(o);
  const auto interval = telemetry::interval_option(o.interval, "--interval");
  const double max_slowdown = parse_slowdown(o.max_slowdown);
  const auto axis = o.sm_clocks.empty() ? sweep::Axis::power_limit : sweep::Axis::sm_clock;
  const auto option = axis == sweep::Axis::sm_clock ? "--sm-clocks" : "--power-limits";
  const auto raw =
      sweep::parse_points(axis == sweep::Axis::sm_clock ? o.sm_clocks : o.power_limits, option);
  (void)ctx.format();  // a bad --format is exit 2 before anything runs
  const auto out_dir = make_out_dir(ctx, o.out);
  // Every point writes: refuse in read-only mode before touching anything. Root writes
  // directly; a user who is not root through a `gpuclk serve` that takes delegated settings.
  const auto writer = settings_writer(ctx, "sweep");

  // The points against every GPU.
  const auto gpus = ctx.selected();
  sweep::Report report;
  report.axis = axis;
  report.max_slowdown = max_slowdown;
  const auto checked = sweep::check_points(axis, raw, gpus, o.snap);
  const auto& values = checked.values;
  report.notes = checked.notes;

  const sweep::Timing timing{
      std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(o.warmup)),
      std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(o.duration)),
      static_cast<unsigned>(o.repeat)};
  auto workload = make_workload(ctx, o, timing);
  report.workload = workload->describe();
  report.data = workload->data();
  report.repeat = static_cast<unsigned>(o.repeat);
  report.unit = workload->unit();

  const auto before = settings_before(ctx, gpus);
  // Signals set a flag the sweep checks between and within points (blocking waits end at once);
  // the GPUs are restored before gpuclk exits (128 + signal).
  util::StopFlag signals(false);
  sweep::SweepOptions run_options;
  run_options.axis = axis;
  run_options.values = values;
  run_options.concurrent = o.concurrent;
  run_options.fail_fast = o.fail_fast;
  run_options.baseline = !o.no_baseline;
  run_options.sample_interval = std::chrono::duration_cast<std::chrono::milliseconds>(interval);
  const bool show_progress = isatty(STDERR_FILENO) == 1;
  std::set<std::string> written;  // UUIDs
  sweep::SweepRun run;
  try {
    run = sweep::run_sweep(
        gpus, *workload,
        [&](const std::vector<gpu::Device*>& group, double value) {
          apply_requests(
              *writer, fmt::format("sweep {} {}", value, sweep::unit_of(axis)), group,
              [&](gpu::Device&) { return point_request(axis, value); }, &written);
        },
        [&](const std::vector<gpu::Device*>& group) {
          restore_settings(*writer, group, axis, before, written);
        },
        run_options, ctx.clock(), [] { return util::StopFlag::raised(); },
        show_progress ? std::function<void(const sweep::ProgressInfo&)>(print_progress)
                      : std::function<void(const sweep::ProgressInfo&)>{});
  } catch (const Error&) {
    // A signal that reached a transaction rolls it back and fails it: that is an interruption
    // (the group was restored on the way out), not an error.
    if (!util::StopFlag::raised()) throw;
    run.interrupted = true;
  }
  report.points = run.points;
  report.interrupted = run.interrupted;
  report.failed_fast = run.failed_fast;
  report.restored = true;
  sweep::find_best(report);
  sweep::add_held_below_notes(report);

  // --apply-best: the chosen point, journaled like any setting (undo with gpuclk restore); with
  // --per-gpu each GPU's own point.
  if (!o.apply_best.empty() && !run.interrupted) {
    std::vector<unsigned> indexes;
    indexes.reserve(gpus.size());
    for (auto* g : gpus) indexes.push_back(g->index());
    const auto choice = sweep::choose_best(report, o.apply_best, o.per_gpu, indexes);
    std::vector<gpu::Device*> targets;
    for (auto* g : gpus)
      if (choice.value_of.contains(g->index())) targets.push_back(g);
    if (targets.empty()) {
      report.notes.push_back(
          fmt::format("--apply-best {}: no such point was found; nothing applied", o.apply_best));
    } else {
      apply_requests(
          *writer, fmt::format("sweep --apply-best {}", o.apply_best), targets,
          [&](gpu::Device& g) { return point_request(axis, choice.value_of.at(g.index())); });
      report.notes.push_back(fmt::format(
          "applied {}{}: {}; `gpuclk restore` undoes it{}", o.apply_best,
          choice.per_gpu ? " per GPU" : "", choice.applied,
          choice.missing.empty()
              ? ""
              : fmt::format(" (no such point on GPU {}: left as it was)", choice.missing)));
    }
  }

  int rc = print_report(ctx, report, out_dir);
  if (run.interrupted) {
    std::cerr << "gpuclk: sweep interrupted by " << strsignal(util::StopFlag::signal())
              << "; the GPUs have their settings from before the sweep again\n";
    return 128 + util::StopFlag::signal();
  }
  bool failed = false;
  for (const auto& p : report.points) failed = failed || !p.error.empty();
  if (failed) {
    std::cerr << "gpuclk: the workload failed at some points (see the Error column)"
              << (run.failed_fast ? "; --fail-fast stopped the sweep" : "") << '\n';
    return rc != 0 ? rc : 255;
  }
  return rc;
}

}  // namespace

void add_sweep_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<SweepOptions>();
  auto* sub = app.add_subcommand(
      "sweep",
      "Throughput, power and energy against the SM clock lock or the power limit, with the best "
      "operating points and plots (each point journaled; the settings are restored at the end)");
  o->sm_clocks_option =
      sub->add_option("--sm-clocks", o->sm_clocks, "A:B:STEP or a list, MHz (e.g. 810:1980:90)");
  o->power_limits_option =
      sub->add_option("--power-limits", o->power_limits, "A:B:STEP or a list, W (e.g. 200:700:50)");
  sub->add_option("--workload", o->workload,
                  "gemm-bf16 | gemm-fp16 | gemm-tf32 | gemm-fp32 | gemm-fp8 | mem-copy | "
                  "mem-triad | fma (the bench; simulated jobs under --sim)");
  o->warmup_option = sub->add_option("--warmup", o->warmup,
                                     "--workload: seconds before each point's window (default 2)");
  o->duration_option = sub->add_option("--duration", o->duration,
                                       "--workload: seconds per measured window (default 5)");
  sub->add_option("--repeat", o->repeat,
                  "runs per point (default 1). -- CMD: the command runs N times back to back in "
                  "the window (rate: N runs / wall time, or the mean of the N --metric rates). "
                  "--workload: N windows of --duration after one warm-up (rate: their median); "
                  "both report the runs and their spread");
  sub->add_option("--max-slowdown", o->max_slowdown,
                  "slowdown allowed for the min-energy point, vs the fastest (default 5%)");
  o->out_option = sub->add_option(
      "--out", o->out, "directory for sweep.json, sweep.csv and the plots (sweep.png, sweep.svg)");
  sub->add_option("--apply-best", o->apply_best,
                  "afterwards lock this best point (journaled): max_throughput, min_energy, "
                  "min_edp, min_energy_within_slowdown, knee");
  sub->add_option("--metric", o->metric,
                  "with -- CMD: regex for the rate the command prints (first group, last match)");
  sub->add_option("--metric-unit", o->metric_unit, "the unit of --metric's rate, per second");
  sub->add_option("--interval", o->interval, "telemetry sampling interval (default 100ms)");
  sub->add_flag("--per-gpu", o->per_gpu,
                "with --apply-best: each GPU its own best point (best_per_gpu), not the node's");
  sub->add_flag("--concurrent", o->concurrent, "all selected GPUs at once (default: one by one)");
  sub->add_flag("--fail-fast", o->fail_fast, "stop at the first point where the work fails");
  sub->add_flag("--snap", o->snap,
                "round clocks to the nearest supported one, clamp limits into range");
  sub->add_flag("--no-baseline", o->no_baseline,
                "skip the point at the settings found before the sweep");
  sub->add_option("command", o->command, "the command and its arguments (after --)")->expected(-1);
  sub->positionals_at_end();
  sub->footer(
      "Usage: gpuclk sweep (--sm-clocks R | --power-limits R)\n"
      "                    (--workload W [--warmup S] [--duration S] | -- CMD ...) [--repeat N]\n"
      "With several GPUs the best points are given for the node (sum per setting) and per GPU.\n"
      "Exit code: 0; 2 bad argument; 4 read-only; 128 + signal when interrupted (settings "
      "restored); 255 when the work failed at a point.");
  sub->callback([&ctx, o] { ctx.run = [&ctx, o] { return run_sweep(ctx, *o); }; });
}

}  // namespace gpuclk::cli
