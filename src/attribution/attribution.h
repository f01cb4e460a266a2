// Who used the GPUs: each GPU's energy over every slow interval (the energy counter's delta, not
// integrated power) goes to the processes that were on that GPU, and from them to their owners
// (the Slurm job, Kubernetes pod, container or session of host/owner.h) and their users.
//
// One interval of one GPU, between two slow samples that read the energy and the processes:
//   - no process: the GPU's idle energy;
//   - one process: all of it (Split::sole);
//   - several: by the driver's per-process SM utilization samples of the interval (Split::sm);
//     when the driver gave none (or all zero), by the GPU memory each holds (Split::memory) when
//     the driver says it for every one, else in equal parts (Split::equal);
//   - the processes could not be read: unknown (GpuBooks::unknown_j).
// So per GPU, idle + Σ splits + unknown == the counter's delta, exactly: nothing is lost or
// counted twice.
//
// Per process also: GPU time with a context (a process listed at both ends of the interval held
// it all the interval; at one end only, or only sampled in between, half of it), busy time (its
// share of the GPU's busy time, nvmlDeviceGetUtilizationRates), the mean SM clock while it held
// a context, and how long each clock event reason held the clock back while it did.
//
// Thread-safety: add() and prune() from one thread (the service's refresher); view() from any.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "host/owner.h"
#include "telemetry/sample.h"

namespace gpuclk::attribution {

// How one interval's energy of a GPU was split between its processes.
enum class Split : std::uint8_t { sole, sm, memory, equal };
inline constexpr std::size_t kSplitCount = 4;
// "sole", "sm", "memory", "equal".
std::string_view to_string(Split split);

// NVML's clock event reason bits 0..8, in gpu::clock_reasons() order.
inline constexpr std::size_t kReasonSlots = 9;

// What a process, an owner or a user used of the GPUs. GPU-seconds: one GPU for one second is 1.
struct Usage {
  double energy_j = 0;
  double context_s = 0;  // GPU-seconds holding a context
  double busy_s = 0;     // GPU-seconds its kernels ran (its share of the GPU's busy time)
  double clock_mhz_s = 0, clock_s = 0;        // SM clock × context seconds, and those seconds
  std::array<double, kReasonSlots> held_s{};  // context seconds each reason was active
  void add(const Usage& other);
  std::optional<double> mean_sm_mhz() const;  // nullopt before any clock was read
};

// The limits (power cap, thermal, hardware slowdown, power brake; not idle or a setting) that held
// the clock back while `u` held a context, as shares of that time, largest first, at most `most`:
// "sw_power_cap 93%, sw_thermal_slowdown 2%"; "-" when none did.
std::string held_back_text(const Usage& u, std::size_t most = kReasonSlots);

struct ProcessUse {
  unsigned pid = 0;
  std::size_t gpu = 0;     // position in the service's GPUs
  unsigned gpu_index = 0;  // NVML index
  std::string name;        // /proc/PID/comm; "" where not readable
  // Who it works for; a process this service cannot see in /proc (ended, or in another PID
  // namespace) is its own owner, "process:PID".
  host::Owner owner;
  telemetry::TimePoint first_seen{}, last_seen{};
  bool running = true;  // on the GPU at the last interval
  Usage usage;
  std::optional<units::Bytes> memory, memory_peak;
  // At the last interval: its share of the GPU's energy, that share of the GPU's mean power,
  // and how the interval was split.
  double share = 0;
  double power_w = 0;
  Split split = Split::sole;
};

struct OwnerUse {
  host::Owner owner;
  telemetry::TimePoint first_seen{}, last_seen{};
  bool running = false;              // a process of it is on a GPU
  std::map<unsigned, Usage> by_gpu;  // by GPU index
  Usage usage;                       // all its GPUs
  std::vector<unsigned> pids;        // every process seen, ascending
};

struct GpuBooks {
  double counted_j = 0;                       // the counter's deltas since the service started
  double idle_j = 0;                          // no process on the GPU
  double unknown_j = 0;                       // the processes could not be read
  std::array<double, kSplitCount> split_j{};  // booked to processes, by how it was split
  std::uint64_t intervals = 0;
  // The counter at the start of the first interval booked and at the end of the last: with no
  // interval lost or booked twice, last − first == counted_j.
  std::optional<double> first_counter_j, last_counter_j;
};

struct AttributionView {
  std::vector<ProcessUse> processes;   // by GPU position, then pid: running and recently ended
  std::vector<OwnerUse> owners;        // by first seen
  std::map<std::string, Usage> users;  // by login name; "" for processes of unknown users
  std::vector<GpuBooks> gpus;          // by position
  std::vector<unsigned> gpu_indexes;   // the NVML index of each position
};

// What the service knows of a process: its owner (nullopt: not visible from here) and name.
struct ProcessIdentity {
  std::optional<host::Owner> owner;
  std::string name;
};
using IdentifyProcess = std::function<ProcessIdentity(unsigned pid)>;

// A Kubernetes pod's name as the kubelet gives it (attribution/pod_names.h).
struct PodName {
  std::string pod_namespace, name;
  std::string container;  // "" when unknown (several containers of the pod hold its GPUs)
  bool operator==(const PodName&) const = default;
};

// How long an ended process stays in the view (gpuclk ps shows it as ended), and how long an
// owner whose processes all ended is kept for `stat --job` (its /metrics series end earlier:
// kOwnerSeriesKept in metrics).
inline constexpr std::chrono::minutes kEndedProcessKept{10};
inline constexpr std::chrono::hours kEndedOwnerKept{24};
inline constexpr std::size_t kOwnersKept = 1000;

class Attribution {
 public:
  // `gpu_indexes`: the NVML index of each GPU position. `identify` is asked once per pid.
  Attribution(std::vector<unsigned> gpu_indexes, IdentifyProcess identify);

  // GPU `gpu`'s interval from `previous` to `current`, two successive slow samples of it, with
  // the fast samples taken between them (clocks, reasons, utilization). An interval without
  // both energy readings books no energy but still counts time.
  void add(std::size_t gpu, const telemetry::SlowSample& previous,
           const telemetry::SlowSample& current, std::span<const telemetry::FastSample> fast);
  // Forgets processes ended more than kEndedProcessKept before `now`, and owners past
  // kEndedOwnerKept or beyond the kOwnersKept most recent.
  void prune(telemetry::TimePoint now);

  // Names the pods of `named` (by UID) that have no name yet, their owner and its processes: a
  // name once given stays for the UID's lifetime. From add()'s thread.
  void name_pods(const std::map<std::string, PodName>& named);

  AttributionView view() const;

 private:
  // add()'s phases: who a pid is (before the lock), its entry (made on its first interval),
  // and an interval's usage added to the process, its owner and its user (under the lock).
  void identify(unsigned pid);
  ProcessUse& process_use(std::size_t gpu, unsigned pid, telemetry::TimePoint first_seen);
  void book(ProcessUse& use, const Usage& step);
  OwnerUse& owner_of(const ProcessUse& process);

  std::vector<unsigned> gpu_indexes_;
  IdentifyProcess identify_;
  // By pid, while a process of it is kept; add() and prune()'s thread only.
  std::map<unsigned, ProcessIdentity> identities_;
  mutable std::mutex mutex_;
  std::map<std::pair<std::size_t, unsigned>, ProcessUse> processes_;  // by (position, pid)
  std::map<std::string, OwnerUse> owners_;                            // by owner key
  std::map<std::string, Usage> users_;
  std::vector<GpuBooks> books_;
};

}  // namespace gpuclk::attribution
