// The host's CPUs and NUMA layout (hwloc), for `gpuclk info` and `gpuclk topo`.
#pragma once

#include <string>
#include <vector>

namespace gpuclk::host {

struct NumaNode {
  unsigned os_index = 0;
  std::vector<unsigned> cpus;  // logical CPU (PU) os indexes
};

struct CpuInfo {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", "ARM"; empty if unknown
  std::string model;   // "AMD EPYC 9654 96-Core Processor"
  int family = -1, model_number = -1;
  std::string microarchitecture;  // "Zen 4 (Genoa)"; "unknown (family 6 model 255)" if not in table
  unsigned sockets = 0, cores = 0, threads = 0;
  std::vector<NumaNode> numa_nodes;
  std::string source = "this host (hwloc)";  // where the figures come from
};

// Reads the topology once. Never throws: fields it cannot tell stay empty/zero.
CpuInfo read_cpu_info();

// A simulated node's host: `cpus` logical CPUs split evenly over `numa_nodes` nodes (node k has
// CPUs k*cpus/numa_nodes … (k+1)*cpus/numa_nodes − 1, as the simulated GPUs' CPU affinity);
// vendor, model, sockets and cores unknown. `source` names where it comes from.
CpuInfo simulated_cpu_info(unsigned cpus, unsigned numa_nodes, std::string source);

// Names the microarchitecture of an x86 CPU from its vendor, family and model number.
std::string microarchitecture(const std::string& vendor, int family, int model);

// "0-15,32-47": a compact list of CPU ids.
std::string cpu_list(const std::vector<unsigned>& cpus);

}  // namespace gpuclk::host

namespace gpuclk::host {
// NUMA nodes whose CPUs overlap `cpus` (a GPU's CPU affinity): nvidia-smi's "NUMA Affinity".
std::vector<unsigned> numa_nodes_for(const CpuInfo& info, const std::vector<unsigned>& cpus);
}  // namespace gpuclk::host

#include <optional>

namespace gpuclk::host {
// The CPUs process `pid` may run on (sched_getaffinity); nullopt when it does not exist or cannot
// be read.
std::optional<std::vector<unsigned>> process_cpus(unsigned pid);
}  // namespace gpuclk::host
