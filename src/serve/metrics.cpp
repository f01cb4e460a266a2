#include "serve/metrics.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "gpu/clock_reasons.h"
#include "rules/finding.h"
#include "serve/attribution_metrics.h"
#include "serve/exposition.h"
#include "serve/metrics_nvlink.h"
#include "telemetry/field_table.h"

namespace gpuclk::serve {
namespace {

constexpr double kMHz = 1e6;
constexpr const char* kFindingHelp =
    "A finding of the node (gpuclk status) now: its rule, severity and GPU indexes (value 1)";

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

// Each GPU's labels, rendered once per build: gpu, uuid, pci_bus_id, model.
std::vector<Labels> labels_of(const std::vector<GpuFacts>& facts) {
  std::vector<Labels> labels;
  labels.reserve(facts.size());
  for (const auto& fact : facts) {
    labels.push_back({{"gpu", std::to_string(fact.key.index)},
                      {"uuid", fact.key.uuid},
                      {"pci_bus_id", fact.key.bus_id},
                      {"model", fact.name}});
  }
  return labels;
}

// The clock event reasons that hold a GPU back, shown by default: what the alert rules and
// `gpuclk fleet` read (fleet/fleet_rules.cpp's held reasons). gpu_idle, the application clocks'
// setting, sync boost and the display clock only with --metrics-detail gpu.
constexpr std::string_view kThrottleReasons[] = {"sw_power_cap", "hw_slowdown",
                                                 "sw_thermal_slowdown", "hw_thermal_slowdown",
                                                 "hw_power_brake_slowdown"};
bool throttles(std::string_view reason) {
  return std::find(std::begin(kThrottleReasons), std::end(kThrottleReasons), reason) !=
         std::end(kThrottleReasons);
}

// A memory clock lock that is not set: fleet and the alert rules read the SM clock's lock, so by
// default the memory clock's 0 is left out (its series come while a lock is set).
bool unset_memory_lock(const ExtraSeries& s) {
  if (s.name != "gpuclk_gpu_locked_clocks" || s.value != 0) return false;
  for (const auto& [name, value] : s.labels)
    if (name == "domain" && value == "memory") return true;
  return false;
}

// One build of the text: its families, the service it reads, and each GPU's labels. The parts
// below are called GPU by GPU in one order, so the families come in that order.
class Build {
 public:
  Build(Families& f, const Service& service, const MetricsDetail& detail, NvLinkSeries& nvlinks,
        const telemetry::Snapshot& snap)
      : f_(f),
        service_(service),
        detail_(detail),
        nvlinks_(nvlinks),
        node_link_up_(NvLinkSeries::any_link_up(snap)) {
    labels_ = labels_of(service.facts());
  }

  // The GPU's static facts and whether it answers: info, lost, read errors, its Xid events.
  void health(std::size_t i, const telemetry::GpuSnapshot* g) {
    const auto& fact = service_.facts()[i];
    const Labels& gpu = labels_[i];
    f_.gauge("gpuclk_gpu_info", "Static facts of the GPU (value 1)",
             with(with(with(gpu, "driver_version", service_.driver_version()), "compute_capability",
                       fact.compute_capability),
                  "architecture", fact.architecture),
             1.0);
    f_.gauge("gpuclk_gpu_lost", "1 when the GPU fell off the bus or stopped answering", gpu,
             g && g->health.lost ? 1.0 : 0.0);
    if (g && detail_.gpu)
      f_.counter("gpuclk_gpu_read_errors_total",
                 "Failed reads of this GPU's fields (not counting unsupported ones)", gpu,
                 static_cast<double>(g->health.read_errors));
    // Xid events the service received (kept while the GPU is lost: Xid 79 is how it went).
    for (const auto& [xid, n] : service_.xid_counts(i))
      f_.counter("gpuclk_gpu_xid_errors_total",
                 "Xid critical-error events the driver reported since gpuclk serve started",
                 with(gpu, "xid", std::to_string(xid)), static_cast<double>(n));
  }

