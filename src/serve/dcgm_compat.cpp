#include "serve/dcgm_compat.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "telemetry/field_table.h"
#include "util/error.h"
#include "util/parse.h"

namespace gpuclk::serve {
namespace {

// What one GPU's values come from. A GPU that is lost has no samples (its series stop, as
// gpuclk's do) but keeps its Xid (79 is how it went).
struct GpuView {
  const GpuFacts* fact = nullptr;
  const telemetry::FastSample* fast = nullptr;  // null: not sampled yet, or lost
  const telemetry::SlowSample* slow = nullptr;
  const telemetry::SlowSample* previous_slow = nullptr;
  const gpu::StatusSnapshot* status = nullptr;  // null: no state yet, or the GPU is unavailable
  std::optional<std::uint64_t> last_xid;        // since gpuclk serve started
  bool xid_watched = false;                     // Xid events of this GPU reach the service
};

using Value = std::optional<double>;

// A family and how a GPU's value is computed; nullopt: no series for that GPU.
struct Row {
  DcgmFamily family;
  Value (*value)(const GpuView&);
};

constexpr double kMebibyte = 1024.0 * 1024.0;

template <class Q>
Value of(const std::optional<Q>& q, double scale = 1.0) {
  if (!q) return std::nullopt;
  return q->value() * scale;
}

// DCGM reads clocks, temperatures, utilization, energy and memory as integers.
Value whole(Value v) {
  if (v) *v = std::round(*v);
  return v;
}

template <class Q>
Value fast_value(const GpuView& v, std::optional<Q> telemetry::FastSample::*member,
                 double scale = 1.0) {
  return v.fast ? of(v.fast->*member, scale) : std::nullopt;
}

Value count(const std::optional<std::uint64_t>& n) {
  if (!n) return std::nullopt;
  return static_cast<double>(*n);
}

Value gpm(const GpuView& v, std::optional<units::Ratio> telemetry::GpmActivity::*engine) {
  if (!v.slow || !v.slow->gpm) return std::nullopt;
  return of((*v.slow->gpm).*engine);
}

// Device memory in MiB, whole as DCGM gives it; free is what the used figure leaves (gpuclk
// reads NVML's v1 memory info, whose used includes the driver's reservation).
Value memory_mib(const GpuView& v, bool free) {
  if (!v.fast || !v.fast->memory_used) return std::nullopt;
  double bytes = v.fast->memory_used->value();
  if (free) {
    if (!v.fact->memory_total) return std::nullopt;
    bytes = std::max(0.0, v.fact->memory_total->value() - bytes);
  }
  return std::floor(bytes / kMebibyte);
}

// NVLink data sent and received by all links of the GPU between the last two slow samples, in
// MB/s (10^6 bytes): the newest default-counters.csv's gauge. None without NVLink counters, on
// the first sample, or when a counter went back (the driver was reloaded).
Value nvlink_throughput(const GpuView& v) {
  if (!v.slow || !v.previous_slow) return std::nullopt;
  namespace F = telemetry::fields;
  const auto rate = telemetry::nvlink_rate(*v.previous_slow, *v.slow, {F::nvlink_tx, F::nvlink_rx});
  if (!rate) return std::nullopt;
  return *rate / 1e6;
}

using telemetry::FastSample;
using telemetry::GpmActivity;

// The rows, in default-counters.csv's order. Units and types are dcgm-exporter's.
constexpr std::array kRows{
    Row{{"DCGM_FI_DEV_SM_CLOCK", MetricType::gauge, "SM clock frequency (in MHz)."},
        [](const GpuView& v) { return whole(fast_value(v, &FastSample::sm_clock)); }},
    Row{{"DCGM_FI_DEV_MEM_CLOCK", MetricType::gauge, "Memory clock frequency (in MHz)."},
        [](const GpuView& v) { return whole(fast_value(v, &FastSample::memory_clock)); }},
    Row{{"DCGM_FI_DEV_MEMORY_TEMP", MetricType::gauge, "Memory temperature (in C)."},
        [](const GpuView& v) { return whole(fast_value(v, &FastSample::memory_temperature)); }},
    Row{{"DCGM_FI_DEV_GPU_TEMP", MetricType::gauge, "GPU temperature (in C)."},
        [](const GpuView& v) { return whole(fast_value(v, &FastSample::gpu_temperature)); }},
    Row{{"DCGM_FI_DEV_POWER_USAGE", MetricType::gauge, "Power draw (in W)."},
        [](const GpuView& v) { return fast_value(v, &FastSample::power); }},
    Row{{"DCGM_FI_DEV_POWER_MGMT_LIMIT", MetricType::gauge,
         "Power management limit set now (in W)."},
        [](const GpuView& v) -> Value {
          if (!v.status || !v.status->power_limit) return std::nullopt;
          return v.status->power_limit->value();
        }},
    Row{{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", MetricType::counter,
         "Total energy consumption since the driver was loaded (in mJ)."},
        [](const GpuView& v) { return v.slow ? whole(of(v.slow->energy, 1000.0)) : std::nullopt; }},
    Row{{"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", MetricType::counter, "Total number of PCIe retries."},
        [](const GpuView& v) { return v.slow ? count(v.slow->pcie_replay) : std::nullopt; }},
    Row{{"DCGM_FI_DEV_GPU_UTIL", MetricType::gauge, "GPU utilization (in %)."},
        [](const GpuView& v) { return whole(fast_value(v, &FastSample::gpu_utilization, 100.0)); }},
    Row{{"DCGM_FI_DEV_MEM_COPY_UTIL", MetricType::gauge, "Memory utilization (in %)."},
        [](const GpuView& v) {
          return whole(fast_value(v, &FastSample::memory_utilization, 100.0));
        }},
    Row{{"DCGM_FI_DEV_XID_ERRORS", MetricType::gauge,
         "Value of the last Xid error since gpuclk serve started (0: none)."},
        [](const GpuView& v) -> Value {
          if (!v.xid_watched) return std::nullopt;
          return static_cast<double>(v.last_xid.value_or(0));
        }},
    Row{{"DCGM_FI_DEV_FB_FREE", MetricType::gauge, "Framebuffer memory free (in MiB)."},
        [](const GpuView& v) { return memory_mib(v, true); }},
    Row{{"DCGM_FI_DEV_FB_USED", MetricType::gauge, "Framebuffer memory used (in MiB)."},
        [](const GpuView& v) { return memory_mib(v, false); }},
    Row{{"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", MetricType::counter,
         "Total number of single-bit volatile ECC errors."},
        [](const GpuView& v) { return v.slow ? count(v.slow->ecc_corrected) : std::nullopt; }},
    Row{{"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", MetricType::counter,
         "Total number of double-bit volatile ECC errors."},
        [](const GpuView& v) { return v.slow ? count(v.slow->ecc_uncorrected) : std::nullopt; }},
    Row{{"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", MetricType::gauge,
         "NVLink data sent and received over all links (in MB/s)."},
        nvlink_throughput},
    Row{{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", MetricType::gauge,
         "Ratio of time the graphics engine is active."},
        [](const GpuView& v) { return gpm(v, &GpmActivity::graphics); }},
    Row{{"DCGM_FI_PROF_SM_ACTIVE", MetricType::gauge,
         "The ratio of cycles an SM has at least 1 warp assigned."},
        [](const GpuView& v) { return gpm(v, &GpmActivity::sm); }},
    Row{{"DCGM_FI_PROF_SM_OCCUPANCY", MetricType::gauge,
         "The ratio of number of warps resident on an SM."},
        [](const GpuView& v) { return gpm(v, &GpmActivity::sm_occupancy); }},
    Row{{"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", MetricType::gauge,
         "Ratio of cycles the tensor (HMMA) pipe is active."},
        [](const GpuView& v) { return gpm(v, &GpmActivity::tensor); }},
    Row{{"DCGM_FI_PROF_DRAM_ACTIVE", MetricType::gauge,
         "Ratio of cycles the device memory interface is active sending or receiving data."},
        [](const GpuView& v) { return gpm(v, &GpmActivity::dram); }},
    Row{{"DCGM_FI_PROF_PIPE_FP64_ACTIVE", MetricType::gauge,
         "Ratio of cycles the fp64 pipes are active."},
        [](const GpuView& v) { return gpm(v, &GpmActivity::fp64); }},
    Row{{"DCGM_FI_PROF_PIPE_FP32_ACTIVE", MetricType::gauge,
         "Ratio of cycles the fp32 pipes are active."},
        [](const GpuView& v) { return gpm(v, &GpmActivity::fp32); }},
    Row{{"DCGM_FI_PROF_PIPE_FP16_ACTIVE", MetricType::gauge,
         "Ratio of cycles the fp16 pipes are active."},
        [](const GpuView& v) { return gpm(v, &GpmActivity::fp16); }},
    Row{{"DCGM_FI_PROF_PCIE_TX_BYTES", MetricType::gauge,
         "The rate of data transmitted over the PCIe bus (in bytes per second)."},
        [](const GpuView& v) { return v.slow ? of(v.slow->pcie_tx) : std::nullopt; }},
    Row{{"DCGM_FI_PROF_PCIE_RX_BYTES", MetricType::gauge,
         "The rate of data received over the PCIe bus (in bytes per second)."},
        [](const GpuView& v) { return v.slow ? of(v.slow->pcie_rx) : std::nullopt; }},
};

constexpr auto kFamilies = [] {
  std::array<DcgmFamily, kRows.size()> families{};
  for (std::size_t i = 0; i < kRows.size(); ++i) families[i] = kRows[i].family;
  return families;
}();

bool watches_xid(const Service& service, std::size_t gpu) {
  for (auto kind : service.events_watched(gpu))
    if (kind == gpu::EventKind::xid) return true;
  return false;
}

// One GPU's labels, in dcgm-exporter's order; the optional ones only when known.
Labels gpu_labels(const GpuFacts& fact, std::string_view hostname, std::string_view driver,
                  const CompatOwner* owner) {
  const auto index = std::to_string(fact.key.index);
  Labels labels{{"gpu", index}, {"UUID", fact.key.uuid}};
  if (!fact.key.bus_id.empty()) labels.add("pci_bus_id", fact.key.bus_id);
  labels.add("device", "nvidia" + index);
  labels.add("modelName", fact.name);
  if (!hostname.empty()) labels.add("Hostname", hostname);
  if (!driver.empty()) labels.add("DCGM_FI_DRIVER_VERSION", driver);
  if (owner) {
    if (!owner->container.empty()) labels.add("container", owner->container);
    if (!owner->pod_namespace.empty()) labels.add("namespace", owner->pod_namespace);
    if (!owner->pod.empty()) labels.add("pod", owner->pod);
  }
  return labels;
}

}  // namespace

MetricsCompat parse_metrics_compat(std::string_view text) {
  if (text == "dcgm-exporter") return MetricsCompat::dcgm_exporter;
  throw bad_argument(fmt::format("bad --metrics-compat '{}': the valid value is dcgm-exporter",
                                 parse::quote(text)),
                     "give --metrics-compat dcgm-exporter (DCGM_FI_* series beside gpuclk's; "
                     "docs/exporter.md), or leave it out");
}

std::string dcgm_hostname() {
  if (const char* node = std::getenv("NODE_NAME"); node && *node) return node;
  std::array<char, HOST_NAME_MAX + 1> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) return {};
  return name.data();
}

