// A job across nodes (`gpuclk fleet --job ID`, `--pod NAMESPACE/NAME` or `--pod UID`): its GPUs
// on every node side by side, from the Prometheus that scrapes the nodes' gpuclk serve — per GPU
// its SM clock (median and 5th percentile over the range), power and limit, the clock event
// reasons that held it back and for how long, the energy the node booked to the job and its busy
// share; the job's totals; and its straggler, with the cause (docs/fleet.md#a-job-across-nodes).
// The report and its views; the command prints them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "fleet/fleet_rules.h"
#include "fleet/job_rules.h"
#include "fleet/prometheus.h"
#include "fleet/snapshot.h"
#include "output/value.h"

namespace gpuclk::fleet {

struct JobQuery {
  std::string selector;
  long range_s = 3600;
  std::string job;  // a Slurm job id, or with `pod` NAMESPACE/NAME or a pod UID
  bool pod = false;
};

struct JobReport {
  std::string key, name, user;
  std::vector<JobGpu> gpus;  // point into the snapshot look_up_job filled
  std::size_t nodes = 0;
  double energy_j = 0, gpu_hours = 0;
  std::vector<FleetFinding> findings;   // on its GPUs and nodes; stragglers of this job
  std::vector<std::string> other_keys;  // other pod UIDs of the same name
};

// Asks `prometheus` which GPUs ran the job in the range, then for those nodes' snapshot (into
// `snap`, which the report's GPUs point into) and judges them. A pod name with several UIDs in
// the range (restarted) is the UID that used most. Throws gpuclk::Error (exit 6) when no GPU ran
// it, and what Prometheus::query throws.
JobReport look_up_job(Prometheus& prometheus, const JobQuery& q, Snapshot& snap);

// One row per GPU of the job (table and CSV), and the whole as a tree for JSON.
output::Table job_table(const JobReport& job, long range_s);
output::Node job_tree(const JobReport& job, const Snapshot& snap);
// The table view's line above the table ("NAME (user U): 4 GPUs on 2 nodes over …") and its
// lines under it: the totals, the pod's other UIDs, and why there is no straggler.
std::string job_heading(const JobReport& job, long range_s);
std::string job_totals(const JobReport& job);

}  // namespace gpuclk::fleet
