// Device: one GPU, read through NVML into unit types. DeviceSet: every GPU NVML sees.
//
// Static facts are read once, on first use, in three groups: Identity (what the GPU is),
// ClockLimits and Ratings. Dynamic getters return Reading<T>; a getter that answered NOT_SUPPORTED
// once is not called again (capabilities are probed once, docs/architecture.md). Getters are
// thread-safe: NVML is, and the capability cache uses atomics.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/arch.h"
#include "gpu/clock_reasons.h"
#include "gpu/reading.h"
#include "gpu/units.h"

struct nvmlDevice_st;

namespace gpuclk::nvml {
class Api;
}

namespace gpuclk::gpu {

class LimitsCache;

using units::Bytes;
using units::Celsius;
using units::Joules;
using units::Megahertz;
using units::Ratio;
using units::Watts;

enum class ClockDomain { graphics = 0, sm = 1, memory = 2, video = 3 };

// The driver policies that can hold clocks down, each with a time counter (violation_time()).
enum class ViolationPolicy {
  power,            // SW power capping
  thermal,          // thermal slowdown
  sync_boost,       // held to match the other GPUs of a sync-boost group
  board_limit,      // board-level limit
  low_utilization,  // low utilization
  reliability,      // board reliability limit
};

struct PciInfo {
  std::string bus_id;  // "00000000:00:06.0", as nvidia-smi prints it
  unsigned domain = 0, bus = 0, device = 0;
  std::uint32_t device_id = 0;  // PCI device id << 16 | vendor id
  std::uint32_t subsystem_id = 0;
};

// Row remapping (A100 and later): rows of device memory replaced by spares after errors.
struct RemappedRows {
  unsigned corrected = 0;    // rows remapped after corrected errors
  unsigned uncorrected = 0;  // rows remapped after uncorrectable errors
  bool pending = false;      // a remap waits for the next GPU reset
  bool failure = false;      // a remap failed: no spare row left
};

// Dynamic page retirement (Kepler to Turing; Ampere and later remap rows instead and answer
// NOT_SUPPORTED): 4 KiB pages of device memory the driver retired after ECC errors.
struct RetiredPages {
  unsigned multiple_sbe = 0;  // after repeated single-bit errors at one address
  unsigned dbe = 0;           // after a double-bit error
  bool pending = false;       // a retirement takes effect only when the GPU is next reset
  unsigned total() const { return multiple_sbe + dbe; }
};

struct PcieLink {
  unsigned generation = 0;
  unsigned width = 0;  // lanes
};

struct Utilization {
  Ratio gpu;     // fraction of time a kernel ran
  Ratio memory;  // fraction of time device memory was read or written
};

struct MemoryUsage {
  Bytes total, used, free;
};

struct PowerConstraints {
  Watts min, max;
  units::Milliwatts min_mw, max_mw;  // exactly as NVML gives them
};

struct ClockRange {
  Megahertz min, max;
};

// The graphics clocks the driver accepts with one memory clock (NVML order: highest first).
struct SupportedClocks {
  Megahertz memory;
  std::vector<Megahertz> graphics;
};

struct TemperatureThresholds {
  Reading<Celsius> shutdown, slowdown, memory_max, gpu_max;
};

struct ProcessInfo {
  unsigned pid = 0;
  Reading<Bytes> used_memory;
};

// One of the driver's per-process utilization samples (nvmlDeviceGetProcessUtilization): the
// share of one of its sampling periods that the process's kernels ran, and its memory traffic.
struct ProcessUtilization {
  unsigned pid = 0;
  std::uint64_t time_us = 0;  // end of the period, µs since the epoch (the driver's clock)
  Ratio sm{0}, memory{0};
};

struct PcieThroughput {
  units::BytesPerSecond tx, rx;
};

// What sits at the far end of an NVLink.
enum class NvLinkRemote { gpu, nvswitch, other, unknown };

// One NVLink as read when the device is probed (static: what it is and where it leads).
// Whether it is up is read again with its counters (NvLinkCounters), as a link can drop.
struct NvLinkFacts {
  unsigned link = 0;
  bool active = false;                 // up when probed
  Reading<std::string> version;        // "4.0" (NVML_NVLINK_VERSION_4_0)
  Reading<double> gigabytes_per_s;     // per direction, as nvidia-smi nvlink -s (26.562 on Hopper)
  Reading<std::string> remote_bus_id;  // the peer GPU's or the NVSwitch's, normalized
  NvLinkRemote remote = NvLinkRemote::unknown;
};

// A link's DL error counters, in nvmlNvLinkErrorCounter_t's order of those gpuclk reads.
enum class NvLinkError { replay, recovery, crc, ecc };
inline constexpr std::size_t kNvLinkErrorKinds = 4;

// What Device::nvlink_counters() reads besides each link's state (a bit set).
enum class NvLinkRead : unsigned { state = 0, errors = 1, data = 2, all = 3 };
constexpr bool has(NvLinkRead set, NvLinkRead part) {
  return (static_cast<unsigned>(set) & static_cast<unsigned>(part)) != 0;
}
constexpr NvLinkRead operator|(NvLinkRead a, NvLinkRead b) {
  return static_cast<NvLinkRead>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

// One NVLink's state and counters since the driver loaded (slow: 5 NVML calls per link).
struct NvLinkCounters {
  unsigned link = 0;
  Reading<bool> active;
  bool errors_read = false;  // false: not asked for (errors below are not_supported), as data
  std::array<Reading<std::uint64_t>, kNvLinkErrorKinds> errors;  // by NvLinkError
  Reading<std::uint64_t> tx_bytes, rx_bytes;                     // data payload (KiB × 1024)
};

// Video/media engines' busy fraction (nvidia-smi dmon's enc, dec, jpg, ofa columns).
struct MediaUtilization {
  Reading<Ratio> encoder, decoder, jpeg, ofa;
};

// What the GPU is. Read on first use, once: each read is cheap (< 0.5 ms on an H100).
struct Identity {
  unsigned index = 0;
  // Non-zero when the GPU could not be opened (NVML code, e.g. 15 = GPU is lost): the rest of
  // Identity is empty and every getter reports an error, but the other GPUs carry on.
  int unavailable_code = 0;
  std::string name;
  std::string uuid;
  Reading<std::string> serial;
  Reading<PciInfo> pci;
  Reading<unsigned> architecture;  // NVML_DEVICE_ARCH_* code
  Reading<ComputeCapability> compute_capability;
  const ArchSpec* arch = nullptr;  // nullptr when unknown
  Reading<unsigned> cuda_cores;
  Reading<unsigned> sm_count;  // cuda_cores / cores per SM of the arch
  Reading<Bytes> memory_total;
  Reading<unsigned> memory_bus_width;  // bits
  Reading<ClockReasons> supported_clock_reasons;
};

// The clocks the GPU can run at. Apart from Identity: on an H100 every max, boost and default
// applications clock read takes ~1 ms each time it is made (NVML does not cache them; perf/
// nvml_concurrency.cpp), ~14 ms for the 12 of them, and only some commands show them.
struct ClockLimits {
  std::array<Reading<Megahertz>, 4> max_clock;          // by ClockDomain
  std::array<Reading<Megahertz>, 4> max_boost_clock;    // max customer boost; not video
  std::array<Reading<Megahertz>, 4> default_app_clock;  // graphics and memory only
  Reading<std::vector<SupportedClocks>> supported_clocks;

  const Reading<Megahertz>& max(ClockDomain d) const { return max_clock[int(d)]; }
};

// The board's ratings: power limit range, temperature thresholds, the fastest PCIe link. Apart
// from Identity: the first read of each kind costs 1-2.5 ms on an H100 (GPUCLK_NVML_TRACE).
struct Ratings {
  Reading<PowerConstraints> power_constraints;
  Reading<Watts> default_power_limit;
  Reading<units::Milliwatts> default_power_limit_mw;  // exactly as NVML gives it
  TemperatureThresholds thresholds;
  Reading<PcieLink> pcie_max;                 // what the link can reach (GPU and slot together)
  Reading<unsigned> pcie_gpu_max_generation;  // what the GPU alone supports
};

// The GPU's NVLinks, probed once: NVML answers per link (1 + 4 calls each), so only topo, info,
// query and the samplers that show links read them. Empty when the GPU has none.
struct NvLinks {
  Reading<std::vector<NvLinkFacts>> links;  // not_supported: no NVLink (PCIe cards, old drivers)
};

// Where the GPU sits relative to the CPUs. Apart from Identity: nvmlDeviceGetCpuAffinity alone
// takes 10-13 ms on an H100 (GPUCLK_NVML_TRACE, docs/results/cli_latency_h100.md), and only
// info, topo and doctor show it.
struct Affinity {
  Reading<int> numa_node;
  Reading<std::vector<unsigned>> cpu_affinity;  // logical CPU ids close to the GPU
};

class Device {
 public:
  // `open_error`: the NVML code when no handle could be had (handle is then nullptr).
  Device(const nvml::Api& api, nvmlDevice_st* handle, unsigned index, int open_error = 0);

  // The static facts, in three groups each read on first use (once, thread-safe), so that a
  // command pays only for what it shows: on an H100 the clock limits and ratings cost ~20 ms,
  // as much as nvmlInit and the first handle together (perf/nvml_open_costs.py).
  const Identity& identity() const {
    std::call_once(identity_probed_, [this] { probe_identity(); });
    return identity_;
  }
  const ClockLimits& clock_limits() const {
    std::call_once(clock_limits_probed_, [this] { probe_clock_limits(); });
    return clock_limits_;
  }
  const Ratings& ratings() const {
    std::call_once(ratings_probed_, [this] { probe_ratings(); });
    return ratings_;
  }
  // Read on first use, once, thread-safe (see Affinity).
  const Affinity& affinity() const {
    std::call_once(affinity_probed_, [this] { probe_affinity(); });
    return affinity_;
  }
  // Read on first use, once, thread-safe (see NvLinks).
  const NvLinks& nvlinks() const {
    std::call_once(nvlinks_probed_, [this] { probe_nvlinks(); });
    return nvlinks_;
  }
  // Read when the device is opened (selection and labels need them; three fast reads).
  bool available() const { return identity_.unavailable_code == 0; }
  unsigned index() const { return identity_.index; }
  const std::string& name() const { return identity_.name; }
  const std::string& uuid() const { return identity_.uuid; }
  const std::string& bus_id() const { return bus_id_; }  // "" when unknown
  nvmlDevice_st* handle() const { return handle_; }
  const nvml::Api& api() const { return api_; }
  // Where clock_limits() is kept between processes (src/gpu/limits_cache.h); null: not kept.
  // Set before the first clock_limits().
  void use_limits_cache(const LimitsCache* cache) { limits_cache_ = cache; }

  // Current clocks and settings (MHz).
  Reading<Megahertz> clock(ClockDomain d) const;
  Reading<Megahertz> app_clock(ClockDomain d) const;
  Reading<int> pstate() const;  // 0 (max performance) .. 15
  Reading<ClockRange> pstate_clock_range(ClockDomain d, int pstate) const;
  Reading<ClockReasons> clock_reasons() const;
  // Time the given policy held clocks down since the driver loaded.
  Reading<std::chrono::nanoseconds> violation_time(ViolationPolicy policy) const;
  // All six counters, in ViolationPolicy's order, in one field-value read where the driver has
  // them (0.6 ms on an H100 against 0.65 ms for each violation_time()).
  std::array<Reading<std::chrono::nanoseconds>, 6> violation_times() const;

  Reading<Watts> power_draw() const;  // the driver's power reading (1 s average on Hopper)
  // The memory's share of power_draw(): NVML's memory power scope, which an H100 or H200 answers
  // as an average only (field NVML_FI_DEV_POWER_AVERAGE, scope NVML_POWER_SCOPE_MEMORY);
  // not_supported on boards without it. The part a lower SM clock cannot take away.
  Reading<Watts> memory_power() const;
  Reading<Watts> power_limit() const;  // the limit currently set
  // The same, exactly as NVML gives it (what control reads before a change and restores).
  Reading<units::Milliwatts> power_limit_mw() const;
  Reading<Watts> enforced_power_limit() const;  // the limit in force (min of all limits)
  Reading<Joules> energy() const;  // total since driver load; slow (ms per read on H100)
  Reading<Celsius> temperature() const;
  Reading<Ratio> fan_speed() const;
  Reading<Utilization> utilization() const;
  Reading<MemoryUsage> memory() const;

  Reading<bool> persistence_mode() const;
  Reading<int> compute_mode() const;  // NVML_COMPUTEMODE_*
  Reading<bool> ecc_enabled() const;
  // Since the driver loaded (volatile) or over the GPU's life (`aggregate`).
  Reading<std::uint64_t> ecc_errors(bool uncorrected, bool aggregate = false) const;
  Reading<RemappedRows> remapped_rows() const;
  Reading<RetiredPages> retired_pages() const;
  Reading<PcieLink> pcie_link() const;              // current generation and width
  Reading<PcieThroughput> pcie_throughput() const;  // slow: ~20 ms per read on H100
  Reading<std::vector<ProcessInfo>> processes() const;
  // The driver's per-process samples newer than `since_us` (a sample's time_us; 0: all it keeps).
  // Empty (not an error) when no process ran since then.
  Reading<std::vector<ProcessUtilization>> process_utilization(std::uint64_t since_us) const;

  // Telemetry extras (dmon columns). Each is optional: not_supported where the driver lacks it.
  Reading<Celsius> memory_temperature() const;  // HBM/GDDR; a field value (NVML_FI_DEV_MEMORY_TEMP)
  Reading<std::uint64_t> pcie_replay_errors()
      const;  // since driver load (NVML_FI_DEV_PCIE_REPLAY_COUNTER)
  Reading<Bytes> bar1_used() const;
  Reading<Bytes> protected_memory_used() const;  // confidential-computing protected memory
  MediaUtilization media_utilization() const;    // 4 reads
  // State and counters of every link nvlinks() found (empty when none): per link its state and
  // (errors) four error counters, and (data) one field-value read for every link's data
  // counters. Slow tier. On an H100 with 18 links (idle / under a peer copy) a state read takes
  // 0.003 / 0.45 ms, an error counter read 0.8 / 1.9 ms (72 per GPU: 58 / 134 ms) and the data
  // counters' field-value read 16 / 27 ms (docs/results/multigpu_h100x2.md): ask only for what
  // is needed, and for the errors less often.
  std::vector<NvLinkCounters> nvlink_counters(NvLinkRead what = NvLinkRead::all) const;
  // True for the NVML code of a GPU that fell off the bus (NVML_ERROR_GPU_IS_LOST).
  static bool is_lost_error(int nvml_code);

 private:
  // Per-getter "not supported" memory; see the class comment.
  enum Field : int {
    kClock,
    kAppClock = kClock + 4,
    kPstate = kAppClock + 4,
    kReasons,
    kViolation,
    kPowerDraw,
    kPowerLimit,
    kEnforcedLimit,
    kEnergy,
    kTemperature,
    kFan,
    kUtilization,
    kMemory,
    kPersistence,
    kComputeMode,
    kEcc,
    kEccErrors,
    kPcieLink,
    kPcieThroughput,
    kProcesses,
    kProcessUtilization,
    kPstateRange,
    kMemoryTemperature,
    kMemoryPower,
    kPcieReplay,
    kBar1,
    kProtectedMemory,
    kEncoder,
    kDecoder,
    kJpeg,
    kOfa,
    kRemappedRows,
    kRetiredPages,
    kNvLinkError,                                    // one per NvLinkError
    kNvLinkData = kNvLinkError + kNvLinkErrorKinds,  // the data counters
    kFieldCount
  };
  template <class T, class Call>
  Reading<T> read(Field field, Call&& call) const;
  void open_core();                                      // name, UUID, bus id; throws NvmlError
  void probe_identity() const;                           // the rest of Identity; never throws
  void probe_clock_limits() const;                       // never throws
  void probe_ratings() const;                            // never throws
  void probe_affinity() const;                           // never throws
  void probe_nvlinks() const;                            // never throws
  Reading<Ratio> engine_utilization(Field field) const;  // kEncoder, kDecoder, kJpeg or kOfa

  // Entry points outside Api's table (nvml_abi.h "Telemetry extras"), resolved once.

  const nvml::Api& api_;
  // The buffer nvmlDeviceGetProcessUtilization last needed (the slow tier's one thread reads it).
  mutable unsigned utilization_samples_ = 64;
  nvmlDevice_st* handle_;
  mutable Identity identity_;
  mutable std::once_flag identity_probed_;
  mutable ClockLimits clock_limits_;
  mutable std::once_flag clock_limits_probed_;
  mutable Ratings ratings_;
  mutable std::once_flag ratings_probed_;
  mutable Affinity affinity_;
  mutable std::once_flag affinity_probed_;
  mutable NvLinks nvlinks_;
  mutable std::once_flag nvlinks_probed_;
  std::string bus_id_;
  const LimitsCache* limits_cache_ = nullptr;
  mutable std::array<std::atomic<bool>, kFieldCount> unsupported_{};
};

// All GPUs NVML enumerates, plus driver-wide facts.
class DeviceSet {
 public:
  explicit DeviceSet(const nvml::Api& api);
  ~DeviceSet();

  std::size_t size() const { return devices_.size(); }
  Device& operator[](std::size_t i) { return *devices_[i]; }
  const Device& operator[](std::size_t i) const { return *devices_[i]; }
  auto begin() const { return devices_.begin(); }
  auto end() const { return devices_.end(); }
  std::vector<Device*> all() const;

  Reading<std::string> driver_version() const { return driver_version_; }
  Reading<std::string> nvml_version() const { return nvml_version_; }
  Reading<int> cuda_driver_version() const { return cuda_driver_version_; }  // 13000 = 13.0
  // The name the driver knows for process `pid` (its command; the simulator's job name).
  Reading<std::string> process_name(unsigned pid) const;
  const nvml::Api& api() const { return api_; }
  // Keeps every GPU's clock limits in `dir` between processes, under this driver's version (see
  // src/gpu/limits_cache.h; empty `dir`: not kept). Call before reading any.
  void cache_clock_limits(const std::filesystem::path& dir);

 private:
  const nvml::Api& api_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::unique_ptr<LimitsCache> limits_cache_;
  Reading<std::string> driver_version_, nvml_version_;
  Reading<int> cuda_driver_version_;
};

}  // namespace gpuclk::gpu