std::span<const DcgmFamily> dcgm_families() { return kFamilies; }

void append_dcgm_compat(std::string& out, const Service& service,
                        const telemetry::Snapshot& snapshot, const NodeState* state,
                        std::string_view hostname, const std::vector<CompatOwner>& owners) {
  Families f;
  const auto& facts = service.facts();
  for (std::size_t i = 0; i < facts.size(); ++i) {
    GpuView v;
    v.fact = &facts[i];
    if (i < snapshot.gpus.size() && !snapshot.gpus[i].health.lost) {
      const auto& g = snapshot.gpus[i];
      v.fast = g.fast ? &*g.fast : nullptr;
      v.slow = g.slow ? &*g.slow : nullptr;
      v.previous_slow = g.previous_slow ? &*g.previous_slow : nullptr;
    }
    if (state && i < state->status.size() && state->status[i].unavailable_code == 0)
      v.status = &state->status[i];
    v.xid_watched = watches_xid(service, i);
    v.last_xid = service.last_xid(i);
    const Labels labels = gpu_labels(facts[i], hostname, service.driver_version(),
                                     i < owners.size() ? &owners[i] : nullptr);
    for (const auto& row : kRows) {
      const auto value = row.value(v);
      if (!value) continue;
      if (row.family.type == MetricType::counter)
        f.counter(row.family.name, row.family.help, labels, *value);
      else
        f.gauge(row.family.name, row.family.help, labels, *value);
    }
  }
  out += f.take();
}

}  // namespace gpuclk::serve