  // The limits the GPU was made with.
  void limits(std::size_t i) {
    const auto& fact = service_.facts()[i];
    const Labels& gpu = labels_[i];
    f_.gauge("gpuclk_gpu_max_sm_clock_hertz", "Highest SM clock the GPU supports", gpu,
             fact.max_sm_clock, kMHz);
    if (detail_.gpu)
      f_.gauge("gpuclk_gpu_max_memory_clock_hertz", "Highest memory clock the GPU supports", gpu,
               fact.max_memory_clock, kMHz);
    f_.gauge("gpuclk_gpu_memory_total_bytes", "Device memory", gpu, fact.memory_total);
    if (detail_.gpu) {
      f_.gauge("gpuclk_gpu_power_limit_min_watts", "Lowest power limit that may be set", gpu,
               fact.min_power_limit);
      f_.gauge("gpuclk_gpu_power_limit_max_watts", "Highest power limit that may be set", gpu,
               fact.max_power_limit);
    }
    f_.gauge("gpuclk_gpu_default_power_limit_watts", "Power limit at driver load", gpu,
             fact.default_power_limit);
  }

  // The fast tier (every sampling interval): the table's readings, P-state, clock event reasons.
  void fast(std::size_t i, const telemetry::FastSample& s) {
    const Labels& gpu = labels_[i];
    telemetry::for_each_fast_field([&](const auto& field) {
      if (!field.metric.empty() && shown(field))
        f_.gauge(field.metric, field.help, gpu, s.*field.member, field.metric_scale);
    });
    if (s.pstate && detail_.gpu)
      f_.gauge("gpuclk_gpu_performance_state", "P-state: 0 (max performance) .. 15", gpu,
               *s.pstate);
    if (s.clock_reasons) {
      for (const auto& r : gpu::clock_reasons())
        if (detail_.gpu || throttles(r.key))
          f_.gauge("gpuclk_gpu_clock_event_reason",
                   "1 while this clock event (throttle) reason is active, else 0", gpu,
                   Label{"reason", r.key}, s.clock_reasons->has(r.bit) ? 1 : 0);
    }
  }

  // The slow tier (every second): what the driver counts, the NVLinks, GPM activity.
  void slow(std::size_t i, const telemetry::SlowSample& s) {
    const Labels& gpu = labels_[i];
    telemetry::for_each_slow_field([&](const auto& field) {
      if (const auto& v = s.*field.member; v && !field.metric.empty() && shown(field))
        series(field.metric, field.help, field.kind, gpu, field.label_name, field.label_value,
               telemetry::number_of(*v));
    });
    nvlinks_.add(f_, i, gpu, s, node_link_up_, detail_);
    if (s.gpm) {
      for (const auto& engine : telemetry::fields::kGpm) {
        if (const auto& busy = (*s.gpm).*engine.member; busy && shown(engine))
          f_.gauge("gpuclk_gpu_gpm_activity_ratio",
                   "GPM activity over the last second (Hopper and later): fraction busy", gpu,
                   Label{"activity", engine.key}, busy->value());
      }
    }
  }

  // What someone set (from the cached status, refreshed every second).
  void settings(std::size_t i, const gpu::StatusSnapshot& st) {
    const Labels& gpu = labels_[i];
    f_.gauge("gpuclk_gpu_power_limit_watts", "Power limit currently set", gpu, st.power_limit);
    f_.gauge("gpuclk_gpu_application_sm_clock_hertz", "Application (default) SM clock set", gpu,
             st.app_sm_clock, kMHz);
    f_.gauge("gpuclk_gpu_application_memory_clock_hertz", "Application memory clock set", gpu,
             st.app_memory_clock, kMHz);
    if (detail_.gpu)
      f_.gauge("gpuclk_gpu_default_application_sm_clock_hertz",
               "Application SM clock at driver load", gpu, st.default_app_sm_clock, kMHz);
    if (st.persistence_mode)
      f_.gauge("gpuclk_gpu_persistence_mode", "1 when persistence mode is on", gpu,
               *st.persistence_mode ? 1 : 0);
    if (st.pcie_link) {
      f_.gauge("gpuclk_gpu_pcie_link_generation", "Current PCIe link generation", gpu,
               st.pcie_link->generation);
      f_.gauge("gpuclk_gpu_pcie_link_width", "Current PCIe link width (lanes)", gpu,
               st.pcie_link->width);
    }
    if (st.pcie_max) {
      f_.gauge("gpuclk_gpu_pcie_link_max_generation", "Highest PCIe generation of GPU and slot",
               gpu, st.pcie_max->generation);
      f_.gauge("gpuclk_gpu_pcie_link_max_width", "Widest PCIe link of GPU and slot (lanes)", gpu,
               st.pcie_max->width);
    }
    if (detail_.gpu)
      f_.gauge("gpuclk_gpu_slowdown_temperature_celsius",
               "Temperature at which the driver starts thermal slowdown", gpu,
               st.slowdown_temperature);
  }

