// Each job's NCCL collectives on this node, as the service reads them from the NCCL Inspector's
// files (serve/nccl_jobs.h) and `gpuclk ps` and `gpuclk stat --job` show them: per collective kind
// the operations, bytes and time summed over the job's ranks on the node since the service first
// read them, and over the last window the bus bandwidth and the share of wall time spent in them.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "host/owner.h"
#include "output/value.h"
#include "rules/input.h"
#include "telemetry/nccl_communicator.h"

namespace gpuclk::views {

struct JobCollective {
  // Since first read, Σ over the job's ranks on the node (count, message and bus bytes, s).
  telemetry::nccl::OperationTotals total;
  // Over the window: Σ bus bytes / Σ time of the ranks (B/s), and a rank's time in them as a
  // share of the wall time its records span (0..1); nullopt where the window has none.
  std::optional<double> bus_bandwidth, time_share;
};

struct JobCollectives {
  host::Owner owner;                       // its processes' owner; "process:PID" when none is known
  std::string directory;                   // the dump directory its files are in
  int ranks = 0;                           // ranks on this node
  std::vector<unsigned> gpus;              // their GPUs (NVML indexes), where known
  std::vector<JobCollective> collectives;  // by kind, in telemetry::nccl::Operation order
  // The window's communicators joined with the node: what doctor's rules judge.
  std::vector<rules::CommunicatorWindow> communicators;
};

// JOB, COLLECTIVE, RANKS, COUNT, GiB, TIME s, BUS GB/s, TIME %: a row per job and kind; with
// `only`, the jobs on one of those GPUs (and those whose GPUs are not known).
output::Table collectives_table(const std::vector<JobCollectives>& jobs,
                                const std::set<unsigned>* only = nullptr);

// "NCCL: all-reduce 120 ops, 3.0 GiB, 1.2 s, 290 GB/s bus, 11% of the time; …" for one job;
// "" when it has none.
std::string collectives_line(const JobCollectives& job);

}  // namespace gpuclk::views
