// What is wrong across the fleet (docs/fleet.md): settings that differ between nodes of one
// model, GPUs throttled most of the range, stragglers, GPUs idle while allocated, lost GPUs,
// nodes not scraped; and every node's own findings (its `gpuclk_finding` series). Pure: a
// Snapshot in, findings out, so the rules are tested without a Prometheus.
#pragma once

#include <string>
#include <vector>

#include "fleet/snapshot.h"
#include "rules/finding.h"

namespace gpuclk::fleet {

struct FleetFinding {
  std::string instance;  // the node (scrape target)
  rules::Finding finding;
};

struct Thresholds {
  double throttled_fraction = 0.5;  // a reason held the GPU back this share of the range
  double straggler_ratio = 0.85;    // median SM clock below this share of its peers' median
  double busy_utilization = 0.5;    // a GPU counts as a busy peer from this mean utilization
  std::size_t straggler_peers = 3;  // busy GPUs of the model needed to call one a straggler
  double idle_utilization = 0.05;   // below this mean utilization while it holds memory: idle
  double allocated_memory_bytes = 1024.0 * 1024 * 1024;
};

// Sorted by severity (critical first), then instance, GPUs, rule.
std::vector<FleetFinding> evaluate(const Snapshot& snapshot, const Thresholds& t = {});

// rules::exit_code over the findings: 0, 10 (a warning), 11 (a critical one), as doctor.
int exit_code(const std::vector<FleetFinding>& findings);

}  // namespace gpuclk::fleet