  // The node's findings that concern this GPU, by severity.
  void gpu_findings(std::size_t i, const NodeState& state) {
    const auto index = service_.facts()[i].key.index;
    std::map<std::string, int> by_severity{{"critical", 0}, {"warning", 0}, {"info", 0}};
    for (const auto& finding : state.findings)
      for (auto gpu : finding.gpus)
        if (gpu == index) ++by_severity[std::string(rules::to_string(finding.severity))];
    for (const auto& [severity, n] : by_severity)
      f_.gauge("gpuclk_gpu_findings",
               "Findings of the rules engine (gpuclk status) that concern this GPU, by severity",
               labels_[i], Label{"severity", severity}, n);
  }

  // The node's findings: by severity, and one series each.
  void node_findings(const NodeState& state) {
    std::map<std::string, int> by_severity{{"critical", 0}, {"warning", 0}, {"info", 0}};
    for (const auto& finding : state.findings)
      ++by_severity[std::string(rules::to_string(finding.severity))];
    for (const auto& [severity, n] : by_severity)
      f_.gauge("gpuclk_findings", "Findings of the node (gpuclk status), by severity",
               {{"severity", severity}}, n);
    // One series per finding, so a Prometheus (and `gpuclk fleet`) knows which rule fired where.
    // Two findings with the same labels are one series (a scrape with duplicates is refused).
    std::set<std::tuple<std::string, std::string, std::string>> seen;
    for (const auto& finding : state.findings) {
      std::string gpus;
      for (auto index : finding.gpus) {
        if (!gpus.empty()) gpus += ',';
        gpus += std::to_string(index);
      }
      std::string severity(rules::to_string(finding.severity));
      if (!seen.emplace(finding.rule, severity, gpus).second) continue;
      f_.gauge("gpuclk_finding", kFindingHelp,
               {{"rule", finding.rule}, {"severity", severity}, {"gpus", gpus}}, 1.0);
    }
  }

  // The sampler's own health and the state's age.
  void sampler() {
    const auto timing = service_.sampler().timing();
    f_.counter("gpuclk_sampler_ticks_total", "Sampling ticks completed", {},
               static_cast<double>(timing.ticks));
    f_.counter("gpuclk_sampler_missed_ticks_total", "Sampling ticks skipped because one ran late",
               {}, static_cast<double>(timing.missed_ticks));
    f_.gauge("gpuclk_sampler_lateness_p50_seconds",
             "Median of sample time minus scheduled time over the last 4096 ticks", {},
             seconds(timing.lateness_p50));
    f_.gauge("gpuclk_sampler_lateness_p99_seconds",
             "99th percentile of sample time minus scheduled time over the last 4096 ticks", {},
             seconds(timing.lateness_p99));
    f_.gauge("gpuclk_sampler_interval_seconds", "The sampler's fast interval", {},
             seconds(service_.options().interval));
    f_.gauge("gpuclk_state_age_seconds", "Seconds since the cached node state was refreshed", {},
             service_.state_age_seconds());
  }

  // The series the node's parts add (governor, profile keeper, delegation, journal locks), then
  // the attribution's.
  void sources(const telemetry::Snapshot& snap) {
    for (const auto& source : service_.series()) {
      for (const auto& s : source()) {
        if (!detail_.gpu && unset_memory_lock(s)) continue;
        Labels labels = s.gpu && *s.gpu < labels_.size() ? labels_[*s.gpu] : Labels{};
        for (const auto& [name, value] : s.labels) labels.add(name, value);
        if (s.counter)
          f_.counter(s.name, s.help, labels, s.value);
        else
          f_.gauge(s.name, s.help, labels, s.value);
      }
    }
    // Each GPU's energy books only with --metrics-detail attribution; each job's and pod's
    // series per GPU always (fleet --job reads them; they exist only while a job runs).
    if (const attribution::Attribution* a = service_.attribution())
      add_attribution_series(f_, a->view(), labels_, snap.time, detail_.attribution);
  }

