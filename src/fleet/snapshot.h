// The fleet as a Prometheus holds it: every node (scrape target, by its `instance` label) and
// every GPU its `gpuclk serve` exports, now and aggregated over a range, plus each node's own
// findings (`gpuclk_finding`). Plain data; fleet_rules.h finds what is wrong with it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fleet/prometheus.h"
#include "rules/finding.h"

namespace gpuclk::fleet {

struct GpuState {
  std::string instance;
  unsigned index = 0;
  std::string uuid, model;
  // Now (the latest sample Prometheus holds).
  std::optional<double> sm_clock_mhz, max_sm_clock_mhz, power_w, power_limit_w;
  std::optional<double> app_sm_clock_mhz, app_memory_clock_mhz, temperature_c;
  std::optional<double> utilization, memory_used_bytes;
  std::optional<bool> persistence_mode;
  // gpuclk's clock lock (from the node's journal): "unlocked", "1410-1755 MHz", "locked" (to a
  // symbolic bound); nullopt when the node does not export it.
  std::optional<std::string> sm_clock_lock;
  bool lost = false;
  // Over the range.
  std::optional<double> sm_clock_median_mhz, power_avg_w, utilization_avg;
  std::map<std::string, double> reason_fraction;  // clock event reason → fraction of the range
};

struct NodeState {
  std::string instance;
  std::optional<double> up;  // `up` now; nullopt: the target is gone from Prometheus
  bool seen_in_range = false;
  std::optional<double> energy_j;  // increase of the energy counters over the range
  std::size_t gpus = 0;
};

struct NodeFinding {  // one `gpuclk_finding` series
  std::string instance, rule;
  rules::Severity severity = rules::Severity::info;
  std::vector<unsigned> gpus;
};

struct Snapshot {
  std::string prometheus;  // the URL
  std::string selector;
  long range_s = 0;
  std::vector<NodeState> nodes;  // by instance
  std::vector<GpuState> gpus;    // by instance, then index
  std::vector<NodeFinding> node_findings;
};

// One node now, for `fleet --dmon`: its GPUs aggregated by Prometheus (one query per column).
struct NodeLine {
  std::string instance;
  std::optional<double> up;
  std::optional<double> gpus, lost, sm_clock_mhz, power_w, power_limit_w, temperature_max_c;
  std::optional<double> utilization;
  int critical = 0, warning = 0;  // the node's own findings (gpuclk_finding)
};

// Every node of `selector`, by instance. Throws what Prometheus::query throws.
std::vector<NodeLine> collect_nodes(Prometheus& prometheus, const std::string& selector);

// Asks Prometheus (about ten queries) for the series of `selector`, aggregating over the last
// `range_s` seconds. Throws what Prometheus::query throws.
Snapshot collect(Prometheus& prometheus, const std::string& selector, long range_s);

}  // namespace gpuclk::fleet
