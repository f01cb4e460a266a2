#include "fleet/snapshot.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "telemetry/field_table.h"
#include "util/parse.h"

namespace gpuclk::fleet {
namespace {

namespace F = telemetry::fields;
using Key = std::pair<std::string, unsigned>;  // instance, GPU index

std::optional<unsigned> gpu_index(const Sample& s) {
  const auto v = parse::try_unsigned(s.label("gpu"), 0, 1u << 20);
  return v ? std::optional<unsigned>(static_cast<unsigned>(*v)) : std::nullopt;
}

std::optional<rules::Severity> severity_of(const std::string& text) {
  if (text == "critical") return rules::Severity::critical;
  if (text == "warning") return rules::Severity::warning;
  if (text == "info") return rules::Severity::info;
  return std::nullopt;
}

std::vector<unsigned> gpu_list(const std::string& text) {
  std::vector<unsigned> out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (auto v = parse::try_unsigned(text.substr(start, end - start), 0, 1u << 20))
      out.push_back(static_cast<unsigned>(*v));
    start = end + 1;
  }
  return out;
}

}  // namespace

Snapshot collect(Prometheus& prometheus, const std::string& selector, long range_s) {
  Snapshot snap;
  snap.prometheus = prometheus.url();
  snap.selector = selector;
  snap.range_s = range_s;
  const auto range = fmt::format("[{}s]", range_s);

  std::map<std::string, NodeState> nodes;
  const auto node = [&](const std::string& instance) -> NodeState& {
    auto& n = nodes[instance];
    n.instance = instance;
    return n;
  };
  for (const auto& s : prometheus.query(series("up", selector)))
    node(s.label("instance")).up = s.value;
  for (const auto& s : prometheus.query("max_over_time(" + series("up", selector) + range + ")"))
    node(s.label("instance")).seen_in_range = true;

  std::map<Key, GpuState> gpus;
  const auto gpu = [&](const Sample& s) -> GpuState* {
    const auto index = gpu_index(s);
    const auto instance = s.label("instance");
    if (!index || instance.empty()) return nullptr;
    auto& g = gpus[{instance, *index}];
    g.instance = instance;
    g.index = *index;
    if (g.uuid.empty()) g.uuid = s.label("uuid");
    if (g.model.empty()) g.model = s.label("model");
    return &g;
  };
  // The latest value of each series, in one query: the readings (telemetry/field_table.h) and
  // the settings' gauges.
  const auto now = prometheus.query(series_matching(
      fmt::format("{}|{}|{}|{}|{}|gpuclk_gpu_(info|lost|max_sm_clock_hertz|power_limit_watts|"
                  "application_sm_clock_hertz|application_memory_clock_hertz|persistence_mode|"
                  "locked_clocks|locked_clock_min_hertz|locked_clock_max_hertz)",
                  F::sm_clock.metric, F::power.metric, F::gpu_temperature.metric,
                  F::gpu_utilization.metric, F::memory_used.metric),
      selector));
  std::map<Key, std::pair<std::optional<double>, std::optional<double>>> lock_range;
  for (const auto& s : now) {
    auto* g = gpu(s);
    if (!g) continue;
    const auto name = s.label("__name__");
    const double v = s.value;
    if (name == "gpuclk_gpu_lost")
      g->lost = v != 0;
    else if (name == F::sm_clock.metric)
      g->sm_clock_mhz = v / F::sm_clock.metric_scale;
    else if (name == "gpuclk_gpu_max_sm_clock_hertz")
      g->max_sm_clock_mhz = v / 1e6;
    else if (name == F::power.metric)
      g->power_w = v;
    else if (name == "gpuclk_gpu_power_limit_watts")
      g->power_limit_w = v;
    else if (name == "gpuclk_gpu_application_sm_clock_hertz")
      g->app_sm_clock_mhz = v / 1e6;
    else if (name == "gpuclk_gpu_application_memory_clock_hertz")
      g->app_memory_clock_mhz = v / 1e6;
    else if (name == "gpuclk_gpu_persistence_mode")
      g->persistence_mode = v != 0;
    else if (name == F::gpu_temperature.metric)
      g->temperature_c = v;
    else if (name == F::gpu_utilization.metric)
      g->utilization = v;
    else if (name == F::memory_used.metric)
      g->memory_used_bytes = v;
    else if (s.label("domain") == "sm") {
      if (name == "gpuclk_gpu_locked_clocks" && v == 0)
        g->sm_clock_lock = "unlocked";
      else if (name == "gpuclk_gpu_locked_clocks" && !g->sm_clock_lock)
        g->sm_clock_lock = "locked";
      else if (name == "gpuclk_gpu_locked_clock_min_hertz")
        lock_range[{g->instance, g->index}].first = v / 1e6;
      else if (name == "gpuclk_gpu_locked_clock_max_hertz")
        lock_range[{g->instance, g->index}].second = v / 1e6;
    }
  }
  for (const auto& [key, r] : lock_range) {
    auto& g = gpus[key];
    if (!r.first || !r.second || g.sm_clock_lock == "unlocked") continue;
    g.sm_clock_lock = *r.first == *r.second ? fmt::format("{:.0f} MHz", *r.first)
                                            : fmt::format("{:.0f}-{:.0f} MHz", *r.first, *r.second);
  }

  // Over the range.
  const auto over = [&](const std::string& function, const std::string& metric) {
    return prometheus.query(function + "(" + series(metric, selector) + range + ")");
  };
  for (const auto& s : over("avg_over_time", "gpuclk_gpu_clock_event_reason"))
    if (auto* g = gpu(s)) g->reason_fraction[s.label("reason")] = s.value;
  for (const auto& s :
       prometheus.query("quantile_over_time(0.5, " +
                        series(std::string(F::sm_clock.metric), selector) + range + ")"))
    if (auto* g = gpu(s)) g->sm_clock_median_mhz = s.value / F::sm_clock.metric_scale;
  for (const auto& s : over("avg_over_time", std::string(F::power.metric)))
    if (auto* g = gpu(s)) g->power_avg_w = s.value;
  for (const auto& s : over("avg_over_time", std::string(F::gpu_utilization.metric)))
    if (auto* g = gpu(s)) g->utilization_avg = s.value;
  for (const auto& s :
       prometheus.query("sum by (instance) (increase(" +
                        series(std::string(F::energy.metric), selector) + range + "))"))
    node(s.label("instance")).energy_j = s.value;

  for (const auto& s : prometheus.query(series("gpuclk_finding", selector))) {
    const auto severity = severity_of(s.label("severity"));
    if (!severity || s.label("rule").empty() || s.value == 0) continue;
    snap.node_findings.push_back(
        {s.label("instance"), s.label("rule"), *severity, gpu_list(s.label("gpus"))});
  }
  std::sort(snap.node_findings.begin(), snap.node_findings.end(), [](const auto& a, const auto& b) {
    return std::tie(a.instance, a.gpus, a.rule) < std::tie(b.instance, b.gpus, b.rule);
  });

  for (auto& [key, g] : gpus) {
    if (g.instance.empty()) continue;
    ++node(g.instance).gpus;
    snap.gpus.push_back(std::move(g));
  }
  for (auto& [instance, n] : nodes)
    if (!instance.empty()) snap.nodes.push_back(std::move(n));
  return snap;
}

