#include "serve/metrics.h"

#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "gpu/clock_reasons.h"
#include "rules/finding.h"
#include "serve/attribution_metrics.h"
#include "serve/exposition.h"
#include "telemetry/field_table.h"

namespace gpuclk::serve {
namespace {

constexpr double kMHz = 1e6;
constexpr const char* kFindingHelp =
    "A finding of the node (gpuclk status) now: its rule, severity and GPU indexes (value 1)";

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

std::string metrics_text(Families& f, const Service& service, const telemetry::Snapshot& snap,
                         const std::shared_ptr<const NodeState>& state) {
  f.clear();
  const auto& facts = service.facts();
  std::vector<Labels> gpu_labels;
  gpu_labels.reserve(facts.size());
  for (const auto& fact : facts) {
    gpu_labels.push_back({{"gpu", std::to_string(fact.key.index)},
                          {"uuid", fact.key.uuid},
                          {"pci_bus_id", fact.key.bus_id},
                          {"model", fact.name}});
  }

  for (std::size_t i = 0; i < facts.size(); ++i) {
    const auto& fact = facts[i];
    const Labels& gpu = gpu_labels[i];
    f.gauge("gpuclk_gpu_info", "Static facts of the GPU (value 1)",
            with(with(with(gpu, "driver_version", service.driver_version()), "compute_capability",
                      fact.compute_capability),
                 "architecture", fact.architecture),
            1.0);
    const telemetry::GpuSnapshot* g = i < snap.gpus.size() ? &snap.gpus[i] : nullptr;
    const gpu::StatusSnapshot* st = state && i < state->status.size() ? &state->status[i] : nullptr;
    f.gauge("gpuclk_gpu_lost", "1 when the GPU fell off the bus or stopped answering", gpu,
            g && g->health.lost ? 1.0 : 0.0);
    if (g)
      f.counter("gpuclk_gpu_read_errors_total",
                "Failed reads of this GPU's fields (not counting unsupported ones)", gpu,
                static_cast<double>(g->health.read_errors));
    // Xid events the service received (kept while the GPU is lost: Xid 79 is how it went).
    for (const auto& [xid, n] : service.xid_counts(i))
      f.counter("gpuclk_gpu_xid_errors_total",
                "Xid critical-error events the driver reported since gpuclk serve started",
                with(gpu, "xid", std::to_string(xid)), static_cast<double>(n));

    // Static limits.
    f.gauge("gpuclk_gpu_max_sm_clock_hertz", "Highest SM clock the GPU supports", gpu,
            fact.max_sm_clock, kMHz);
    f.gauge("gpuclk_gpu_max_memory_clock_hertz", "Highest memory clock the GPU supports", gpu,
            fact.max_memory_clock, kMHz);
    f.gauge("gpuclk_gpu_memory_total_bytes", "Device memory", gpu, fact.memory_total);
    f.gauge("gpuclk_gpu_power_limit_min_watts", "Lowest power limit that may be set", gpu,
            fact.min_power_limit);
    f.gauge("gpuclk_gpu_power_limit_max_watts", "Highest power limit that may be set", gpu,
            fact.max_power_limit);
    f.gauge("gpuclk_gpu_default_power_limit_watts", "Power limit at driver load", gpu,
            fact.default_power_limit);

    // Fast tier (every sampling interval).
    if (g && g->fast && !g->health.lost) {
      const auto& s = *g->fast;
      telemetry::for_each_fast_field([&](const auto& field) {
        if (!field.metric.empty())
          f.gauge(field.metric, field.help, gpu, s.*field.member, field.metric_scale);
      });
      if (s.pstate)
        f.gauge("gpuclk_gpu_performance_state", "P-state: 0 (max performance) .. 15", gpu,
                *s.pstate);
      if (s.clock_reasons) {
        for (const auto& r : gpu::clock_reasons())
          f.gauge("gpuclk_gpu_clock_event_reason",
                  "1 while this clock event (throttle) reason is active, else 0", gpu,
                  Label{"reason", r.key}, s.clock_reasons->has(r.bit) ? 1 : 0);
      }
    }

    // Slow tier (every second): what the driver counts.
    if (g && g->slow && !g->health.lost) {
      const auto& s = *g->slow;
      telemetry::for_each_slow_field([&](const auto& field) {
        const auto& v = s.*field.member;
        if (!v) return;
        const double number = telemetry::number_of(*v);
        const bool counter = field.kind == telemetry::MetricKind::counter;
        if (field.label_name.empty()) {
          if (counter)
            f.counter(field.metric, field.help, gpu, number);
          else
            f.gauge(field.metric, field.help, gpu, number);
        } else {
          const Label label{field.label_name, field.label_value};
          if (counter)
            f.counter(field.metric, field.help, gpu, label, number);
          else
            f.gauge(field.metric, field.help, gpu, label, number);
        }
      });
      for (const auto& l : s.nvlinks) {
        const Labels link = with(gpu, "link", std::to_string(l.link));
        if (l.active)
          f.gauge("gpuclk_nvlink_up", "1 while the NVLink is active, 0 while it is down", link,
                  *l.active ? 1 : 0);
        const std::pair<const char*, const std::optional<std::uint64_t>*> errors[] = {
            {"replay", &l.replay}, {"recovery", &l.recovery}, {"crc", &l.crc}, {"ecc", &l.ecc}};
        for (const auto& [type, value] : errors) {
          if (*value)
            f.counter("gpuclk_nvlink_errors_total",
                      "NVLink DL errors since the driver loaded (replay, recovery, CRC flit, "
                      "data ECC)",
                      link, Label{"type", type}, static_cast<double>(**value));
        }
        if (l.tx_bytes)
          f.counter("gpuclk_nvlink_transmit_bytes_total",
                    "NVLink data sent since the driver loaded", link,
                    static_cast<double>(*l.tx_bytes));
        if (l.rx_bytes)
          f.counter("gpuclk_nvlink_receive_bytes_total",
                    "NVLink data received since the driver loaded", link,
                    static_cast<double>(*l.rx_bytes));
      }
      if (s.gpm) {
        for (const auto& engine : telemetry::fields::kGpm) {
          if (const auto& busy = (*s.gpm).*engine.member)
            f.gauge("gpuclk_gpu_gpm_activity_ratio",
                    "GPM activity over the last second (Hopper and later): fraction busy", gpu,
                    Label{"activity", engine.key}, busy->value());
        }
      }
    }

    // Settings: what someone set (from the cached status, refreshed every second).
    if (st && st->unavailable_code == 0) {
      f.gauge("gpuclk_gpu_power_limit_watts", "Power limit currently set", gpu, st->power_limit);
      f.gauge("gpuclk_gpu_application_sm_clock_hertz", "Application (default) SM clock set", gpu,
              st->app_sm_clock, kMHz);
      f.gauge("gpuclk_gpu_application_memory_clock_hertz", "Application memory clock set", gpu,
              st->app_memory_clock, kMHz);
      f.gauge("gpuclk_gpu_default_application_sm_clock_hertz",
              "Application SM clock at driver load", gpu, st->default_app_sm_clock, kMHz);
      if (st->persistence_mode)
        f.gauge("gpuclk_gpu_persistence_mode", "1 when persistence mode is on", gpu,
                *st->persistence_mode ? 1 : 0);
      if (st->pcie_link) {
        f.gauge("gpuclk_gpu_pcie_link_generation", "Current PCIe link generation", gpu,
                st->pcie_link->generation);
        f.gauge("gpuclk_gpu_pcie_link_width", "Current PCIe link width (lanes)", gpu,
                st->pcie_link->width);
      }
      if (st->pcie_max) {
        f.gauge("gpuclk_gpu_pcie_link_max_generation", "Highest PCIe generation of GPU and slot",
                gpu, st->pcie_max->generation);
        f.gauge("gpuclk_gpu_pcie_link_max_width", "Widest PCIe link of GPU and slot (lanes)", gpu,
                st->pcie_max->width);
      }
      f.gauge("gpuclk_gpu_slowdown_temperature_celsius",
              "Temperature at which the driver starts thermal slowdown", gpu,
              st->slowdown_temperature);
    }

    // Findings concerning this GPU.
    if (state) {
      std::map<std::string, int> by_severity{{"critical", 0}, {"warning", 0}, {"info", 0}};
      for (const auto& finding : state->findings)
        for (auto index : finding.gpus)
          if (index == fact.key.index)
            ++by_severity[std::string(rules::to_string(finding.severity))];
      for (const auto& [severity, n] : by_severity)
        f.gauge("gpuclk_gpu_findings",
                "Findings of the rules engine (gpuclk status) that concern this GPU, by severity",
                gpu, Label{"severity", severity}, n);
    }
  }

  // Node level.
  if (state) {
    std::map<std::string, int> by_severity{{"critical", 0}, {"warning", 0}, {"info", 0}};
    for (const auto& finding : state->findings)
      ++by_severity[std::string(rules::to_string(finding.severity))];
    for (const auto& [severity, n] : by_severity)
      f.gauge("gpuclk_findings", "Findings of the node (gpuclk status), by severity",
              {{"severity", severity}}, n);
    // One series per finding, so a Prometheus (and `gpuclk fleet`) knows which rule fired where.
    // Two findings with the same labels are one series (a scrape with duplicates is refused).
    std::set<std::tuple<std::string, std::string, std::string>> seen;
    for (const auto& finding : state->findings) {
      std::string gpus;
      for (auto index : finding.gpus) {
        if (!gpus.empty()) gpus += ',';
        gpus += std::to_string(index);
      }
      std::string severity(rules::to_string(finding.severity));
      if (!seen.emplace(finding.rule, severity, gpus).second) continue;
      f.gauge("gpuclk_finding", kFindingHelp,
              {{"rule", finding.rule}, {"severity", severity}, {"gpus", gpus}}, 1.0);
    }
  }
  const auto timing = service.sampler().timing();
  f.counter("gpuclk_sampler_ticks_total", "Sampling ticks completed", {},
            static_cast<double>(timing.ticks));
  f.counter("gpuclk_sampler_missed_ticks_total", "Sampling ticks skipped because one ran late", {},
            static_cast<double>(timing.missed_ticks));
  f.gauge("gpuclk_sampler_lateness_p50_seconds",
          "Median of sample time minus scheduled time over the last 4096 ticks", {},
          seconds(timing.lateness_p50));
  f.gauge("gpuclk_sampler_lateness_p99_seconds",
          "99th percentile of sample time minus scheduled time over the last 4096 ticks", {},
          seconds(timing.lateness_p99));
  f.gauge("gpuclk_sampler_interval_seconds", "The sampler's fast interval", {},
          seconds(service.options().interval));
  f.gauge("gpuclk_state_age_seconds", "Seconds since the cached node state was refreshed", {},
          service.state_age_seconds());
  for (const auto& source : service.series()) {
    for (const auto& s : source()) {
      Labels labels = s.gpu && *s.gpu < facts.size() ? gpu_labels[*s.gpu] : Labels{};
      for (const auto& [name, value] : s.labels) labels.add(name, value);
      if (s.counter)
        f.counter(s.name, s.help, labels, s.value);
      else
        f.gauge(s.name, s.help, labels, s.value);
    }
  }
  if (const attribution::Attribution* a = service.attribution()) {
    add_attribution_series(f, a->view(), gpu_labels, snap.time);
  }
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
  auto text = metrics_text(families_, service_, snap, state);
  if (options_.compat == MetricsCompat::dcgm_exporter) {
    // The owners' hook: none known yet unless the caller passed a source.
    const auto owners = options_.owners ? options_.owners() : std::vector<CompatOwner>{};
    append_dcgm_compat(text, service_, snap, state.get(), hostname_, owners);
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
