// The service's Prometheus metrics: a custom Collectable that turns the sampler's snapshot and
// the cached node state into metric families at each scrape (docs/exporter.md lists them).
// Node_exporter conventions: gpuclk_ prefix, base units in names, per-GPU series
// gpuclk_gpu_<what>_<unit> labelled gpu, uuid, pci_bus_id, model; counters only for what the
// driver counts. A reading the GPU does not support is no series at all.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <vector>

#include "serve/service.h"

namespace gpuclk::serve {

class MetricsCollector final : public prometheus::Collectable {
 public:
  explicit MetricsCollector(const Service& service) : service_(service) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const Service& service_;
};

// /healthz: one gauge, gpuclk_serve_healthy, 1 while the sampler ticks and the cached state is
// fresh (the text is what a probe may look at; prometheus-cpp answers 200 either way).
class HealthCollector final : public prometheus::Collectable {
 public:
  explicit HealthCollector(const Service& service) : service_(service) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const Service& service_;
};

}  // namespace gpuclk::serve
