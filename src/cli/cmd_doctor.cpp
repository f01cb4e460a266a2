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
#include <mutex>
#include <thread>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/findings_view.h"
#include "gpu/events.h"
#include "gpu/selection.h"
#include "host/cpu.h"
#include "host/process.h"
#include "rules/process_owners.h"
#include "rules/rule.h"
#include "rules/watch.h"
#include "serve/protocol.h"
#include "telemetry/interval.h"
#include "telemetry/sampler.h"
#include "util/error.h"

namespace gpuclk::cli {
namespace {

using namespace std::chrono_literals;

struct DoctorOptions {
  std::string duration = "30s";
  std::string interval = "100ms";
  std::string rules;    // comma separated; empty = all
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

// "30s", "500ms", "2m", "1.5" (seconds): at least 1 s, at most 1 h.
telemetry::Duration parse_duration(const std::string& text) {
  std::optional<telemetry::Duration> d;
  if (text.size() > 1 && text.back() == 'm' && text[text.size() - 2] != 'm') {
    if (auto minutes = telemetry::parse_interval(text.substr(0, text.size() - 1) + "s"))
      d = std::chrono::duration_cast<telemetry::Duration>(*minutes * 60);
  } else {
    d = telemetry::parse_interval(text);
  }
  if (!d || *d < 1s || *d > std::chrono::hours(1)) {
    throw bad_argument(fmt::format("bad duration --duration {}", text),
                       "give a duration from 1 s to 1 h, e.g. 30s, 2m or 90 (seconds)");
  }
  return *d;
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

// The window watched from now on, through the command's own sampler, with Xid and ECC events.
rules::Input watch(Context& ctx, const std::vector<gpu::Device*>& devices,
                   telemetry::Duration duration, telemetry::Duration interval) {
  Countdown countdown(devices.size());
  return rules::watch(devices, ctx.clock(), duration, interval,
                      [&](double left) { countdown.show(left); });
}

// The window through gpuclk serve: the last `duration` of the service's history, so a look back
// costs no waiting (the service has been sampling all along). Up to 10 min at the service's
// interval with the slow tier (energy, violation, ECC and replay counters); longer, the 1 s
// history of the fast fields only. A service that has run for less than `duration` is waited
// for. Settings, ECC counts and processes are read once, as when watching. The Xid and ECC events
// are the ones the service received over the window (it waits on them all along, as watching
// does). nullopt: no service answers, or --direct.
struct LookBack {
  rules::Input input;
  double interval_seconds = 0;
  bool slow_tier = true;
  bool events_kept = true;  // false: a service that keeps no events (an older gpuclk serve)
};

std::optional<LookBack> look_back(Context& ctx, telemetry::Duration duration,
                                  const std::vector<gpu::Device*>& devices) {
  const auto hello = ctx.service_hello();
  if (!hello) return std::nullopt;
  LookBack out;
  out.interval_seconds = hello->value("interval_seconds", 0.1);
  const double history_seconds = hello->value("history_seconds", 3600.0);
  const double want = std::chrono::duration<double>(duration).count();
  out.slow_tier = want <= 600;
  if (!out.slow_tier && want > history_seconds) {
    throw bad_argument(
        fmt::format("--duration {:.0f} s is longer than gpuclk serve's history ({:.0f} s)", want,
                    history_seconds),
        "give a shorter --duration, or --direct to watch from now on");
  }
  const nlohmann::json request{
      {"request", "history"}, {"seconds", want}, {"resolution", out.slow_tier ? "interval" : "1s"}};
  auto reply = ctx.ask_service(request);
  if (!reply) return std::nullopt;
  // How far back the history reaches: a service started a moment ago is waited for.
  const auto covered = [](const nlohmann::json& r) {
    double oldest = 0;
    for (const auto& g : r.at("gpus")) {
      const auto& samples = g.at("samples");
      if (!samples.empty()) oldest = std::min(oldest, samples.front().value("t", 0.0));
    }
    return -oldest;
  };
  const double missing = want - covered(*reply) - 2 * out.interval_seconds;
  if (missing > 0) {
    Countdown countdown(devices.size());
    // `missing` is in the GPUs' time base: as wall time (shorter under GPUCLK_SIM_SPEED).
    const auto ahead =
        std::chrono::duration_cast<telemetry::Duration>(std::chrono::duration<double>(missing));
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           ctx.clock().wall_time_until(ctx.clock().now() + ahead).value_or(ahead));
    while (std::chrono::steady_clock::now() < until) {
      countdown.show(
          std::chrono::duration<double>(until - std::chrono::steady_clock::now()).count());
      std::this_thread::sleep_for(100ms);
    }
    reply = ctx.ask_service(request);
    if (!reply) return std::nullopt;
  }
  const auto now = ctx.clock().now();
  out.input.from = now - duration;
  out.input.to = now;
  const auto& gpus = reply->at("gpus");
  for (auto* d : devices) {
    rules::GpuWindow w;
    w.facts = rules::read_facts(*d);
    for (const auto& g : gpus) {
      // By UUID; a GPU lost since (no UUID read now) by its index.
      const bool same = d->uuid().empty() ? g.value("index", ~0u) == d->index()
                                          : g.value("uuid", std::string()) == d->uuid();
      if (!same) continue;
      for (const auto& f : g.at("samples")) w.fast.push_back(serve::fast_sample_from_json(f, now));
      if (auto it = g.find("slow"); it != g.end()) {
        for (const auto& f : *it) w.slow.push_back(serve::slow_sample_from_json(f, now));
      }
      const auto events = g.find("events");
      const auto watched = g.find("events_watched");
      if (events == g.end() || watched == g.end()) {
        out.events_kept = false;
        continue;
      }
      for (const auto& e : *events) {
        auto event = serve::event_from_json(e, d->index(), now);
        if (event.time >= out.input.from) w.events.push_back(event);
      }
      for (const auto& kind : *watched) {
        if (kind.get<std::string>() == gpu::to_string(gpu::EventKind::xid)) w.xid_watched = true;
      }
    }
    w.health.lost = w.facts.unavailable_code != 0;
    out.input.gpus.push_back(std::move(w));
  }
  return out;
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
  if (!o.rules.empty()) {
    std::size_t start = 0;
    while (start <= o.rules.size()) {
      auto end = o.rules.find(',', start);
      if (end == std::string::npos) end = o.rules.size();
      chosen.push_back(&rule_or_throw(o.rules.substr(start, end - start), "--rules"));
      start = end + 1;
    }
  }
  const auto duration = parse_duration(o.duration);
  const auto interval = telemetry::parse_interval(o.interval);
  if (!interval || *interval > duration) {
    throw bad_argument(fmt::format("bad interval --interval {}", o.interval),
                       "give seconds (0.1) or milliseconds (100ms), at least 10ms and at most "
                       "the duration");
  }
  const auto format = ctx.format();
  const auto devices = ctx.selected();

  std::optional<LookBack> through_service = look_back(ctx, duration, devices);
  rules::Input input = through_service ? std::move(through_service->input)
                                       : watch(ctx, devices, duration, *interval);
  add_journal_facts(ctx, input.gpus);
  rules::add_process_owners(input, ctx.devices().api());  // the straggler rule's jobs
  const auto findings = rules::evaluate(input, chosen);

  std::size_t samples = 0;
  for (const auto& w : input.gpus) samples += w.fast.size();
  if (format.kind == output::Format::Kind::json) {
    output::Node root;
    root.add("duration_s", "Duration", output::number(input.seconds(), "s", 1));
    root.add("source", "Source", output::text(through_service ? "serve" : "watched"));
    auto& gpus = root.section("gpus", "GPUs", true);
    for (const auto& w : input.gpus) gpus.add("gpu", "", output::integer(w.facts.index));
    auto& xid_gpus = root.section("xid_watched", "Xid events watched", true);
    for (const auto& w : input.gpus) {
      if (w.xid_watched) xid_gpus.add("gpu", "", output::integer(w.facts.index));
    }
    root.add("samples", "Samples", output::integer(static_cast<long long>(samples)));
    root.add("worst", "Worst", output::text(std::string(rules::to_string(rules::worst(findings)))));
    root.children.push_back(findings_node(findings));
    ctx.printer()->print_tree(root);
  } else if (format.kind == output::Format::Kind::csv) {
    ctx.printer()->print_table(findings_table(findings));
  } else {
    if (through_service) {
      std::cout << fmt::format(
          "gpuclk doctor: looked back over the last {:.1f} s of gpuclk serve's history of {} GPU{} "
          "({} samples{})",
          input.seconds(), devices.size(), devices.size() == 1 ? "" : "s", samples,
          through_service->slow_tier ? "" : "; 1 s resolution, no counters");
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
    const bool events_seen = !through_service || through_service->events_kept;
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
      print_finding_lines(std::cout, findings, true);
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
  sub->add_option("--rules", opts->rules, "only these rules, comma separated (default: all)");
  sub->add_option("--explain", opts->explain,
                  "print what RULE checks, its thresholds and fix, and exit");
  sub->footer(
      "Exit code: 0 nothing above info, 10 warnings, 11 critical; errors as every "
      "command (2 bad argument, ...). docs/doctor.md lists every rule.");
  sub->callback([&ctx, opts] { ctx.run = [&ctx, opts] { return run_doctor(ctx, *opts); }; });
}

}  // namespace gpuclk::cli
