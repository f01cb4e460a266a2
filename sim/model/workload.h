// What a GPU is asked to do: phases given as amounts of work, so a lower clock makes a
// compute-bound phase last longer and a memory-bound one barely.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dtype.h"

namespace gpuclk::sim {

// NVLink (sim/model/nvlink.h): NVML_NVLINK_MAX_LINKS links per GPU; a p2p phase may name a peer
// below kMaxNvLinkPeers (a GPU index).
inline constexpr std::uint32_t kMaxNvLinks = 18;
inline constexpr std::uint32_t kMaxNvLinkPeers = 16;

enum class PhaseKind : std::uint8_t {
  compute,   // `flops` of `dtype`; DRAM traffic flops / intensity (roofline)
  memory,    // `bytes` of DRAM traffic (read + write); flops = bytes × intensity
  transfer,  // `bytes` over PCIe (host → device unless to_host); no kernel runs
  p2p,       // `bytes` sent to GPU `peer` over NVLink (PCIe where no link joins them)
  idle,      // `seconds` with the process's context held and nothing launched (clocks stay up)
  off,       // `seconds` with no process on the GPU (clocks drop to idle)
};

struct Phase {
  std::string name;
  PhaseKind kind = PhaseKind::idle;
  DataType dtype = DataType::bf16;
  double flops = 0;
  double bytes = 0;
  double seconds = 0;     // idle, off; compute or memory without an amount: run this long (timed)
  double intensity = 0;   // FLOP per DRAM byte; 0: compute has no DRAM limit, memory no FLOPs
  double efficiency = 0;  // achieved / peak; 0: the GPU model's default for the dtype or copy
  double sm_occupancy = -1;  // GPM SM occupancy 0..1; < 0: kind default (compute 0.14, memory 0.8)
  // Switching activity of the data the kernels move, 0..1 (`input`): zeros 0, random values 1.
  // Scales the part of the pipes', load/store and DRAM power that toggles with the data.
  double data_activity = 1;
  // compute: the GEMM's shape (m × n × k, `batch` of them per call); 0: no shape (`efficiency`
  // and `intensity` as given). With a shape the rate and the DRAM traffic follow from it.
  std::uint64_t gemm_m = 0;
  std::uint64_t gemm_n = 0;
  std::uint64_t gemm_k = 0;
  std::uint64_t gemm_batch = 1;
  double pcie_bytes_per_s = 0;  // transfer: requested rate, 0 = as fast as the link allows
  bool to_host = false;         // transfer direction
  std::uint32_t peer = 0;       // p2p: the receiving GPU's index
};

// A compute or memory phase given as a duration instead of an amount: it runs `seconds` at
// whatever rate the clocks allow (a loop bound by wall time, as perf/power_by_data.py --mixed).
inline bool timed(const Phase& p) {
  return p.seconds > 0 && ((p.kind == PhaseKind::compute && p.flops <= 0) ||
                           (p.kind == PhaseKind::memory && p.bytes <= 0));
}

struct Process {
  std::uint32_t pid = 0;
  std::string name;
  std::uint64_t memory_bytes = 0;
  // Who it works for, as gpuclk groups processes into jobs: "slurm:1234", "pod:UID",
  // "container:ID", "session:N"; "" when the scenario gives none (a job of its own).
  std::string owner;
};

struct Workload {
  std::string name;
  double start_s = 0;   // the GPU is off (no process) before this time
  bool repeat = false;  // loop the phases forever; otherwise off after the last one
  Process process;
  std::vector<Phase> phases;
};

}  // namespace gpuclk::sim
