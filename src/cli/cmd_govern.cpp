// `gpuclk govern`: the energy governor (docs/govern.md).
//   govern --policy POLICY [-i GPUS] [--max-slowdown 3%] [--interval 20ms] [--dry-run] [--log F]
//       runs until stopped: each interval, per GPU, the sampler's readings → Governor (classify,
//       policy, hysteresis) → a clock lock written through src/control (journaled); on exit,
//       SIGTERM or SIGINT the clocks go back to what the journal recorded before the first write.
//   govern --evaluate [--scenario FILE]... [--knee default|pessimistic]
//       the policies and the per-phase oracle on simulator scenarios (govern/evaluate.h).
//   govern --report LOG
//       a decision log summarised per GPU and class.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "cli/cmd_control.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "control/restore.h"
#include "govern/decision_log.h"
#include "govern/evaluate.h"
#include "govern/governor.h"
#include "govern/sampler_signals.h"
#include "gpu/gpm.h"
#include "telemetry/interval.h"
#include "telemetry/sampler.h"
#include "util/error.h"

namespace gpuclk::cli {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using govern::Decision;
using govern::Megahertz;

struct GovernOptions {
  std::string policy;
  std::string max_slowdown = "3%";
  std::string interval = "20ms";
  std::string log;
  std::string duration;  // run this long (GPU time), then stop as on SIGTERM
  bool dry_run = false;
  double geopm_phi = 0.5;
  // --evaluate
  bool evaluate = false;
  std::vector<std::string> scenarios;
  std::string knee = "default";
  int iterations = 3;
  // --report
  std::string report;
};

// "3%", "3 %", "0.03": a fraction in [0, 0.5].
double parse_slowdown(const std::string& text) {
  std::string t = text;
  bool percent = false;
  while (!t.empty() && (t.back() == '%' || t.back() == ' ')) {
    percent = percent || t.back() == '%';
    t.pop_back();
  }
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  const double fraction = percent ? v / 100 : v;
  if (t.empty() || end != t.c_str() + t.size() || !(fraction >= 0) || fraction > 0.5) {
    throw bad_argument(fmt::format("bad --max-slowdown '{}'", text),
                       "give a percentage (3%) or a fraction (0.03), at most 50%");
  }
  return fraction;
}

telemetry::Duration parse_duration_option(const std::string& text, const char* option) {
  const auto d = telemetry::parse_interval(text);
  if (!d) {
    throw bad_argument(fmt::format("bad {} '{}'", option, text),
                       "give seconds (0.02) or milliseconds (20ms), at least 10ms");
  }
  return *d;
}

// ---------------------------------------------------------------------------------------------
// --evaluate

std::vector<fs::path> default_scenarios() {
  std::vector<fs::path> dirs{fs::path(Context::executable_dir()) / "scenarios" / "governor",
                             fs::path(GPUCLK_SOURCE_SCENARIOS) / "governor"};
  for (const auto& dir : dirs) {
    std::error_code ec;
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".toml") found.push_back(e.path());
    }
    if (!found.empty()) {
      std::sort(found.begin(), found.end());
      return found;
    }
  }
  throw bad_argument("no governor scenarios found beside gpuclk (scenarios/governor/)",
                     "give --scenario FILE");
}

output::Value pct(double ratio) { return output::number(ratio * 100, "%", 1); }

