// What `gpuclk bench nccl` makes of a run: each operation's bus bandwidth beside the peak the
// links allow (the bandwidth each rank has to the others, nccl-tests' "B"), send/recv per GPU
// pair beside that pair's link with the worst pair named, the clocks, power and NVLink traffic
// read while each operation ran, and verdicts naming the cause of a shortfall. Pure arithmetic
// over a RunResult and hand-readable link facts, so it is unit-tested without a GPU.
// Rates in B/s, times in s throughout; views pick GB/s and µs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/nccl.h"
#include "bench/p2p_report.h"
#include "telemetry/nccl.h"
#include "telemetry/summary.h"

namespace gpuclk::bench::nccl {

// The selected GPUs' links in rank order (bench p2p's facts: PCIe now, under load and at most,
// NVLinks up and down, NVSwitch, NUMA node) and the direct NVLinks between them.
struct Topology {
  std::vector<p2p::GpuLinks> gpus;
  std::vector<p2p::PairLinks> nvlink_pairs;  // by NVML index, either order
};

// The links between NVML GPUs a and b (direct NVLinks), nullptr when none.
const p2p::PairLinks* direct_link(const Topology& topology, unsigned a, unsigned b);

// The bandwidth a rank has to the others, per direction (nccl-tests' B: what bus bandwidth is
// measured against), the slowest rank's: through the NVSwitch fabric where every GPU reaches it,
// else the sum of its direct NVLinks to the other ranks where NVLinks join them all (with peer
// access), else the slowest running PCIe link. nullopt with one rank or unknown links.
std::optional<p2p::Peak> collective_peak(const Topology& topology,
                                         const std::vector<std::vector<bool>>& peer_access);

// Per direction from rank a to rank b (bench p2p's peer peak).
std::optional<p2p::Peak> pair_peak(const Topology& topology, int a, int b, bool peer_access);

// nccl-tests' sendrecv: every rank sends to the next at once: the slowest link of the ring.
std::optional<p2p::Peak> ring_peak(const Topology& topology,
                                   const std::vector<std::vector<bool>>& peer_access);

// What the sampler saw on one GPU while one operation (or the pairs) ran.
struct GpuTelemetry {
  unsigned gpu = 0;                                      // NVML index
  std::optional<double> sm_clock_mhz, memory_clock_mhz;  // time-weighted medians
  std::optional<double> power_w;                         // mean (energy / time), else peak
  std::optional<double> temperature_c;                   // highest
  std::vector<std::pair<std::string, double>> reasons;   // clock event reasons active, share
  std::optional<double> nvlink_tx_bytes_per_second, nvlink_rx_bytes_per_second;
};

// The telemetry of one GPU over a window: its summary and the slow samples in it (NVLink data
// counters: the change from the first sample to the last over their time apart).
GpuTelemetry gpu_telemetry(unsigned gpu, const telemetry::Summary& summary,
                           const std::vector<telemetry::SlowSample>& slow);

// Bus bandwidth is judged at sizes from here up; below, latency dominates.
inline constexpr std::size_t kBandwidthBytes = std::size_t(64) << 20;
// A collective below this share of its peak, with no cause found, gets a verdict of its own.
// Lower than bench p2p's 70 %: NCCL's protocols and its ring's steps cost more than a copy
// (nccl-tests' all-reduce on two NV18 H100s: ~78 % of 478 GB/s).
inline constexpr double kCollectiveShortOfPeak = 0.60;
// Send/recv pairs this far below the best pair get a verdict.
inline constexpr double kWorstPairShortOfBest = 0.80;

struct OperationReport {
  Operation operation = Operation::all_reduce;
  std::vector<SizeResult> sizes;
  std::optional<p2p::Peak> peak;
  // The figure judged: out-of-place bus bandwidth at the largest size.
  std::size_t judged_bytes = 0;
  double judged_bus_bandwidth = 0;
  std::optional<double> fraction_of_peak;
  double smallest_seconds = 0;  // out-of-place time at the smallest size moving data: latency
  std::uint64_t wrong = 0;      // elements wrong over every size and placement
  bool checked = false;
  std::vector<GpuTelemetry> telemetry;  // per rank's GPU over the operation's run
};

struct PairReport {
  unsigned gpu = 0, peer = 0;  // NVML indexes: gpu sends to peer
  PairResult result;
  std::optional<p2p::Peak> peak;
  std::optional<double> fraction_of_peak;
};

struct NcclReport {
  std::string library_path, library_version;
  bool native_all_to_all = false;
  RunOptions options;  // as run (callback unused)
  Topology topology;
  std::vector<std::vector<bool>> peer_access;
  std::vector<OperationReport> operations;
  std::vector<PairReport> pairs;
  std::optional<std::size_t> worst_pair, best_pair;  // positions in pairs (by share of peak)
  std::vector<GpuTelemetry> pairs_telemetry;
  std::vector<telemetry::nccl::SettingEffect> settings;  // NCCL_* set in the environment
  std::vector<std::string> notes;     // one GPU, sizes reduced to fit: what the figures mean
  std::vector<std::string> verdicts;  // causes first, then shortfalls without a cause
};

// `telemetry[i]` is operation i's per-rank telemetry (may be empty), `pairs_telemetry` the
// pairs'; `environment` the NCCL_* variables NCCL ran with.
NcclReport make_report(const RunResult& run, const RunOptions& options, Topology topology,
                       const std::map<std::string, std::string>& environment,
                       std::vector<std::vector<GpuTelemetry>> telemetry = {},
                       std::vector<GpuTelemetry> pairs_telemetry = {});

// Whether any element was wrong (exit 255).
bool any_wrong(const NcclReport& report);

}  // namespace gpuclk::bench::nccl
