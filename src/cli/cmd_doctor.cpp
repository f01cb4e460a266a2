// `gpuclk doctor`: watch every GPU for a while through the sampler (or, when gpuclk serve runs,
// look back over its history), then run the rules engine (src/rules) over the window and report
// each finding with its evidence, cause and fix.
// Exit code: 0 nothing above info, 10 warnings, 11 critical (rules::exit_code); errors keep
// their own codes (2 bad argument, …).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/journal_facts.h"
#include "gpu/selection.h"
#include "host/cpu.h"
#include "host/process.h"
#include "rules/process_owners.h"
#include "rules/rule.h"
#include "serve/rules_window.h"
#include "telemetry/interval.h"
#include "telemetry/sampler.h"
#include "util/error.h"
#include "views/findings.h"

namespace gpuclk::cli {
namespace {

using namespace std::chrono_literals;

struct DoctorOptions {
  std::string duration = "30s";
  std::string interval = "100ms";
  std::string rules;  // comma separated; not given = all
  bool rules_given = false;
  std::string explain;  // a rule name
};

std::string rule_names() {
  std::string names;
  for (const auto& r : rules::all_rules())
    names += (names.empty() ? "" : ", ") + std::string(r.name);
  return names;
}

const rules::Rule& rule_or_throw(const std::string& name, const char* option) {
  const auto* r = rules::find_rule(name);
  if (!r) {
    throw bad_argument(fmt::format("unknown rule {} {}", option, name), "rules: " + rule_names());
  }
  return *r;
}

// "gpuclk doctor: watching 4 GPUs, 12 s left" on a terminal, refreshed in place.
class Countdown {
 public:
  explicit Countdown(std::size_t gpus) : gpus_(gpus), tty_(isatty(STDERR_FILENO) != 0) {}
  void show(double seconds_left) {
    if (!tty_) return;
    const auto left = static_cast<long>(std::ceil(std::max(0.0, seconds_left)));
    if (left == shown_) return;
    shown_ = left;
    std::cerr << fmt::format("\rgpuclk doctor: watching {} GPU{}, {} s left ", gpus_,
                             gpus_ == 1 ? "" : "s", left)
              << std::flush;
  }
  ~Countdown() {
    if (tty_ && shown_ >= 0) std::cerr << "\r\033[K" << std::flush;
  }