 private:
  // Whether a row of field_table.h is shown: by default, or with --metrics-detail gpu.
  template <class Row>
  bool shown(const Row& row) const {
    return detail_.gpu || !row.metric_detail;
  }

  // A gauge or counter, with one more label when `label_name` is not empty.
  void series(std::string_view name, std::string_view help, telemetry::MetricKind kind,
              const Labels& labels, std::string_view label_name, std::string_view label_value,
              double v) {
    const bool counter = kind == telemetry::MetricKind::counter;
    if (label_name.empty()) {
      if (counter)
        f_.counter(name, help, labels, v);
      else
        f_.gauge(name, help, labels, v);
    } else if (counter) {
      f_.counter(name, help, labels, Label{label_name, label_value}, v);
    } else {
      f_.gauge(name, help, labels, Label{label_name, label_value}, v);
    }
  }

  Families& f_;
  const Service& service_;
  const MetricsDetail& detail_;
  NvLinkSeries& nvlinks_;
  const bool node_link_up_;
  std::vector<Labels> labels_;
};

std::string metrics_text(Families& f, const Service& service, const telemetry::Snapshot& snap,
                         const std::shared_ptr<const NodeState>& state, const MetricsDetail& detail,
                         NvLinkSeries& nvlinks) {
  f.clear();
  Build build(f, service, detail, nvlinks, snap);
  for (std::size_t i = 0; i < service.facts().size(); ++i) {
    const telemetry::GpuSnapshot* g = i < snap.gpus.size() ? &snap.gpus[i] : nullptr;
    build.health(i, g);
    build.limits(i);
    if (g && g->fast && !g->health.lost) build.fast(i, *g->fast);
    if (g && g->slow && !g->health.lost) build.slow(i, *g->slow);
    if (state && i < state->status.size() && state->status[i].unavailable_code == 0)
      build.settings(i, state->status[i]);
    if (state && detail.gpu) build.gpu_findings(i, *state);
  }
  if (state) build.node_findings(*state);
  build.sampler();
  build.sources(snap);
  return f.take();
}

}  // namespace

MetricsText::MetricsText(const Service& service, MetricsOptions options)
    : service_(service),
      options_(std::move(options)),
      hostname_(options_.compat == MetricsCompat::none ? std::string() : dcgm_hostname()) {}

std::shared_ptr<const std::string> MetricsText::get() {
  auto snap = service_.sampler().snapshot();
  auto state = service_.state();
  std::lock_guard lock(mutex_);
  // A scraper that comes while another's build runs waits for it and takes the same text.
  if (text_ && snap.tick == tick_ && state == state_) return text_;
  auto text = metrics_text(families_, service_, snap, state, options_.detail, nvlinks_);
  if (options_.compat != MetricsCompat::none) {
    // The owners' hook: none known yet unless the caller passed a source.
    const auto owners = options_.owners ? options_.owners() : std::vector<CompatOwner>{};
    append_dcgm_compat(text, options_.compat, service_, snap, state.get(), hostname_, owners);
  }
  text_ = std::make_shared<const std::string>(std::move(text));
  tick_ = snap.tick;
  state_ = std::move(state);
  ++builds_;
  return text_;
}

std::uint64_t MetricsText::builds() const {
  std::lock_guard lock(mutex_);
  return builds_;
}

bool healthy(const Service& service) {
  return service.state_age_seconds() < 10.0 && service.sampler().running();
}

std::string health_text(const Service& service) {
  Families f;
  f.gauge("gpuclk_serve_healthy", "1 while the sampler runs and the cached state is fresh", {},
          healthy(service) ? 1.0 : 0.0);
  return f.take();
}

}  // namespace gpuclk::serve
