// `gpuclk govern`: the energy governor (docs/govern.md).
//   govern --policy POLICY [-i GPUS] [--max-slowdown 3%] [--interval 20ms] [--dry-run] [--log F]
//       runs until stopped: each interval, per GPU, the sampler's readings → Governor (classify,
//       policy, hysteresis) → a clock lock written through src/control (journaled); on exit,
//       SIGTERM or SIGINT the clocks go back to what the journal recorded before the first write.
//       A user who is not root writes through `gpuclk serve`'s delegated settings instead.
//   govern --evaluate [--scenario FILE]... [--knee default|pessimistic] [--input DATA]
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
#include <map>
#include <optional>
#include <set>

#include "cli/cmd_control.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/install_paths.h"
#include "control/signals.h"
#include "govern/decision_log.h"
#include "govern/evaluate.h"
#include "govern/evaluate_view.h"
#include "govern/run.h"
#include "telemetry/interval.h"
#include "util/error.h"
#include "util/stop_signal.h"

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
  std::string input;  // --evaluate: every phase's data (empty: the scenarios' own)
  int iterations = 3;
  bool phases = false;  // --phases: energy, time and SM clock per workload phase
  // --report
  std::string report;
};

// ---------------------------------------------------------------------------------------------
// --evaluate

std::vector<fs::path> default_scenarios() {
  std::vector<fs::path> dirs{install::scenarios_dir() / "governor",
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
  throw bad_argument(fmt::format("no governor scenarios found in {}",
                                 (install::scenarios_dir() / "governor").string()),
                     "give --scenario FILE, or install the simulator (the gpuclk-sim package)");
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
  e.model_dirs = {install::scenarios_dir(), fs::path(GPUCLK_SOURCE_SCENARIOS)};
  if (o.knee == "pessimistic") {
    e.knee = govern::Knee::pessimistic;
  } else if (o.knee != "default") {
    throw bad_argument(fmt::format("bad --knee '{}'", o.knee), "give default or pessimistic");
  }
  if (!o.input.empty() && o.input != "zeros" && o.input != "constant" && o.input != "pattern" &&
      o.input != "random") {
    throw bad_argument(fmt::format("bad --input '{}'", o.input),
                       "give zeros, constant, pattern or random");
  }
  e.input = o.input;
  if (o.iterations < 1) {
    throw bad_argument(fmt::format("bad --iterations {}", o.iterations), "give 1 or more");
  }
  e.iterations = o.iterations;
  e.interval_s =
      std::chrono::duration<double>(govern::parse_duration_option(o.interval, "--interval"))
          .count();
  e.policy.max_slowdown = govern::parse_slowdown(o.max_slowdown);
  e.policy.geopm_phi = o.geopm_phi;
  if (isatty(STDERR_FILENO) == 1) {
    e.progress = [](const std::string& line) { std::cerr << "\r\033[K" << line << std::flush; };
  }
  ctx.effect("run the policies on the simulator model");  // seconds of work per scenario
  const auto results = govern::evaluate(e);
  if (e.progress) std::cerr << "\r\033[K" << std::flush;

  auto printer = ctx.printer();
  if (ctx.format().kind == output::Format::Kind::json) {
    printer->print_tree(govern::evaluation_tree(results, o.phases));
    return 0;
  }
  printer->print_table(govern::evaluation_table(results));
  if (!o.phases) return 0;
  if (ctx.format().kind == output::Format::Kind::table) std::cout << '\n';
  printer->print_table(govern::phase_table(results));
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

// Consumes a held stop signal (SIGINT, SIGTERM, SIGHUP…: util::stop_signals()) so the clean stop
// exits 0 instead of dying of it.
void consume_held_signal() {
  const sigset_t set = util::stop_signal_set();
  const timespec zero{0, 0};
  while (sigtimedwait(&set, nullptr, &zero) > 0) {
  }
}

int run_governor(Context& ctx, const GovernOptions& o) {
  if (o.policy.empty()) {
    throw bad_argument("govern needs --policy",
                       fmt::format("give one of: {} (or --evaluate, --report LOG)",
                                   fmt::join(govern::policy_names(), ", ")));
  }
  govern::PolicyOptions policy_options;
  policy_options.max_slowdown = govern::parse_slowdown(o.max_slowdown);
  policy_options.geopm_phi = o.geopm_phi;
  govern::make_policy(o.policy, policy_options);  // checks the name before anything starts
  const auto interval = govern::parse_duration_option(o.interval, "--interval");
  std::optional<telemetry::Duration> duration;
  if (!o.duration.empty()) duration = govern::parse_duration_option(o.duration, "--duration");
  const auto devices = ctx.selected();
  const bool dry_run = o.dry_run || ctx.read_only();
  if (ctx.read_only() && !o.dry_run) {
    std::cerr << "gpuclk: read-only mode: govern runs as --dry-run (decisions logged, nothing "
                 "written)\n";
  }
  if (!dry_run) {
    if (auto journal = peek_journal(ctx)) govern::refuse_held_clocks(*journal, devices);
  }
  // The writes: root's go to the GPUs (the journal's lock held for the whole run: nobody else
  // writes while it governs); a user who is not root sends them to a `gpuclk serve` that takes
  // delegated settings, which checks each against its policy and holders
  // (control/settings_writer.h).
  const std::string command = "govern " + o.policy;
  std::unique_ptr<control::SettingsWriter> writer;
  if (!dry_run) {
    writer = settings_writer(ctx, command, {.hold_journal = true, .settle = false});
    if (const auto* journal = writer->held_journal()) govern::refuse_held_clocks(*journal, devices);
  }
  // Signals are held back from here: the loop asks for them between decisions, then restores.
  control::SignalDeferral signals;
  // The policies read each GPU's facts (its supported clocks) through controls that only read.
  control::ControlSession reader(session_options(ctx, command, true), true);
  auto controls = reader.open(devices);
  std::map<const control::GpuControl*, gpu::Device*> device_of;
  for (std::size_t i = 0; i < devices.size(); ++i) device_of[controls[i].get()] = devices[i];
  // A write that cannot be made (the service refuses it: its policy, another user holding the
  // GPU; the journal cannot be saved) stops the governor: it restores what it set and exits with
  // that error.
  std::optional<Error> refused;

  govern::GovernSetup setup;
  setup.policy = o.policy;
  setup.policy_options = policy_options;
  setup.interval = interval;
  setup.duration = duration;
  setup.dry_run = dry_run;
  setup.log = o.log;
  setup.interrupted = [&] { return refused.has_value() || signals.interrupted(); };
  std::vector<control::GpuControl*> raw;
  raw.reserve(controls.size());
  for (auto& c : controls) raw.push_back(c.get());
  govern::GovernorRun governor(
      devices, raw, ctx.clock(), setup,
      [&](control::GpuControl& gpu, const control::Settings& target) {
        try {
          return govern::GovernWriteResult{writer->apply({{device_of.at(&gpu), target}}, command),
                                           std::nullopt};
        } catch (const Error& e) {
          refused.emplace(e);
          control::ChangeReport report;
          report.exit = e.code();
          report.error = e.what();
          return govern::GovernWriteResult{report, std::nullopt};
        }
      },
      [&](const std::vector<control::GpuControl*>& gpus, const std::vector<std::string>&) {
        // Back to the journal's originals (through the service: its restore of these GPUs).
        std::vector<control::SettingsWriter::Previous> previous;
        previous.reserve(gpus.size());
        for (const auto* g : gpus) previous.push_back({device_of.at(g), false, {}});
        return writer->restore(previous, command + " (stop)");
      });
  struct ConsumeSignal {
    ~ConsumeSignal() { consume_held_signal(); }
  } consume;
  const int rc = governor.run();
  if (refused) throw *refused;
  return rc;
}

int run_govern(Context& ctx, const GovernOptions& o) {
  const int modes = (o.evaluate ? 1 : 0) + (o.report.empty() ? 0 : 1);
  if (modes > 1) throw bad_argument("give --evaluate or --report, not both");
  if (o.evaluate) return run_evaluate(ctx, o);
  if (!o.report.empty()) return run_report(ctx, o);
  if (!o.scenarios.empty()) throw bad_argument("--scenario goes with --evaluate");
  if (o.phases) throw bad_argument("--phases goes with --evaluate");
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
  // The range in the description: CLI11 would print the validator as "FLOAT:FLOAT in [0 - 1]".
  sub->add_option("--geopm-phi", o->geopm_phi,
                  "geopm policy's bias, 0 to 1: below 0.5 saves energy, above favours speed "
                  "(default 0.5)")
      ->type_name("PHI")
      ->check(CLI::Range(0.0, 1.0).description(""));
  sub->add_flag("--evaluate", o->evaluate,
                "run every policy and the per-phase oracle on simulator scenarios");
  sub->add_option("--scenario", o->scenarios,
                  "scenario file for --evaluate (repeatable; default: scenarios/governor/*)");
  sub->add_option("--knee", o->knee, "--evaluate's memory knee: default | pessimistic");
  sub->add_option("--input", o->input,
                  "--evaluate: the data every phase moves, which sets its power: zeros | constant "
                  "| pattern | random (default: each scenario's own, random unless it says)");
  sub->add_option("--iterations", o->iterations,
                  "--evaluate: passes of a repeating workload (default 3)");
  sub->add_flag("--phases", o->phases,
                "--evaluate: also energy, time and SM clock per workload phase and policy");
  sub->add_option("--report", o->report, "summarise a decision log written by --log");
  sub->callback([&ctx, o] { ctx.run = [&ctx, o] { return run_govern(ctx, *o); }; });
}

}  // namespace gpuclk::cli
