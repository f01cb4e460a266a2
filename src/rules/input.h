// What rules look at: per GPU a window of telemetry samples (the sampler's types) and the static
// facts read once (settings, limits, link, counters, processes), plus what the node knows (the
// journal's clock locks). No NVML here: commands fill these from the sampler, the service's
// history or a single status snapshot.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "gpu/events.h"
#include "host/owner.h"
#include "telemetry/nccl_communicator.h"
#include "telemetry/sample.h"

namespace gpuclk::rules {

using units::Celsius;
using units::Megahertz;
using units::Watts;

// Read once per look (not sampled). Empty optionals: not supported or not read.
struct GpuFacts {
  unsigned index = 0;
  std::string name;  // the model: settings are compared among GPUs of one model only
  std::string uuid;
  int unavailable_code = 0;  // NVML code when the GPU could not be opened (15: lost)
  std::optional<Megahertz> max_sm_clock;
  std::optional<Megahertz> app_sm_clock, app_memory_clock;
  std::optional<Megahertz> default_app_sm_clock, default_app_memory_clock;
  std::optional<Watts> power_limit, default_power_limit;
  std::optional<Celsius> max_operating_temperature, slowdown_temperature;
  std::optional<bool> persistence_mode;
  // The link as read at the end of the window (links train down at idle), and its maximum.
  std::optional<gpu::PcieLink> pcie_link, pcie_max;
  // The GPU's PCI bus id (normalized) and its active NVLinks by the bus id at their far end
  // (another GPU's or an NVSwitch's); empty without NVLink.
  std::string bus_id;
  std::map<std::string, unsigned> nvlink_peers;
  // Clock locks from gpuclk's journal (NVML cannot read locks): "unlocked", "990–1005 MHz";
  // empty when unknown.
  std::string locked_gpu_clocks, locked_memory_clocks;
  std::optional<std::uint64_t> ecc_corrected_aggregate, ecc_uncorrected_aggregate;
  std::optional<gpu::RemappedRows> remapped_rows;
  std::optional<gpu::RetiredPages> retired_pages;  // pre-Ampere GPUs (Ampere+ remap rows)
  // Processes holding a context on the GPU (pids), when NVML lists them.
  std::optional<std::vector<unsigned>> processes;
  // The CPUs close to the GPU (NVML's CPU affinity) and its NUMA node; per process (by pid) the
  // CPUs it may run on, where the host lets us read them.
  std::optional<std::vector<unsigned>> cpu_affinity;
  std::optional<int> numa_node;
  std::map<unsigned, std::vector<unsigned>> process_cpus;
  // CPU use of those processes, % of one core since each started (absent: unknown).
  std::map<unsigned, double> process_cpu_percent;
};

// One GPU over the window [from, to]. `fast`/`slow` in time order; a status snapshot is one fast
// sample and no slow one (window of zero length).
struct GpuWindow {
  GpuFacts facts;
  std::vector<telemetry::FastSample> fast;
  std::vector<telemetry::SlowSample> slow;
  telemetry::GpuHealth health;
  // NVML events received during the window (Xid, ECC), in time order; `xid_watched`: the GPU
  // was registered for Xid events (false: not supported, or nobody watched, as in a snapshot).
  std::vector<gpu::GpuEvent> events;
  bool xid_watched = false;
};

// One NCCL communicator of a job on this node, as the NCCL Inspector recorded it
// (telemetry/nccl_communicator.h), with what joining it to the node tells: its ranks' GPUs
// (RankActivity::gpu, by attach_gpus), the job, its wall time, the links' peak and the NCCL
// settings its processes ran with. Read by communication_bound and late_rank.
struct CommunicatorWindow {
  telemetry::nccl::Communicator communicator;
  std::string job;  // who runs it, for summaries ("Slurm job 1234"); empty: unknown
  // The job's wall time the records cover, s; nullopt: the records' own span (verbose records,
  // or dump times that span more than the time in operations).
  std::optional<double> wall_seconds;
  // Per direction, the bandwidth each rank has to the others (bench::nccl::collective_peak over
  // the ranks' GPUs), B/s, and how it was computed; nullopt: unknown (bandwidth not judged).
  std::optional<double> link_peak_bytes_per_second;
  std::string link_basis;
  std::map<std::string, std::string> nccl_environment;  // NCCL_* of the ranks' processes
};

struct Input {
  telemetry::TimePoint from{}, to{};
  std::vector<GpuWindow> gpus;
  // Who each process on the GPUs works for (by pid): its Slurm job, pod, container or session
  // (host::owner_of, or the simulator's scenario). A pid not here is a job of its own.
  std::map<unsigned, host::Owner> process_owners;
  // NCCL communicators of the jobs on the node (empty: no Inspector records read).
  std::vector<CommunicatorWindow> communicators;
  double seconds() const { return std::chrono::duration<double>(to - from).count(); }
  // True for a single look (status): rules that need time (jitter, rates) stay silent.
  bool snapshot() const { return to <= from; }
};

}  // namespace gpuclk::rules
