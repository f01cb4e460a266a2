// The jobs on the node, from the processes on its GPUs: the GPUs whose processes share an owner
// (Input::process_owners: a Slurm job, a pod, a container, a session) run one job, and only they
// are each other's peers. A GPU without a process runs no job.
#pragma once

#include <vector>

#include "host/owner.h"
#include "rules/input.h"

namespace gpuclk::rules {

struct Job {
  host::Owner owner;
  std::vector<unsigned> gpus;  // GPU indexes, ascending
};

// Every owner of a process on a usable GPU, ordered by its first GPU, then by owner key. A pid
// without a known owner is a job of its own (host::OwnerKind::process), so one process on
// several GPUs is still one job. A GPU shared by two jobs is in both.
std::vector<Job> jobs(const Input& input);

}  // namespace gpuclk::rules
