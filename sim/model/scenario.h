// A simulated node: GPU models and count, per-GPU overrides, privileges, workloads and faults.
// Loaded from a TOML scenario file (sim/scenarios/*.toml) that names GPU model files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpu_spec.h"
#include "workload.h"

namespace gpuclk::sim {

// A call that fails in a time window: `function` ("*" for every read) returns `code` (an NVML
// return code number) on `gpu` from from_s to until_s of simulated time.
struct InjectedError {
  std::string function;
  std::uint32_t code = 999;
  double from_s = 0;
  double until_s = std::numeric_limits<double>::infinity();
};

// The pages of device memory a GPU can retire in its life (the InfoROM's table: 64 pages of
// 4 KiB, NVIDIA's "~256 KB over a product lifetime").
inline constexpr std::uint32_t kMaxRetiredPages = 64;

// How the node's GPUs are wired: no NVLink, pairs (GPU 2k's links all go to GPU 2k+1, as on a
// 2-GPU H200 NVL board or a PCIe pair with bridges) or NVSwitches (every link to a switch, HGX).
enum class NvLinkTopology : std::uint8_t { none, pairs, nvswitch };

// DL error counters, in nvmlNvLinkErrorCounter_t's order.
enum class NvLinkCounter : std::uint8_t { replay, recovery, crc_flit, crc_data, ecc_data, count };

// An error counter of one link: `initial` at power-on, then growing by per_hour from from_s.
struct NvLinkErrorFault {
  std::uint32_t link = 0;
  NvLinkCounter counter = NvLinkCounter::replay;
  double initial = 0;
  double per_hour = 0;
  double from_s = 0;
};

// One GPU's NVLinks: the node's topology applied to its model, and its faults.
struct GpuNvLink {
  NvLinkTopology topology = NvLinkTopology::none;
  std::uint32_t links = 0;              // 0: no NVLink (NVML answers NOT_SUPPORTED)
  double gigabytes_per_s_per_link = 0;  // per direction, as nvidia-smi nvlink -s shows it
  std::int32_t partner = -1;            // pairs: the GPU at the other end of every link
  std::uint32_t down_mask = 0;          // bit k: link k is down (inactive) from power-on
  std::vector<NvLinkErrorFault> errors;
  bool up(std::uint32_t link) const { return link < links && !((down_mask >> link) & 1U); }
};

struct GpuConfig {
  std::shared_ptr<const GpuSpec> spec;
  std::uint32_t index = 0;
  std::string uuid;  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  std::string serial;
  std::uint32_t pci_domain = 0;
  std::uint32_t pci_bus = 0;
  std::uint32_t pci_device = 0;
  std::uint32_t numa_node = 0;
  std::uint32_t pcie_switch = 0;      // GPUs on the same switch are NVML_TOPOLOGY_SINGLE apart
  std::uint32_t pcie_generation = 0;  // current link (trained) generation and width
  std::uint32_t pcie_width = 0;
  std::uint32_t pcie_slot_max_generation =
      0;                      // what the slot allows (nvmlDeviceGetMaxPcieLinkGeneration)
  double cooling_factor = 1;  // multiplies the heat sink's thermal resistance (0: held at ambient)
  double leakage_factor = 1;  // multiplies static power and leakage (silicon lottery)
  double ambient_c = 0;

  // Settings at power-on (the driver's defaults unless the scenario says otherwise).
  std::uint32_t app_sm_mhz = 0;
  std::uint32_t app_memory_mhz = 0;
  std::uint32_t power_limit_mw = 0;
  bool persistence_mode = true;

  // ECC counters at t = 0 and the rate corrected errors accrue at.
  std::uint64_t ecc_corrected = 0;
  std::uint64_t ecc_uncorrected = 0;
  double ecc_corrected_per_hour = 0;

  // What `gpuclk doctor` looks for (sim/model/faults.cpp): uncorrected ECC errors and PCIe
  // replays accruing, a power brake that halves the clock for `power_brake_seconds` at the end
  // of every `power_brake_period_s`, and a boost clock that wanders up to `clock_jitter_mhz`
  // below the requested clock while a context is held (no reason reported).
  double ecc_uncorrected_per_hour = 0;
  double pcie_replays_per_hour = 0;
  double power_brake_period_s = 0;
  double power_brake_seconds = 0;
  double clock_jitter_mhz = 0;
  // Pages retired before power-on (GPU models with page retirement): after repeated single-bit
  // errors and after double-bit errors, and whether a retirement waits for the next reset.
  std::uint32_t retired_sbe_pages = 0;
  std::uint32_t retired_dbe_pages = 0;
  bool retired_pages_pending = false;

  Workload workload;
  GpuNvLink nvlink;

  // Faults.
  double lost_at_s = std::numeric_limits<double>::infinity();
  double read_error_rate = 0;           // probability a read fails transiently
  std::uint32_t read_error_code = 999;  // NVML code it fails with (default NVML_ERROR_UNKNOWN)
  std::vector<InjectedError> errors;
};

struct Scenario {
  std::string name;  // file stem
  std::filesystem::path path;
  std::uint64_t fingerprint = 0;  // hash of the scenario and model files' text
  std::string description;
  bool privileged = true;  // writes need root on a real host
  std::string driver_version;
  std::string nvml_version;
  int cuda_driver_version = 0;
  std::uint32_t init_error = 0;  // NVML code nvmlInit_v2 returns (0: it succeeds)
  std::uint64_t seed = 1;
  std::uint32_t cpu_count = 0;  // logical CPUs, split evenly over numa_nodes
  std::uint32_t numa_nodes = 1;
  bool nvswitch = false;  // NVLinks go to NVSwitches (the [nvlink] table's topology = "nvswitch")
  std::vector<GpuConfig> gpus;
};

class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses a GPU model file. Throws ScenarioError with the file and key on a bad or missing value.
std::shared_ptr<const GpuSpec> load_gpu_spec(const std::filesystem::path& file);

// Parses a scenario; GPU models are looked up as <dir>/models/<key>.toml for each dir in
// model_dirs, in order. Throws ScenarioError.
Scenario load_scenario(const std::filesystem::path& file,
                       const std::vector<std::filesystem::path>& model_dirs);

// The data's switching activity (Phase::data_activity) a phase's `input = NAME` stands for on
// this GPU model: zeros 0, constant and pattern the model's measured figures, random 1; nullopt
// for any other name.
std::optional<double> input_activity(const GpuSpec& spec, std::string_view name);

// An NVML return code number by its short name ("unknown", "timeout", "gpu_is_lost",
// "driver_not_loaded", …); throws ScenarioError for a name it does not know.
std::uint32_t nvml_code_by_name(const std::string& name);

}  // namespace gpuclk::sim
