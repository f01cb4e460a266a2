// `gpuclk doctor`: watch every GPU for a while through the sampler, then run the rules engine
// (src/rules) over the window and report each finding with its evidence, cause and fix.
// Exit code: 0 nothing above info, 10 warnings, 11 critical (rules::exit_code); errors keep
// their own codes (2 bad argument, …).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/findings_view.h"
#include "host/cpu.h"
#include "rules/rule.h"
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
                       "give 1s to 1h: 30s, 2m, 500ms is too short");
  }
  return *d;
}

template <class T>
std::optional<T> opt(const gpu::Reading<T>& r) {
  return r ? std::optional<T>(*r) : std::nullopt;
}

// What is read once, after the window: settings, limits, the link (trained up under load),
// lifetime ECC counts, the processes holding each GPU.
rules::GpuFacts read_facts(const gpu::Device& d) {
  rules::GpuFacts f;
  f.index = d.index();
  f.name = d.name();
  f.uuid = d.uuid();
  const auto& id = d.identity();
  f.unavailable_code = id.unavailable_code;
  if (f.unavailable_code != 0) return f;
  f.max_sm_clock = opt(id.max(gpu::ClockDomain::sm));
  f.app_sm_clock = opt(d.app_clock(gpu::ClockDomain::graphics));
  f.app_memory_clock = opt(d.app_clock(gpu::ClockDomain::memory));
  f.default_app_sm_clock = opt(id.default_app_clock[int(gpu::ClockDomain::graphics)]);
  f.default_app_memory_clock = opt(id.default_app_clock[int(gpu::ClockDomain::memory)]);
  f.power_limit = opt(d.power_limit());
  f.default_power_limit = opt(id.default_power_limit);
  f.max_operating_temperature = opt(id.thresholds.gpu_max);
  f.slowdown_temperature = opt(id.thresholds.slowdown);
  f.persistence_mode = opt(d.persistence_mode());
  f.pcie_link = opt(d.pcie_link());
  f.pcie_max = opt(id.pcie_max);
  f.ecc_corrected_aggregate = opt(d.ecc_errors(false, true));
  f.ecc_uncorrected_aggregate = opt(d.ecc_errors(true, true));
  f.remapped_rows = opt(d.remapped_rows());
  f.cpu_affinity = opt(id.cpu_affinity);
  f.numa_node = opt(id.numa_node);
  if (auto processes = d.processes()) {
    f.processes.emplace();
    for (const auto& p : *processes) {
      f.processes->push_back(p.pid);
      if (auto cpus = host::process_cpus(p.pid)) f.process_cpus[p.pid] = std::move(*cpus);
    }
  }
  return f;
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

  telemetry::SamplerOptions sampling;
  sampling.fast_interval = *interval;
  sampling.slow_interval = std::max<telemetry::Duration>(*interval, 1s);
  sampling.fields = telemetry::FieldSet::standard().add(telemetry::Field::pcie_replay);
  sampling.fast_capacity = static_cast<std::size_t>(duration / *interval) + 64;
  sampling.slow_capacity = static_cast<std::size_t>(duration / sampling.slow_interval) + 16;
  telemetry::Sampler sampler(telemetry::device_sources(devices, sampling.fields), ctx.clock(),
                             sampling);
  sampler.start();
  {
    Countdown countdown(devices.size());
    const auto start = sampler.started_at();
    std::uint64_t tick = 0;
    while (sampler.now() - start < duration) {
      countdown.show(std::chrono::duration<double>(duration - (sampler.now() - start)).count());
      tick = sampler.wait_for_tick(tick, 200ms);  // ends within one interval of the duration
    }
  }
  sampler.stop();

  rules::Input input;
  input.from = sampler.started_at();
  input.to = sampler.now();
  for (std::size_t i = 0; i < devices.size(); ++i) {
    rules::GpuWindow w;
    w.facts = read_facts(*devices[i]);
    w.fast = sampler.fast_samples(i, input.from, input.to);
    w.slow = sampler.slow_samples(i, input.from, input.to);
    w.health = sampler.health(i);
    input.gpus.push_back(std::move(w));
  }
  add_journal_facts(ctx, input.gpus);
  const auto findings = rules::evaluate(input, chosen);

  std::size_t samples = 0;
  for (const auto& w : input.gpus) samples += w.fast.size();
  if (format.kind == output::Format::Kind::json) {
    output::Node root;
    root.add("duration_s", "Duration", output::number(input.seconds(), "s", 1));
    auto& gpus = root.section("gpus", "GPUs", true);
    for (const auto& w : input.gpus) gpus.add("gpu", "", output::integer(w.facts.index));
    root.add("samples", "Samples", output::integer(static_cast<long long>(samples)));
    root.add("worst", "Worst", output::text(std::string(rules::to_string(rules::worst(findings)))));
    root.children.push_back(findings_node(findings));
    ctx.printer()->print_tree(root);
  } else if (format.kind == output::Format::Kind::csv) {
    ctx.printer()->print_table(findings_table(findings));
  } else {
    std::cout << fmt::format("gpuclk doctor: watched {} GPU{} for {:.1f} s ({} samples)",
                             devices.size(), devices.size() == 1 ? "" : "s", input.seconds(),
                             samples);
    if (ctx.simulated()) std::cout << " on the simulated node " << ctx.options.sim;
    std::cout << '\n';
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
  sub->add_option("--duration", opts->duration, "how long to watch: 30s (default), 2m, 1h");
  sub->add_option("--interval", opts->interval, "sampling interval (default 100ms)");
  sub->add_option("--rules", opts->rules, "only these rules, comma separated (default: all)");
  sub->add_option("--explain", opts->explain,
                  "print what RULE checks, its thresholds and fix, and exit");
  sub->footer(
      "Exit code: 0 nothing above info, 10 warnings, 11 critical; errors as every "
      "command (2 bad argument, ...). docs/doctor.md lists every rule.");
  sub->callback([&ctx, opts] { ctx.run = [&ctx, opts] { return run_doctor(ctx, *opts); }; });
}

}  // namespace gpuclk::cli