std::vector<NodeLine> collect_nodes(Prometheus& prometheus, const std::string& selector) {
  std::map<std::string, NodeLine> nodes;
  const auto line = [&](const Sample& s) -> NodeLine& {
    auto& n = nodes[s.label("instance")];
    n.instance = s.label("instance");
    return n;
  };
  for (const auto& s : prometheus.query(series("up", selector))) line(s).up = s.value;
  const std::pair<std::string, std::optional<double> NodeLine::*> columns[] = {
      {"count by (instance) (gpuclk_gpu_info{})", &NodeLine::gpus},
      {"sum by (instance) (gpuclk_gpu_lost{})", &NodeLine::lost},
      {fmt::format("avg by (instance) ({}{{}}) / {}", F::sm_clock.metric, F::sm_clock.metric_scale),
       &NodeLine::sm_clock_mhz},
      {fmt::format("sum by (instance) ({}{{}})", F::power.metric), &NodeLine::power_w},
      {"sum by (instance) (gpuclk_gpu_power_limit_watts{})", &NodeLine::power_limit_w},
      {fmt::format("max by (instance) ({}{{}})", F::gpu_temperature.metric),
       &NodeLine::temperature_max_c},
      {fmt::format("avg by (instance) ({}{{}})", F::gpu_utilization.metric),
       &NodeLine::utilization},
  };
  for (const auto& [query, member] : columns) {
    std::string q = query;
    const auto braces = q.find("{}");
    q.replace(braces, 2, selector);
    for (const auto& s : prometheus.query(q)) line(s).*member = s.value;
  }
  for (const auto& s : prometheus.query("count by (instance, severity) (" +
                                        series("gpuclk_finding", selector) + ")")) {
    if (s.label("severity") == "critical") line(s).critical = static_cast<int>(s.value);
    if (s.label("severity") == "warning") line(s).warning = static_cast<int>(s.value);
  }
  std::vector<NodeLine> out;
  for (auto& [instance, n] : nodes)
    if (!instance.empty()) out.push_back(std::move(n));
  return out;
}

}  // namespace gpuclk::fleet
