// What `gpuclk bench p2p` makes of its measurements: the peak each figure should reach from the
// links NVML reports (NVLink: links up × per-link speed; PCIe: generation × width, per
// direction), the share of it reached, and a verdict naming the cause when a figure falls short.
// Pure arithmetic over p2p::PeerResult / HostResult and hand-readable link facts, so it is
// unit-tested without a GPU. Rates are in B/s and latency in s throughout; views pick GB/s, ns.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/p2p.h"
#include "gpu/device.h"

namespace gpuclk::bench::p2p {

// Payload bytes per second per lane and direction after line coding: Gen1 0.25 and Gen2 0.5
// (8b/10b), Gen3 0.985, Gen4 1.969, Gen5 3.938 (128b/130b), Gen6 7.563 (FLIT); nullopt otherwise.
std::optional<double> pcie_lane_bytes_per_second(unsigned generation);

// "Gen5 x16".
std::string pcie_text(const gpu::PcieLink& link);

// What NVML says about one GPU's links (the command reads them; tests build them by hand).
struct GpuLinks {
  unsigned index = 0;  // NVML index
  int cuda_ordinal = -1;
  std::string name, bus_id;
  // The current PCIe link read before the run and again while host copies ran: an idle GPU may
  // train its link down to save power, so the one under load is the one that bounds a copy.
  std::optional<gpu::PcieLink> pcie_idle, pcie_loaded;
  std::optional<gpu::PcieLink> pcie_max;  // what the GPU and its slot can reach together
  std::optional<int> numa_node;           // the host NUMA node its PCIe slot hangs off
  unsigned nvlinks = 0;                   // links the GPU has
  unsigned nvlinks_down = 0;              // of them, down now
  // Per direction, up links only: to the NVSwitch fabric (empty: none), in B/s.
  std::optional<double> nvswitch_bytes_per_second;
  unsigned nvswitch_links = 0;
  double nvlink_bytes_per_second_per_link = 0;  // per direction (26.562e9 on Hopper)

  // The link a host copy ran on: the loaded reading, else the idle one.
  std::optional<gpu::PcieLink> pcie_running() const {
    return pcie_loaded ? pcie_loaded : pcie_idle;
  }
};

// NVLinks that are up directly between two GPUs (either order), per direction.
struct PairLinks {
  unsigned a = 0, b = 0;  // NVML indexes
  unsigned links = 0;
  double bytes_per_second_per_link = 0;
};

struct Peak {
  enum class Link { nvlink, pcie } link = Link::pcie;
  double bytes_per_second = 0;  // per direction, or both directions for a bidirectional figure
  std::string basis;            // "18 NVLinks x 26.562 GB/s", "PCIe Gen5 x16: 16 x 3.938 GB/s"
};

std::optional<Peak> pcie_peak(const gpu::PcieLink& link);
Peak nvlink_peak(unsigned links, double bytes_per_second_per_link);

// Per direction between GPUs a and b: their direct NVLinks, else the NVSwitch fabric both reach
// (the slower side), else PCIe (the slower of their running links); nullopt when unknown.
// Without peer access the driver stages copies through host memory over PCIe.
std::optional<Peak> peer_peak(const GpuLinks& a, const GpuLinks& b, const PairLinks* direct,
                              bool peer_access);
// Per direction between a GPU and host memory: its running PCIe link.
std::optional<Peak> host_peak(const GpuLinks& gpu);

// A figure below this share of its peak, with no cause found, gets a verdict of its own.
inline constexpr double kShortOfPeak = 0.70;

struct FigureReport {
  Figure figure = Figure::ce_read;
  std::optional<double> value;  // B/s, or s per access; nullopt: not measured (see skipped)
  std::string skipped;          // why not measured
  RateSummary summary;
  std::vector<double> samples;
  std::optional<Peak> peak;  // twice the link's for a bidirectional figure; none for latency
  std::optional<double> fraction_of_peak;
  std::optional<bool> verified;
};

struct PairReport {
  unsigned gpu = 0, peer = 0;  // NVML indexes of (a, b)
  int cuda_device = -1, cuda_peer = -1;
  bool peer_access = false;
  std::string path;                   // as gpuclk topo shows it: "NV18", "SYS", …
  std::vector<FigureReport> figures;  // every peer figure, in Figure order
  std::vector<std::string> verdicts;  // empty: nothing short
};

struct HostReport {
  unsigned gpu = 0;
  int cuda_device = -1;
  std::optional<int> numa_node;      // where the host buffer was; nullopt: the OS's choice
  std::optional<int> gpu_numa_node;  // where the GPU is attached
  bool local = false;                // the row measured on the GPU's own node (or the only one)
  std::vector<FigureReport> figures;
  std::vector<std::string> verdicts;
};

struct P2pReport {
  Options options;  // bytes, copies, samples as run (callbacks unused)
  std::vector<GpuLinks> gpus;
  std::vector<PairReport> pairs;    // ordered pairs, a-major
  std::vector<HostReport> hosts;    // per GPU: the local node first, then any --numa nodes
  std::string peer_skipped;         // why there are no peer figures ("one GPU: no peer")
  std::string host_skipped;         // why there are no host figures ("--peer-only")
  std::size_t host_numa_nodes = 0;  // NUMA nodes of the host (0: unknown)
};

PairReport make_pair_report(const PeerResult& result, const GpuLinks& a, const GpuLinks& b,
                            const PairLinks* direct, std::string path);

// `local`: the same GPU's row on its own node, to price a remote node (nullptr for that row).
HostReport make_host_report(const HostResult& result, const GpuLinks& gpu, const HostReport* local,
                            std::size_t host_numa_nodes);

}  // namespace gpuclk::bench::p2p
