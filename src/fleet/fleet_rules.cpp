#include "fleet/fleet_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "fleet/job_rules.h"
#include "util/text.h"

namespace gpuclk::fleet {
namespace {

using rules::Evidence;
using rules::Finding;
using rules::Severity;

Evidence number(std::string key, std::string unit, double value, int precision = 0) {
  return {std::move(key), std::move(unit), value, precision, {}};
}
Evidence text(std::string key, std::string value) {
  return {std::move(key), "", 0, 0, std::move(value)};
}

std::string gpu_text(const std::vector<unsigned>& gpus) {
  std::string out = gpus.size() == 1 ? "GPU " : "GPUs ";
  for (std::size_t i = 0; i < gpus.size(); ++i) out += (i ? "," : "") + std::to_string(gpus[i]);
  return out;
}

FleetFinding make(const std::string& instance, std::string rule, Severity severity,
                  std::vector<unsigned> gpus) {
  FleetFinding f;
  f.instance = instance;
  f.finding.rule = std::move(rule);
  f.finding.severity = severity;
  std::sort(gpus.begin(), gpus.end());
  f.finding.gpus = std::move(gpus);
  f.finding.docs = "docs/fleet.md#" + f.finding.rule;
  return f;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A setting as text for comparison ("1980/2619 MHz"), and the command that sets a value.
struct SettingRule {
  const char* name;  // "application clocks"
  std::function<std::optional<std::string>(const GpuState&)> value;
  std::function<std::string(const GpuState&)> fix;  // for a GPU that has the majority value
};

std::vector<SettingRule> setting_rules() {
  return {
      {"application clocks",
       [](const GpuState& g) -> std::optional<std::string> {
         if (!g.app_sm_clock_mhz || !g.app_memory_clock_mhz) return std::nullopt;
         return fmt::format("{:.0f}/{:.0f} MHz", *g.app_sm_clock_mhz, *g.app_memory_clock_mhz);
       },
       [](const GpuState& g) {
         return fmt::format("gpuclk set --app-clocks {:.0f},{:.0f}", *g.app_memory_clock_mhz,
                            *g.app_sm_clock_mhz);
       }},
      {"locked SM clocks", [](const GpuState& g) { return g.sm_clock_lock; },
       [](const GpuState& g) {
         if (*g.sm_clock_lock == "unlocked") return std::string("gpuclk reset --gpu-clocks");
         auto range = *g.sm_clock_lock;
         range = range.substr(0, range.find(' '));
         std::replace(range.begin(), range.end(), '-', ',');
         return "gpuclk set --lock-gpu-clocks " + range;
       }},
      {"power limit",
       [](const GpuState& g) -> std::optional<std::string> {
         if (!g.power_limit_w) return std::nullopt;
         return fmt::format("{:.0f} W", *g.power_limit_w);
       },
       [](const GpuState& g) {
         return fmt::format("gpuclk set --power-limit {:.0f}", *g.power_limit_w);
       }},
      {"persistence mode",
       [](const GpuState& g) -> std::optional<std::string> {
         if (!g.persistence_mode) return std::nullopt;
         return std::string(*g.persistence_mode ? "on" : "off");
       },
       [](const GpuState& g) {
         return std::string("gpuclk set --persistence ") + (*g.persistence_mode ? "on" : "off");
       }},
  };
}

void settings_differ(const Snapshot& snap, const std::set<std::string>& scraped,
                     std::vector<FleetFinding>& out) {
  std::map<std::string, std::vector<const GpuState*>> by_model;
  for (const auto& g : snap.gpus)
    if (!g.lost && scraped.count(g.instance)) by_model[g.model].push_back(&g);
  for (const auto& rule : setting_rules()) {
    for (const auto& [model, gpus] : by_model) {
      std::map<std::string, std::size_t> count;
      std::map<std::string, const GpuState*> example;
      std::set<std::string> nodes;
      for (const auto* g : gpus) {
        if (auto v = rule.value(*g)) {
          ++count[*v];
          example.emplace(*v, g);
          nodes.insert(g->instance);
        }
      }
      if (count.size() < 2 || nodes.size() < 2) continue;
      // The majority: the value most GPUs have, if no other value ties with it.
      std::string majority;
      std::size_t most = 0, total = 0;
      bool tie = false;
      for (const auto& [v, n] : count) {
        total += n;
        if (n > most)
          most = n, majority = v, tie = false;
        else if (n == most)
          tie = true;
      }
      if (tie) continue;
      std::set<std::string> majority_nodes;
      std::map<std::string, std::map<std::string, std::vector<unsigned>>>
          odd;  // node → value → GPUs
      for (const auto* g : gpus) {
        const auto v = rule.value(*g);
        if (!v) continue;
        if (*v == majority)
          majority_nodes.insert(g->instance);
        else
          odd[g->instance][*v].push_back(g->index);
      }
      for (const auto& [instance, values] : odd) {
        for (const auto& [value, indexes] : values) {
          auto f = make(instance, "settings_differ", Severity::warning, indexes);
          f.finding.summary = fmt::format(
              "{}: {} {} on {} differ from the fleet's {} ({} of {} {} GPUs, on {} of {})",
              instance, rule.name, value, gpu_text(f.finding.gpus), majority, most, total, model,
              majority_nodes.size(), text::counted(nodes.size(), "node"));
          f.finding.evidence = {text("value", value), text("majority_value", majority),
                                number("gpus_with_majority", "", static_cast<double>(most)),
                                number("gpus_of_model", "", static_cast<double>(total)),
                                text("model", model)};
          f.finding.cause = fmt::format(
              "the {} of this node were set differently (by hand, a profile, a job's prolog); a "
              "job spread over nodes runs at the pace of the slowest",
              rule.name);
          f.finding.fix = fmt::format(
              "on {}: {} (the fleet's value), or gpuclk apply the site "
              "profile",
              instance, rule.fix(*example.at(majority)));
          out.push_back(std::move(f));
        }
      }
    }
  }
}

// Reasons that hold a GPU back (gpu_idle and the application-clock setting are not throttling:
// settings_differ covers the settings).
struct HeldReason {
  const char* key;
  Severity severity;
  const char* words;
};
constexpr HeldReason kHeldReasons[] = {
    {"sw_power_cap", Severity::info, "the power limit (SW power cap)"},
    {"sw_thermal_slowdown", Severity::warning, "heat (SW thermal slowdown)"},
    {"hw_thermal_slowdown", Severity::warning, "heat (HW thermal slowdown)"},
    {"hw_slowdown", Severity::warning, "HW slowdown (heat or power brake)"},
    {"hw_power_brake_slowdown", Severity::warning, "the power brake (HW power brake slowdown)"},
};

void throttled(const Snapshot& snap, const Thresholds& t, const std::set<std::string>& scraped,
               std::vector<FleetFinding>& out) {
  // One finding per node and reason, naming its GPUs.
  std::map<std::pair<std::string, std::string>, std::vector<const GpuState*>> held;
  for (const auto& g : snap.gpus) {
    if (g.lost || !scraped.count(g.instance)) continue;
    for (const auto& r : kHeldReasons) {
      const auto it = g.reason_fraction.find(r.key);
      if (it != g.reason_fraction.end() && it->second >= t.throttled_fraction)
        held[{g.instance, r.key}].push_back(&g);
    }
  }
  for (const auto& [key, gpus] : held) {
    const std::string& instance = key.first;  // not a structured binding: the lambda uses it
    const std::string& reason = key.second;
    const auto* r = std::find_if(std::begin(kHeldReasons), std::end(kHeldReasons),
                                 [&](const auto& h) { return h.key == reason; });
    std::vector<unsigned> indexes;
    double least = 1, most = 0;
    std::vector<double> clocks;
    for (const auto* g : gpus) {
      indexes.push_back(g->index);
      const double share = g->reason_fraction.at(reason);
      least = std::min(least, share);
      most = std::max(most, share);
      if (g->sm_clock_median_mhz) clocks.push_back(*g->sm_clock_median_mhz);
    }
    auto f = make(instance, "throttled", r->severity, indexes);
    const auto share = least == most ? fmt::format("{:.0f}%", most * 100)
                                     : fmt::format("{:.0f}-{:.0f}%", least * 100, most * 100);
    f.finding.summary = fmt::format("{}: {} held back by {} {} of the last {} s", instance,
                                    gpu_text(f.finding.gpus), r->words, share, snap.range_s);
    f.finding.evidence = {text("reason", reason), number("held_pct_of_range", "%", most * 100),
                          number("range_s", "s", static_cast<double>(snap.range_s))};
    if (!clocks.empty())
      f.finding.evidence.push_back(number("sm_clock_median_mhz", "MHz", median(clocks)));
    if (reason == "sw_power_cap") {
      f.finding.cause =
          "the work needs more power than the limit allows (expected under heavy "
          "load; a lowered limit makes it worse)";
      f.finding.fix =
          "nothing, if the limit is the site's choice; else gpuclk set --power-limit "
          "default on that node";
    } else {
      f.finding.cause =
          "the GPU is too hot or its board brakes it: cooling, airflow, inlet "
          "temperature, or a power supply event";
      f.finding.fix = fmt::format(
          "check the cooling of {} on {}; gpuclk doctor there explains "
          "the reason",
          gpu_text(f.finding.gpus), instance);
    }
    out.push_back(std::move(f));
  }
}

void idle_allocated(const Snapshot& snap, const Thresholds& t, const std::set<std::string>& scraped,
                    std::vector<FleetFinding>& out) {
  std::map<std::string, std::vector<const GpuState*>> idle;  // by node
  for (const auto& g : snap.gpus) {
    if (g.lost || !scraped.count(g.instance) || !g.utilization_avg || !g.memory_used_bytes ||
        *g.memory_used_bytes < t.allocated_memory_bytes || *g.utilization_avg >= t.idle_utilization)
      continue;
    idle[g.instance].push_back(&g);
  }
  for (const auto& [instance, gpus] : idle) {
    std::vector<unsigned> indexes;
    double memory = 0;
    for (const auto* g : gpus) {
      indexes.push_back(g->index);
      memory = std::max(memory, *g->memory_used_bytes);
    }
    auto f = make(instance, "idle_allocated", Severity::warning, indexes);
    f.finding.summary = fmt::format("{}: {} held memory but ran no kernel over the last {} s",
                                    instance, gpu_text(f.finding.gpus), snap.range_s);
    f.finding.evidence = {number("memory_used_gib", "GiB", memory / (1 << 30), 1),
                          number("range_s", "s", static_cast<double>(snap.range_s))};
    f.finding.cause = "a job holds the GPUs and waits (input, a hung rank, an interactive session)";
    f.finding.fix = fmt::format("gpuclk top on {} shows the processes holding them", instance);
    out.push_back(std::move(f));
  }
}

}  // namespace

std::vector<FleetFinding> evaluate(const Snapshot& snap, const Thresholds& t) {
  std::vector<FleetFinding> out;
  std::set<std::string> scraped;
  for (const auto& n : snap.nodes) {
    if (n.up && *n.up == 1) {
      scraped.insert(n.instance);
      continue;
    }
    auto f = make(n.instance, "node_not_scraped", Severity::warning, {});
    f.finding.summary =
        n.up ? fmt::format("{}: Prometheus cannot scrape it (up = 0): its GPUs are not watched",
                           n.instance)
             : fmt::format(
                   "{}: scraped within the last {} s, but no longer a target of "
                   "Prometheus: its GPUs are not watched",
                   n.instance, snap.range_s);
    f.finding.evidence = {text("up", n.up ? fmt::format("{:.0f}", *n.up) : "absent")};
    f.finding.cause = n.up ? "gpuclk serve is down, the node is down, or a firewall or --listen "
                             "address keeps Prometheus out"
                           : "the target left Prometheus's configuration or service discovery";
    f.finding.fix = fmt::format("systemctl status gpuclk-serve on the node; curl http://{}/healthz",
                                n.instance);
    out.push_back(std::move(f));
  }

  std::map<std::string, std::vector<unsigned>> lost;
  for (const auto& g : snap.gpus)
    if (g.lost && scraped.count(g.instance)) lost[g.instance].push_back(g.index);
  for (const auto& [instance, gpus] : lost) {
    auto f = make(instance, "gpu_lost", Severity::critical, gpus);
    f.finding.summary = fmt::format("{}: {} fell off the bus (NVML: GPU is lost)", instance,
                                    gpu_text(f.finding.gpus));
    f.finding.evidence = {number("gpus_lost", "", static_cast<double>(gpus.size()))};
    f.finding.cause = "an Xid 79 (the GPU stopped answering on PCIe): power, heat, a board fault";
    f.finding.fix =
        fmt::format("drain {}; check dmesg for Xid 79, then reset or reseat the GPU", instance);
    out.push_back(std::move(f));
  }

  settings_differ(snap, scraped, out);
  throttled(snap, t, scraped, out);
  job_stragglers(snap, t, scraped, out);
  idle_allocated(snap, t, scraped, out);

  // The nodes' own findings, one per node, rule and severity (a node reports power_capped once
  // per GPU), unless a fleet finding says the same.
  std::map<std::tuple<std::string, std::string, Severity>, std::vector<unsigned>> own;
  for (const auto& n : snap.node_findings) {
    if (!scraped.count(n.instance)) continue;
    auto& gpus = own[{n.instance, n.rule, n.severity}];
    for (auto g : n.gpus)
      if (std::find(gpus.begin(), gpus.end(), g) == gpus.end()) gpus.push_back(g);
  }
  std::set<std::tuple<std::string, std::string, std::vector<unsigned>>> said;
  for (const auto& f : out) said.emplace(f.instance, f.finding.rule, f.finding.gpus);
  for (const auto& [key, gpus] : own) {
    const auto& [instance, rule, severity] = key;
    auto f = make(instance, rule, severity, gpus);
    if (said.count({instance, rule, f.finding.gpus})) continue;
    f.finding.summary =
        fmt::format("{}: {} (the node's own finding{})", instance, rule,
                    gpus.empty() ? std::string() : " on " + gpu_text(f.finding.gpus));
    f.finding.evidence = {text("source", "gpuclk_finding")};
    f.finding.cause = "found by the node's gpuclk serve (gpuclk status there shows it in full)";
    f.finding.fix = fmt::format("gpuclk status on {}; gpuclk doctor --explain {}", instance, rule);
    f.finding.docs = "docs/doctor.md#" + rule;
    out.push_back(std::move(f));
  }

  std::stable_sort(out.begin(), out.end(), [](const FleetFinding& a, const FleetFinding& b) {
    return std::tuple(-static_cast<int>(a.finding.severity), a.instance, a.finding.gpus,
                      a.finding.rule) < std::tuple(-static_cast<int>(b.finding.severity),
                                                   b.instance, b.finding.gpus, b.finding.rule);
  });
  return out;
}

int exit_code(const std::vector<FleetFinding>& findings) {
  std::vector<rules::Finding> plain;
  plain.reserve(findings.size());
  for (const auto& f : findings) plain.push_back(f.finding);
  return rules::exit_code(plain);
}

}  // namespace gpuclk::fleet