int run_evaluate(Context& ctx, const GovernOptions& o) {
  govern::EvaluateOptions e;
  for (const auto& s : o.scenarios) {
    if (!fs::exists(s)) {
      throw bad_argument(fmt::format("--scenario {}: no such file", s),
                         "give a simulator scenario .toml file");
    }
    e.scenarios.push_back(s);
  }
  if (e.scenarios.empty()) e.scenarios = default_scenarios();
  e.model_dirs = {fs::path(Context::executable_dir()) / "scenarios",
                  fs::path(GPUCLK_SOURCE_SCENARIOS)};
  if (o.knee == "pessimistic") {
    e.knee = govern::Knee::pessimistic;
  } else if (o.knee != "default") {
    throw bad_argument(fmt::format("bad --knee '{}'", o.knee), "give default or pessimistic");
  }
  if (o.iterations < 1) {
    throw bad_argument(fmt::format("bad --iterations {}", o.iterations), "give 1 or more");
  }
  e.iterations = o.iterations;
  e.interval_s =
      std::chrono::duration<double>(parse_duration_option(o.interval, "--interval")).count();
  e.policy.max_slowdown = parse_slowdown(o.max_slowdown);
  e.policy.geopm_phi = o.geopm_phi;
  if (isatty(STDERR_FILENO) == 1) {
    e.progress = [](const std::string& line) { std::cerr << "\r\033[K" << line << std::flush; };
  }
  const auto results = govern::evaluate(e);
  if (e.progress) std::cerr << "\r\033[K" << std::flush;

  auto printer = ctx.printer();
  if (ctx.format().kind == output::Format::Kind::json) {
    output::Node root;
    auto& list = root.section("scenarios", "", true);
    for (const auto& s : results) {
      auto& node = list.section("scenario", "");
      node.add("scenario", "", output::text(s.scenario));
      auto& rows = node.section("results", "", true);
      for (const auto& r : s.results) {
        auto& row = rows.section("result", "");
        row.add("policy", "", output::text(r.policy));
        row.add("energy_joules", "", output::number(r.energy_joules, "", 3));
        row.add("time_seconds", "", output::number(r.time_seconds, "", 3));
        row.add("energy_saved_ratio", "", output::number(r.energy_saved_ratio, "", 4));
        row.add("slowdown_ratio", "", output::number(r.slowdown_ratio, "", 4));
      }
    }
    printer->print_tree(root);
    return 0;
  }
  output::Table t;
  t.columns = {{"scenario", "Scenario", true},
               {"knee", "Knee", true},
               {"policy", "Policy", true},
               {"energy", "Energy J", false, "J"},
               {"time", "Time s", false, "s"},
               {"saved", "Saved", false, "%"},
               {"slowdown", "Slowdown", false, "%"},
               {"oracle_gap", "Gap to oracle", false, "%"},
               {"idle_saved", "Idle-gap saved", false, "%"},
               {"writes", "Writes"}};
  for (const auto& s : results) {
    const auto* oracle = s.find("oracle");
    for (const auto& r : s.results) {
      t.rows.push_back(
          {output::text(fs::path(s.scenario).stem().string()),
           output::text(std::string(govern::to_string(s.knee))), output::text(r.policy),
           output::number(r.energy_joules, "J", 0), output::number(r.time_seconds, "s", 2),
           pct(r.energy_saved_ratio), pct(r.slowdown_ratio),
           oracle ? pct(oracle->energy_saved_ratio - r.energy_saved_ratio) : output::na(),
           s.results.front().idle_energy_joules > 0 ? pct(r.idle_energy_saved_ratio) : output::na(),
           r.policy == "none" || r.policy == "oracle" ? output::na() : output::integer(r.writes)});
    }
  }
  printer->print_table(t);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// --report

int run_report(Context& ctx, const GovernOptions& o) {
  const auto summary = govern::summarize(o.report);
  output::Table t;
  t.columns = {{"gpu", "GPU"},
               {"class", "Class", true},
               {"seconds", "Time s", false, "s"},
               {"share", "Share", false, "%"},
               {"ceiling_mhz", "Clock held MHz", false, "MHz"},
               {"sm_clock_mhz", "SM clock MHz", false, "MHz"},
               {"power_w", "Power W", false, "W"},
               {"energy_j", "Energy J", false, "J"},
               {"estimated_extra_s", "Est. extra time s", false, "s"},
               {"writes", "Writes"}};
  const auto maybe = [](double v, const char* unit, int precision) {
    return std::isnan(v) ? output::na() : output::number(v, unit, precision);
  };
  for (const auto& c : summary.classes) {
    t.rows.push_back({output::integer(c.gpu),
                      output::text(std::string(govern::to_string(c.phase_class))),
                      output::number(c.seconds, "s", 2), pct(c.share),
                      output::number(c.mean_ceiling_mhz, "MHz", 0),
                      maybe(c.mean_sm_clock_mhz, "MHz", 0), maybe(c.mean_power_w, "W", 1),
                      maybe(c.energy_j, "J", 0), output::number(c.estimated_extra_seconds, "s", 3),
                      output::integer(static_cast<long long>(c.writes))});
  }
  ctx.printer()->print_table(t);
  if (ctx.format().kind == output::Format::Kind::table) {
    std::cout << fmt::format("{} log entries over {:.1f} s, {} clock writes\n", summary.entries,
                             summary.seconds, summary.writes);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// The governor on GPUs

// Refuses to start when a GPU it would govern has clocks locked by another command that the
// journal still lists: the governor would overwrite them (and its restore would undo them).
void refuse_held_clocks(const control::Journal& journal, const std::vector<gpu::Device*>& devices) {
  for (const auto* d : devices) {
    const auto* entry = journal.find(d->uuid());
    if (!entry || !entry->applied.locked_gpu_clocks || !entry->applied.locked_gpu_clocks->locked) {
      continue;
    }
    std::string who = "an earlier gpuclk command";
    for (auto it = journal.history.rbegin(); it != journal.history.rend(); ++it) {
      if (it->uuid == d->uuid() &&
          it->setting == control::key_of(control::Setting::locked_gpu_clocks)) {
        who = fmt::format("`gpuclk {}` (pid {}, {})", it->command, it->pid, it->time);
        break;
      }
    }
    throw Error(
        ExitCode::other,
        fmt::format("GPU {} has its clocks locked ({}) by {}; govern would overwrite them",
                    d->index(),
                    control::describe(entry->applied, control::Setting::locked_gpu_clocks), who),
        "stop that governor, or run `gpuclk restore` (or `gpuclk reset --gpu-clocks`) first");
  }
}

govern::ClockLadder ladder_of(const control::GpuFacts& facts) {
  if (!facts.supported_clocks || facts.supported_clocks->empty()) {
    throw Error(
        ExitCode::not_supported,
        fmt::format("GPU {} does not list its supported clocks: nothing to govern", facts.index));
  }
  // The graphics clocks of the highest memory clock (NVML lists it first).
  return govern::ClockLadder(facts.supported_clocks->front().graphics, Megahertz(0));
}

// Consumes a held SIGINT/SIGTERM/SIGHUP/SIGQUIT so the clean stop exits 0 instead of dying of it.
void consume_held_signal() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set, s);
  const timespec zero{0, 0};
  while (sigtimedwait(&set, nullptr, &zero) > 0) {
  }
}

struct GovernedGpu {
  gpu::Device* device = nullptr;
  control::GpuControl* control = nullptr;
  std::unique_ptr<govern::Governor> governor;
  bool gpm = false;
  bool lost = false;
  bool touched = false;  // a lock was written
  std::optional<govern::PhaseClass> last_class;
  std::optional<Decision> last_logged;
};

int run_governor(Context& ctx, const GovernOptions& o) {
  if (o.policy.empty()) {
    throw bad_argument("govern needs --policy",
                       fmt::format("give one of: {} (or --evaluate, --report LOG)",
                                   fmt::join(govern::policy_names(), ", ")));
  }
  govern::PolicyOptions policy_options;
  policy_options.max_slowdown = parse_slowdown(o.max_slowdown);
  policy_options.geopm_phi = o.geopm_phi;
  govern::make_policy(o.policy, policy_options);  // checks the name before anything starts
  const auto interval = parse_duration_option(o.interval, "--interval");
  std::optional<telemetry::Duration> duration;
  if (!o.duration.empty()) duration = parse_duration_option(o.duration, "--duration");
  std::optional<govern::DecisionLog> log;
  if (!o.log.empty()) log.emplace(o.log);

  const auto devices = ctx.selected();
  const bool dry_run = o.dry_run || ctx.read_only();
  if (ctx.read_only() && !o.dry_run) {
    std::cerr << "gpuclk: read-only mode: govern runs as --dry-run (decisions logged, nothing "
                 "written)\n";
  }
  if (!dry_run) {
    if (auto journal = peek_journal(ctx)) refuse_held_clocks(*journal, devices);
  }
  ControlSession session(ctx, "govern " + o.policy, dry_run);
  if (!dry_run) refuse_held_clocks(session.journal(), devices);
  std::optional<control::SignalDeferral> dry_signals;
  if (dry_run) dry_signals.emplace();
  const auto interrupted = [&] {
    return dry_signals ? dry_signals->interrupted() : session.options().interrupted();
  };
  auto controls = session.open(devices);
  control::RunOptions write_options = session.options();
  write_options.settle = {};  // a governor does not wait for the clock to settle
  write_options.after_write = {};

  std::vector<GovernedGpu> gpus;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    GovernedGpu g;
    g.device = devices[i];
    g.control = controls[i].get();
    if (!devices[i]->available()) {
      std::cerr << fmt::format("gpuclk: GPU {} is not available; the others go on\n",
                               devices[i]->index());
      g.lost = true;
      gpus.push_back(std::move(g));
      continue;
    }
    g.gpm = gpu::GpmSampler(*devices[i]).supported();
    g.governor = std::make_unique<govern::Governor>(govern::make_policy(o.policy, policy_options),
                                                    ladder_of(g.control->facts()));
    gpus.push_back(std::move(g));
  }

  telemetry::SamplerOptions so;
  so.fast_interval = interval;
  so.slow_interval = interval;  // GPM every interval, on each GPU's own thread
  so.fields = {telemetry::Field::sm_clock,      telemetry::Field::memory_clock,
               telemetry::Field::power,         telemetry::Field::utilization,
               telemetry::Field::clock_reasons, telemetry::Field::gpm};
  so.fast_capacity = 64;
  so.slow_capacity = 64;
  telemetry::Sampler sampler(telemetry::device_sources(devices, so.fields), ctx.clock(), so);
  sampler.start();
  const auto started = sampler.started_at();
  std::cerr << fmt::format(
      "gpuclk: governing {} GPU(s) with policy {} every {:.0f} ms{}; Ctrl-C or SIGTERM restores "
      "the clocks\n",
      gpus.size(), o.policy, std::chrono::duration<double, std::milli>(interval).count(),
      dry_run ? " (dry run: nothing written)" : "");

  const auto write = [&](GovernedGpu& g, const Decision& d) -> bool {
    control::Settings target;
    target.locked_gpu_clocks = d.clock_lock();
    auto report = control::apply_changes({{g.control, target}}, session.journal(),
                                         session.persist(), write_options);
    if (report.exit == ExitCode::ok) {
      g.touched = true;
      return true;
    }
    const bool lost =
        report.exit == ExitCode::gpu_lost || report.error.find("lost") != std::string::npos;
    std::cerr << fmt::format("gpuclk: GPU {}: writing {} failed: {}\n", g.device->index(), d.text(),
                             report.error);
    if (lost) {
      std::cerr << fmt::format("gpuclk: GPU {} is lost; the others go on\n", g.device->index());
      g.lost = true;
    }
    return false;
  };

  // A GPM reading up to 5 intervals (at least 100 ms) old still describes the work; older, it is
  // missing (→ max clock). The slow thread reads it every interval, but a busy host delays it.
  const telemetry::Duration gpm_max_age =
      std::max<telemetry::Duration>(5 * interval, std::chrono::milliseconds(100));
  std::uint64_t seen = 0;
  std::size_t decisions = 0;
  while (!interrupted()) {
    seen = sampler.wait_for_tick(seen, 1000ms);
    if (interrupted()) break;
    const auto snapshot = sampler.snapshot();
    const auto elapsed = snapshot.time - started;
    std::size_t active = 0;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      auto& g = gpus[i];
      if (g.lost || snapshot.gpus[i].health.lost) {
        if (!g.lost)
          std::cerr << fmt::format("gpuclk: GPU {} is lost; the others go on\n", g.device->index());
        g.lost = true;
        continue;
      }
      ++active;
      const auto signals = govern::signals_from(snapshot.gpus[i], started, gpm_max_age, g.gpm);
      const auto step = g.governor->step(signals);
      ++decisions;
      bool written = false;
      if (step.write && !dry_run) {
        written = write(g, step.decision);
        if (!written) g.governor->write_failed();
      }
      const bool changed = !g.last_class || *g.last_class != step.phase_class || !g.last_logged ||
                           !(*g.last_logged == step.decision);
      if (log && (changed || step.write)) {
        govern::LogEntry entry;
        entry.time = control::utc_now();
        entry.elapsed_s = std::chrono::duration<double>(elapsed).count();
        entry.gpu = g.device->index();
        entry.uuid = g.device->uuid();
        entry.signals = signals;
        entry.phase_class = step.phase_class;
        entry.decision = step.decision;
        entry.written = written || (step.write && dry_run);
        entry.reason = step.proposal.reason;
        log->write(entry);
      }
      g.last_class = step.phase_class;
      g.last_logged = step.decision;
    }
    if (active == 0) break;
    if (duration && elapsed >= *duration) break;
  }
  sampler.stop();

  // The end: one more log line per GPU (so the report knows how long the last state lasted),
  // then every touched GPU goes back to what the journal recorded before the first write.
  if (log) {
    const auto elapsed = std::chrono::duration<double>(sampler.now() - started).count();
    for (auto& g : gpus) {
      if (!g.last_class) continue;
      govern::LogEntry entry;
      entry.time = control::utc_now();
      entry.elapsed_s = elapsed;
      entry.gpu = g.device->index();
      entry.uuid = g.device->uuid();
      entry.phase_class = *g.last_class;
      entry.decision = Decision::release();
      entry.written = g.touched && !g.lost;
      entry.reason = "governor stopped: clocks restored";
      log->write(entry);
    }
  }
  std::uint64_t writes = 0;
  std::vector<control::GpuControl*> present;
  std::vector<std::string> restore_only;
  for (auto& g : gpus) {
    if (g.governor) writes += g.governor->writes();
    if (!g.lost && g.touched) {
      present.push_back(g.control);
      restore_only.push_back(g.device->uuid());
    }
  }
  ExitCode code = ExitCode::ok;
  std::string restore_error;
  if (!dry_run && !present.empty()) {
    control::RunOptions restore_options = write_options;
    restore_options.interrupted = {};  // a second signal must not cut the restore short
    restore_options.command = "govern " + o.policy + " (stop)";
    const auto report = control::restore(present, session.journal(), session.persist(),
                                         restore_options, restore_only);
    if (report.exit != ExitCode::ok) {
      code = report.exit;
      restore_error = report.error;
    }
  }
  consume_held_signal();
  std::size_t lost = 0;
  for (const auto& g : gpus) lost += g.lost ? 1 : 0;
  std::cerr << fmt::format("gpuclk: govern stopped: {} decisions, {} clock writes{}{}\n", decisions,
                           dry_run ? 0 : writes, dry_run ? " (dry run)" : "; clocks restored",
                           lost ? fmt::format("; {} GPU(s) lost", lost) : "");
  if (code != ExitCode::ok) {
    throw Error(code, "restoring the clocks failed: " + restore_error,
                "run `gpuclk restore` (the journal keeps the original settings)");
  }
  if (lost == gpus.size()) {
    throw Error(ExitCode::gpu_lost, "every governed GPU was lost",
                "check the GPUs (nvidia-smi, dmesg); `gpuclk restore` once they are back");
  }
  return 0;
}

