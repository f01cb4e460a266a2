// The Slurm job a process runs in, and the GPUs Slurm gave that job on this node, from what the
// service can verify — never from the process's environment (SLURM_JOB_GPUS,
// CUDA_VISIBLE_DEVICES are the user's to set):
//   1. the job id from the process's cgroup (/proc/PID/cgroup: slurmstepd puts every step in
//      .../job_ID/step_..., in a hierarchy only root may change);
//   2. `scontrol show job -d --oneliner ID`: the job must be RUNNING and belong to the uid that
//      asks, and its GRES on this node's entry (Nodes=…) gives the GPU indexes (IDX:0-1,3).
// Slurm's GRES indexes are taken as NVML indexes: with gres.conf's AutoDetect=nvml (or File=
// lines in /dev/nvidiaN order) Slurm numbers GPUs in the order NVML does.
#pragma once

#include <sys/types.h>

#include <optional>
#include <set>
#include <string>

namespace gpuclk::serve {

struct JobGpus {
  std::string job;                         // the job id; empty when the process runs in no job
  std::optional<std::set<unsigned>> gpus;  // nullopt: see `problem`
  std::string problem;
};

// The job id in a /proc/PID/cgroup text ("job_42" in a path); nullopt when there is none.
std::optional<std::string> job_of_cgroup(const std::string& cgroup_text);

// The GPUs of job `job` for `uid` on host `host` from scontrol's one-line output.
JobGpus gpus_of_scontrol(const std::string& job, const std::string& output, unsigned uid,
                         const std::string& host);

// True when `host` is in a Slurm hostlist ("node1", "node[1-3,7]", "a1,b[2-4]").
bool hostlist_has(const std::string& hostlist, const std::string& host);

// Both steps for process `pid` (scontrol from the service's PATH, at most 5 s).
JobGpus job_gpus_of(pid_t pid, unsigned uid);

}  // namespace gpuclk::serve
