// A job across nodes: the GPUs a Slurm job or a Kubernetes pod ran on in the range, on every
// node (Snapshot::jobs, from the nodes' attribution), and the straggler among them — the GPU
// that runs clearly slower than the job's others, which they all wait for. Only GPUs of one job
// are each other's peers: a GPU no job used, or used by another job, is never compared with it.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "fleet/fleet_rules.h"
#include "fleet/snapshot.h"

namespace gpuclk::fleet {

// One GPU of a job: what the job used of it, and the GPU's state over the range (null when
// Prometheus holds no other series of it).
struct JobGpu {
  const JobUse* use = nullptr;
  const GpuState* gpu = nullptr;
};

// The GPUs of job `key` ("slurm:1234", "pod:UID") in `snap`, by instance and index.
std::vector<JobGpu> job_gpus(const Snapshot& snap, const std::string& key);

// Every job of `snap` by its key, with its GPUs.
std::map<std::string, std::vector<JobGpu>> jobs_of(const Snapshot& snap);

// The straggler of each job of two GPUs or more (on `scraped` nodes): one whose median SM
// clock over the range is below `straggler_ratio` of its busy peers' (of its model), or whose
// busy share is `straggler_busy_delta` above theirs (the others wait on it). Each finding names
// the job (FleetFinding::job) and the cause: what held that GPU back more than its peers.
void job_stragglers(const Snapshot& snap, const Thresholds& t, const std::set<std::string>& scraped,
                    std::vector<FleetFinding>& out);

}  // namespace gpuclk::fleet