int run_govern(Context& ctx, const GovernOptions& o) {
  const int modes = (o.evaluate ? 1 : 0) + (o.report.empty() ? 0 : 1);
  if (modes > 1) throw bad_argument("give --evaluate or --report, not both");
  if (o.evaluate) return run_evaluate(ctx, o);
  if (!o.report.empty()) return run_report(ctx, o);
  if (!o.scenarios.empty()) throw bad_argument("--scenario goes with --evaluate");
  return run_governor(ctx, o);
}

}  // namespace

void add_govern_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<GovernOptions>();
  auto* sub = app.add_subcommand(
      "govern",
      "Energy governor: lowers SM clocks where they buy nothing (journaled, restored on exit); "
      "--evaluate compares the policies on the simulator");
  sub->add_option("--policy", o->policy, "threshold | geopm | phase | bandit");
  sub->add_option("--max-slowdown", o->max_slowdown, "slowdown budget (default 3%)");
  sub->add_option("--interval", o->interval, "decision interval (default 20ms)");
  sub->add_flag("--dry-run", o->dry_run, "decide and log, write nothing");
  sub->add_option("--log", o->log, "append decisions to FILE (JSON Lines)");
  sub->add_option("--duration", o->duration,
                  "stop after this long (e.g. 60s) and restore, as on SIGTERM");
  sub->add_option("--geopm-phi", o->geopm_phi, "geopm policy's bias 0..1 (default 0.5)")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_flag("--evaluate", o->evaluate,
                "run every policy and the per-phase oracle on simulator scenarios");
  sub->add_option("--scenario", o->scenarios,
                  "scenario file for --evaluate (repeatable; default: scenarios/governor/*)");
  sub->add_option("--knee", o->knee, "--evaluate's memory knee: default | pessimistic");
  sub->add_option("--iterations", o->iterations,
                  "--evaluate: passes of a repeating workload (default 3)");
  sub->add_option("--report", o->report, "summarise a decision log written by --log");
  sub->callback([&ctx, o] { ctx.run = [&ctx, o] { return run_govern(ctx, *o); }; });
}

}  // namespace gpuclk::cli
