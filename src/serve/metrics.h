// The service's Prometheus metrics as the text format 0.0.4: the sampler's snapshot and the
// cached node state turned into series (docs/exporter.md lists them). Node_exporter conventions:
// gpuclk_ prefix, base units in names, per-GPU series gpuclk_gpu_<what>_<unit> labelled gpu,
// uuid, pci_bus_id, model; counters only for what the driver counts. A reading the GPU does not
// support is no series at all. By default at most 40 series per GPU (metrics_detail.h: what
// MetricsOptions::detail adds). With MetricsOptions::compat, dcgm-exporter's names follow them.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "serve/dcgm_compat.h"
#include "serve/exposition.h"
#include "serve/metrics_detail.h"
#include "serve/metrics_nvlink.h"
#include "serve/service.h"

namespace gpuclk::serve {

// What /metrics shows besides gpuclk's own series.
struct MetricsOptions {
  // --metrics-detail: the groups of series beyond the default set.
  MetricsDetail detail;
  // --metrics-compat dcgm-exporter[:SET]: dcgm-exporter's DCGM_FI_* series too (dcgm_compat.h).
  MetricsCompat compat = MetricsCompat::none;
  // The GPUs' owners for those series' pod/namespace/container labels; empty: unknown.
  CompatOwnerSource owners;
};

// The /metrics text, built once per sample: a scrape between two of the sampler's ticks (and
// two refreshes of the node state) gets the text the first one built, and scrapers that come
// together wait for one build. Written straight as text with each GPU's labels rendered once:
// building it through prometheus-cpp's metric families and serializer took 7 ms for 8 simulated
// GPUs (1480 series, 246 KB; docs/results/serve_cost_sim.md).
class MetricsText {
 public:
  explicit MetricsText(const Service& service, MetricsOptions options = {});
  std::shared_ptr<const std::string> get();
  std::uint64_t builds() const;  // how many times get() built the text

 private:
  const Service& service_;
  const MetricsOptions options_;
  const std::string hostname_;  // the compat series' host label, read once
  mutable std::mutex mutex_;
  Families families_;     // kept between builds, with their memory (guarded by mutex_)
  NvLinkSeries nvlinks_;  // which links have series of their own (guarded by mutex_)
  std::shared_ptr<const std::string> text_;
  std::uint64_t tick_ = 0;
  std::shared_ptr<const NodeState> state_;
  std::uint64_t builds_ = 0;
};

// /healthz: one gauge, gpuclk_serve_healthy, 1 while the sampler ticks and the cached state is
// less than 10 s old (healthy()); the answer is 200 then, 503 otherwise, so an httpGet probe fails
// while the sampler is stalled (a hung driver call, a stopped process).
bool healthy(const Service& service);
std::string health_text(const Service& service);

}  // namespace gpuclk::serve
