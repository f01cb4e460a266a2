// The fleet as a Prometheus holds it: every node (scrape target, by its `instance` label) and
// every GPU its `gpuclk serve` exports, now and aggregated over a range, plus each node's own
// findings (`gpuclk_finding`). Plain data; fleet_rules.h finds what is wrong with it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
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
  std::optional<double> memory_used_bytes;
  std::optional<bool> persistence_mode;
  // gpuclk's clock lock (from the node's journal): "unlocked", "1410-1755 MHz", "locked" (to a
  // symbolic bound); nullopt when the node does not export it.
  std::optional<std::string> sm_clock_lock;
  bool lost = false;
  // Over the range.
  std::optional<double> sm_clock_median_mhz, power_avg_w, utilization_avg;
  std::optional<double> sm_clock_p5_mhz;  // collected for a job's view only
  // Clock event reason (of kLimitingReasons) → fraction of the range it was active.
  std::map<std::string, double> reason_fraction;
};

// The clock event reasons that hold clocks back, the ones fleet asks for over the range (not
// gpu_idle, nor the settings' applications_clocks_setting: settings_differ covers settings).
inline constexpr std::string_view kLimitingReasons[] = {"sw_power_cap", "sw_thermal_slowdown",
                                                        "hw_thermal_slowdown", "hw_slowdown",
                                                        "hw_power_brake_slowdown"};

// What one job (a Slurm job, a Kubernetes pod) used of one GPU over the range, from the node's
// attribution (`gpuclk_gpu_slurm_job_*`, `gpuclk_gpu_pod_*`; docs/attribution.md).
struct JobUse {
  std::string instance;
  unsigned index = 0;  // the GPU
  std::string job;     // "slurm:1234", "pod:UID": the owner's key, as the node names it
  std::string
      name;  // "Slurm job 1234", "pod ml/train-0" (or "pod UID" before the kubelet named it)
  std::string user;
  double context_s = 0, busy_s = 0;  // GPU-seconds holding a context / running kernels
  std::optional<double> energy_j;
  double busy_share() const { return context_s > 0 ? busy_s / context_s : 0; }
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
  std::vector<JobUse> jobs;  // by instance, GPU, job; GPUs no Slurm job or pod used: none
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

// Asks Prometheus (about a dozen queries, each aggregated by the server to one value per GPU,
// node or job: no query per node, and answers that grow with the GPUs, not with their series)
// for the series of `selector`, aggregating over the last `range_s` seconds. `p5`: the 5th
// percentile of each GPU's SM clock too. Throws what Prometheus::query throws.
Snapshot collect(Prometheus& prometheus, const std::string& selector, long range_s,
                 bool p5 = false);

// The GPUs `job` ran on in the last `range_s` seconds, from the per-GPU job series only: a
// Slurm job id ("1234"), or a pod as NAMESPACE/NAME or its UID (`pod`: true).
std::vector<JobUse> collect_job(Prometheus& prometheus, const std::string& selector, long range_s,
                                const std::string& job, bool pod);

// Every /metrics family fleet asks Prometheus for; `always`: a node running a Slurm job with a
// finding exports it (the clock lock's ends only while locked, the pod series only for pods).
struct SeriesRead {
  std::string_view name;
  bool always = true;
};
std::vector<SeriesRead> series_read();

// `selector` narrowed to these instances (`instance=~"^(a|b)$"`, regex-quoted).
std::string with_instances(const std::string& selector, const std::vector<std::string>& instances);

}  // namespace gpuclk::fleet
