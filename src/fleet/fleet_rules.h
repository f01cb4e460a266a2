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
  std::string job;  // the job a straggler holds back ("slurm:1234", "pod:UID"); else empty
};

struct Thresholds {
  double throttled_fraction = 0.5;  // a reason held the GPU back this share of the range
  // straggler: among the GPUs of one job (job_rules.h), a median SM clock below this share of
  // its peers' median (doctor's straggler_clock), peers busy at least straggler_peer_busy of
  // the time they held a context; or a busy share this far above its peers' (they wait on it).
  double straggler_ratio = 0.90;
  double straggler_peer_busy = 0.30;
  double straggler_busy_delta = 0.20;
  double idle_utilization = 0.05;  // below this mean utilization while it holds memory: idle
  double allocated_memory_bytes = 1024.0 * 1024 * 1024;
};

// Sorted by severity (critical first), then instance, GPUs, rule.
std::vector<FleetFinding> evaluate(const Snapshot& snapshot, const Thresholds& t = {});

// rules::exit_code over the findings: 0, 10 (a warning), 11 (a critical one), as doctor.
int exit_code(const std::vector<FleetFinding>& findings);

}  // namespace gpuclk::fleet