 private:
  std::size_t gpus_;
  bool tty_;
  long shown_ = -1;
};

output::Table findings_table(const std::vector<rules::Finding>& findings) {
  output::Table t;
  t.columns = {{"rule", "Rule", true},
               {"severity", "Severity", true},
               {"gpus", "GPUs", true},
               {"summary", "Summary", true},
               {"fix", "Fix", true}};
  for (const auto& f : findings) {
    std::string gpus;
    for (auto g : f.gpus) gpus += (gpus.empty() ? "" : ",") + std::to_string(g);
    t.rows.push_back({output::text(f.rule), output::text(std::string(to_string(f.severity))),
                      output::text(gpus), output::text(f.summary), output::text(f.fix)});
  }
  return t;
}

int run_explain(const DoctorOptions& o) {
  const auto& r = rule_or_throw(o.explain, "--explain");
  std::cout << r.name << ": " << r.title << '\n'
            << r.explanation << '\n'
            << "Docs: docs/doctor.md#" << r.name << '\n';
  return 0;
}

int run_doctor(Context& ctx, const DoctorOptions& o) {
  if (!o.explain.empty()) return run_explain(o);
  std::vector<const rules::Rule*> chosen;
  // An empty --rules is no rule named (as an empty -i is no GPU), not every rule.
  if (o.rules_given && o.rules.empty())
    throw bad_argument("--rules '': no rule named",
                       "name rules comma separated, or leave --rules out for all: " + rule_names());
  if (!o.rules.empty()) {
    std::size_t start = 0;
    while (start <= o.rules.size()) {
      auto end = o.rules.find(',', start);
      if (end == std::string::npos) end = o.rules.size();
      chosen.push_back(&rule_or_throw(o.rules.substr(start, end - start), "--rules"));
      start = end + 1;
    }
  }
  // "30s", "2m", "1h", "1.5" (seconds): at least 1 s, at most 1 h.
  const auto duration =
      telemetry::duration_option(o.duration, "--duration", 1, 3600, "30s, 2m, 1h or 90 (seconds)");
  const auto interval = telemetry::interval_option(o.interval, "--interval");
  if (interval > duration) {
    throw bad_argument(fmt::format("bad interval --interval {}", o.interval),
                       "give seconds (0.1) or milliseconds (100ms), at least 10ms and at most "
                       "the duration");
  }
  const auto format = ctx.format();
  const auto devices = ctx.selected();

  // The window: the service's history when one answers (no waiting), else watched from now on.
  serve::RulesWindow window;
  {
    Countdown countdown(devices.size());
    const auto progress = [&countdown](double left) { countdown.show(left); };
    if (const auto* hello = ctx.service_hello()) {
      window = serve::look_back(*ctx.service(), *hello, ctx.clock(), duration, devices, progress);
    } else {
      window = serve::watch_window(devices, ctx.clock(), duration, interval, progress);
    }
  }
  auto& input = window.input;
  add_journal_facts(ctx, input.gpus);
  rules::add_process_owners(input, ctx.devices().api());  // the straggler rule's jobs
  const auto findings = rules::evaluate(input, chosen);

  std::size_t samples = 0;
  for (const auto& w : input.gpus) samples += w.fast.size();
  if (format.kind == output::Format::Kind::json) {
    output::Node root;
    root.add("duration_s", "Duration", output::number(input.seconds(), "s", 1));
    root.add("source", "Source", output::text(window.from_service ? "serve" : "watched"));
    auto& gpus = root.section("gpus", "GPUs", true);
    for (const auto& w : input.gpus) gpus.add("gpu", "", output::integer(w.facts.index));
    auto& xid_gpus = root.section("xid_watched", "Xid events watched", true);
    for (const auto& w : input.gpus) {
      if (w.xid_watched) xid_gpus.add("gpu", "", output::integer(w.facts.index));
    }
    root.add("samples", "Samples", output::integer(static_cast<long long>(samples)));
    root.add("worst", "Worst", output::text(std::string(rules::to_string(rules::worst(findings)))));
    root.children.push_back(views::findings_node(findings));
    ctx.printer()->print_tree(root);
  } else if (format.kind == output::Format::Kind::csv) {
    ctx.printer()->print_table(findings_table(findings));
  } else {
    if (window.from_service) {
      std::cout << fmt::format(
          "gpuclk doctor: looked back over the last {:.1f} s of gpuclk serve's history of {} GPU{} "
          "({} samples{})",
          input.seconds(), devices.size(), devices.size() == 1 ? "" : "s", samples,
          window.slow_tier ? "" : "; 1 s resolution, no counters");
    } else {
      std::cout << fmt::format("gpuclk doctor: watched {} GPU{} for {:.1f} s ({} samples)",
                               devices.size(), devices.size() == 1 ? "" : "s", input.seconds(),
                               samples);
    }
    if (ctx.simulated()) {
      // In short: "misconfigured, time runs 20x" (status says how the speed stays).
      const auto node = ctx.simulated_node();
      std::cout << " on the simulated node " << node.substr(0, node.find(" ("));
    }
    std::cout << '\n';
    const bool events_seen = !window.from_service || window.events_kept;
    if (!events_seen) {
      std::cout << "Xid events: not looked back at (this gpuclk serve does not keep them; "
                   "--direct watches for them from now on)\n";
    }
    std::vector<unsigned> unwatched;
    for (const auto& w : input.gpus) {
      if (events_seen && !w.xid_watched && w.facts.unavailable_code == 0)
        unwatched.push_back(w.facts.index);
    }
    if (!unwatched.empty()) {
      std::string list;
      for (auto g : unwatched) list += (list.empty() ? "" : ",") + std::to_string(g);
      std::cout << fmt::format(
          "Xid events: NVML does not report them for GPU {} (xid_errors "
          "cannot see them there)\n",
          list);
    }
    if (findings.empty()) {
      std::cout << "no findings: nothing held the GPUs back that a rule knows\n";
    } else {
      std::cout << '\n';
      views::print_finding_lines(std::cout, findings, true);
    }
  }
  return rules::exit_code(findings);
}

}  // namespace

void add_doctor_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<DoctorOptions>();
  auto* sub = app.add_subcommand(
      "doctor",
      "Watch every GPU for a while, then report what holds it back: each finding with its "
      "evidence, cause and fix");
  sub->add_option("--duration", opts->duration,
                  "how long to watch: 30s (default), 2m, 1h; with gpuclk serve running, how far "
                  "to look back in its history (--direct: watch instead)");
  sub->add_option("--interval", opts->interval,
                  "sampling interval (default 100ms; through gpuclk serve: the service's)");
  auto* rules =
      sub->add_option("--rules", opts->rules, "only these rules, comma separated (default: all)");
  sub->add_option("--explain", opts->explain,
                  "print what RULE checks, its thresholds and fix, and exit");
  sub->footer(
      "Exit code: 0 nothing above info, 10 warnings, 11 critical; errors as every "
      "command (2 bad argument, ...). docs/doctor.md lists every rule.");
  sub->callback([&ctx, opts, rules] {
    opts->rules_given = rules->count() > 0;
    ctx.run = [&ctx, opts] { return run_doctor(ctx, *opts); };
  });
}

}  // namespace gpuclk::cli
