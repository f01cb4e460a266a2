// /metrics's NVLink series. Per GPU, always: links up (gpuclk_gpu_nvlinks_up), links down
// (gpuclk_gpu_nvlinks_down, while any is down), each DL error counter summed over the links
// (gpuclk_gpu_nvlink_errors_total{type}) and the data sent and received
// (gpuclk_gpu_nvlink_{transmit,receive}_bytes_total) — 7 series where an 8-GPU HGX board's 18
// links each had 7 (126). Per link (gpuclk_nvlink_*, field_table.h's rows): every link with
// --metrics-detail nvlink; else only a link that is down while a link of the node is up (a board
// without NVLink bridges has every link down: no fault, as doctor's nvlink_down says), or one
// whose DL error counters rose as doctor's nvlink_errors rule counts them (a replay, recovery or
// CRC error; data ECC faster than its background, rules::Thresholds::nvlink_ecc_per_minute). A
// link once shown keeps its series while the service runs: a counter that stops and comes back
// reads as a reset to rate().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <vector>

#include "serve/exposition.h"
#include "serve/metrics_detail.h"
#include "telemetry/field_table.h"
#include "telemetry/sampler.h"

namespace gpuclk::serve {

class NvLinkSeries {
 public:
  // Whether any GPU of `snapshot` has a link up at its latest slow sample.
  static bool any_link_up(const telemetry::Snapshot& snapshot);

  // GPU `gpu`'s NVLink series from its latest slow sample `s` (nothing without links);
  // `node_link_up`: any_link_up() of the snapshot. Called once per build and GPU, in order.
  void add(Families& f, std::size_t gpu, const Labels& labels, const telemetry::SlowSample& s,
           bool node_link_up, const MetricsDetail& detail);

 private:
  // What is known of a link across builds: its error counters when first seen (replay,
  // recovery, CRC: any growth shows it), the data-ECC count a rate is taken from, and whether it
  // is shown.
  struct Link {
    std::array<std::optional<std::uint64_t>, std::size(telemetry::fields::kNvLink)> first;
    std::optional<std::uint64_t> ecc;
    telemetry::TimePoint ecc_at{};
    bool shown = false;
  };
  bool errors_rose(Link& link, const telemetry::NvLinkSample& l, telemetry::TimePoint t) const;
  void add_gpu(Families& f, const Labels& labels, const telemetry::SlowSample& s,
               const MetricsDetail& detail) const;
  void add_link(Families& f, const Labels& labels, const telemetry::NvLinkSample& l) const;

  std::vector<std::map<unsigned, Link>> gpus_;  // by GPU position, by link number
};

}  // namespace gpuclk::serve
