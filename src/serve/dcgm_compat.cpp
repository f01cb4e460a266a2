#include "serve/dcgm_compat.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <span>

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
  const gpu::StatusSnapshot* status = nullptr;  // null: no state yet, or the GPU is unavailable
  std::optional<std::uint64_t> last_xid;        // since gpuclk serve started
  bool xid_watched = false;                     // Xid events of this GPU reach the service
};

using Value = std::optional<double>;

// The dcgm-exporter releases a row is served for (a bit each).
enum Release : unsigned { k48 = 1, k3 = 2, kBoth = k48 | k3 };

// A family, how a GPU's value is computed (nullopt: no series for that GPU), and the releases
// whose set holds it.
struct Row {
  DcgmFamily family;
  Value (*value)(const GpuView&) = nullptr;
  unsigned releases = kBoth;
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

// NVLink data sent and received by all links of the GPU between the last two reads of the links'
// data counters (every slow sample while a dmon streams them, else every minute), in MB/s (10^6
// bytes): the newest default-counters.csv's gauge. None without NVLink counters, before the
// second read, or when a counter went back (the driver was reloaded).
Value nvlink_throughput(const GpuView& v) {
  if (!v.slow || !v.slow->nvlink_rx_rate || !v.slow->nvlink_tx_rate) return std::nullopt;
  return (v.slow->nvlink_tx_rate->value() + v.slow->nvlink_rx_rate->value()) / 1e6;
}

using telemetry::FastSample;
using telemetry::GpmActivity;

// Each DCGM field's value for a GPU, in dcgm-exporter's unit; the sets below name them.
Value sm_clock(const GpuView& v) { return whole(fast_value(v, &FastSample::sm_clock)); }
Value memory_clock(const GpuView& v) { return whole(fast_value(v, &FastSample::memory_clock)); }
Value memory_temp(const GpuView& v) {
  return whole(fast_value(v, &FastSample::memory_temperature));
}
Value gpu_temp(const GpuView& v) { return whole(fast_value(v, &FastSample::gpu_temperature)); }
Value power_usage(const GpuView& v) { return fast_value(v, &FastSample::power); }
Value power_limit(const GpuView& v) {
  if (!v.status || !v.status->power_limit) return std::nullopt;
  return v.status->power_limit->value();
}
Value energy_mj(const GpuView& v) {
  return v.slow ? whole(of(v.slow->energy, 1000.0)) : std::nullopt;
}
Value pcie_replay(const GpuView& v) { return v.slow ? count(v.slow->pcie_replay) : std::nullopt; }
Value gpu_util(const GpuView& v) {
  return whole(fast_value(v, &FastSample::gpu_utilization, 100.0));
}
Value mem_copy_util(const GpuView& v) {
  return whole(fast_value(v, &FastSample::memory_utilization, 100.0));
}
// The code of the GPU's last Xid since gpuclk serve started, 0 before the first (as releases
// before 4.5.3-4.8.2 wrote it: NVIDIA/dcgm-exporter#700); none where Xid events are not watched.
Value last_xid(const GpuView& v) {
  if (!v.xid_watched) return std::nullopt;
  return static_cast<double>(v.last_xid.value_or(0));
}
Value fb_free(const GpuView& v) { return memory_mib(v, true); }
Value fb_used(const GpuView& v) { return memory_mib(v, false); }
Value ecc_sbe(const GpuView& v) { return v.slow ? count(v.slow->ecc_corrected) : std::nullopt; }
Value ecc_dbe(const GpuView& v) { return v.slow ? count(v.slow->ecc_uncorrected) : std::nullopt; }
template <std::optional<units::Ratio> GpmActivity::*Engine>
Value gpm_ratio(const GpuView& v) {
  return gpm(v, Engine);
}
// PCIe throughput (read only while a dmon streams it): bytes per second, or NVML's KB/s whole.
template <bool Tx, bool Kilobytes>
Value pcie(const GpuView& v) {
  if (!v.slow) return std::nullopt;
  const auto& rate = Tx ? v.slow->pcie_tx : v.slow->pcie_rx;
  return Kilobytes ? whole(of(rate, 1.0 / 1024)) : of(rate);
}

// Every row of both sets, each set's rows in its own order:
// - dcgm-exporter 4.8 (4.8.3, 4.8.4): etc/default-counters.csv's rows gpuclk serves, with its
//   types and HELP (4.8.4's file), and the rows sites commonly enable from it
//   (POWER_MGMT_LIMIT, the ECC totals, the DCP ratios beyond its three);
// - the older default counters (dcgm-exporter 2.x to 3.3): the PCIe throughput counters in KB
//   that DCGM 4.7 removed, the energy "since boot", no POWER_MGMT_LIMIT or PCIe bytes rows, and
//   the NVLink total left out (a counter of unstated unit there); the ECC totals and the DCP
//   ratios sites enable, with 4.8's HELP.
// docs/exporter.md says where each was read.
constexpr Row kRows[] = {
    {{"DCGM_FI_DEV_SM_CLOCK", MetricType::gauge, "SM clock frequency (in MHz)."}, sm_clock},
    {{"DCGM_FI_DEV_MEM_CLOCK", MetricType::gauge, "Memory clock frequency (in MHz)."},
     memory_clock},
    {{"DCGM_FI_DEV_MEMORY_TEMP", MetricType::gauge, "Memory temperature (in C)."}, memory_temp},
    {{"DCGM_FI_DEV_GPU_TEMP", MetricType::gauge, "GPU temperature (in C)."}, gpu_temp},
    {{"DCGM_FI_DEV_POWER_USAGE", MetricType::gauge, "Power draw (in W)."}, power_usage},
    {{"DCGM_FI_DEV_POWER_MGMT_LIMIT", MetricType::gauge,
      "Configured power management limit (in W)."},
     power_limit,
     k48},
    {{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", MetricType::counter,
      "Total energy consumption since the driver was last reloaded (in mJ)."},
     energy_mj,
     k48},
    {{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", MetricType::counter,
      "Total energy consumption since boot (in mJ)."},
     energy_mj,
     k3},
    {{"DCGM_FI_DEV_PCIE_TX_THROUGHPUT", MetricType::counter,
      "Total number of bytes transmitted through PCIe TX (in KB) via NVML."},
     pcie<true, true>,
     k3},
    {{"DCGM_FI_DEV_PCIE_RX_THROUGHPUT", MetricType::counter,
      "Total number of bytes received through PCIe RX (in KB) via NVML."},
     pcie<false, true>,
     k3},
    {{"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", MetricType::counter, "Total number of PCIe retries."},
     pcie_replay},
    {{"DCGM_FI_DEV_GPU_UTIL", MetricType::gauge, "GPU utilization (in %)."}, gpu_util},
    {{"DCGM_FI_DEV_MEM_COPY_UTIL", MetricType::gauge, "Memory utilization (in %)."}, mem_copy_util},
    {{"DCGM_FI_DEV_XID_ERRORS", MetricType::gauge, "Value of the last XID error encountered."},
     last_xid},
    {{"DCGM_FI_DEV_FB_FREE", MetricType::gauge, "Framebuffer memory free (in MiB)."}, fb_free},
    {{"DCGM_FI_DEV_FB_USED", MetricType::gauge, "Framebuffer memory used (in MiB)."}, fb_used},
    {{"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", MetricType::counter,
      "Total number of single-bit volatile ECC errors."},
     ecc_sbe},
    {{"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", MetricType::counter,
      "Total number of double-bit volatile ECC errors."},
     ecc_dbe},
    {{"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", MetricType::gauge,
      "Aggregate NVLink throughput across all lanes (in MB/s)."},
     nvlink_throughput,
     k48},
    {{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", MetricType::gauge,
      "Ratio of time the graphics engine is active."},
     gpm_ratio<&GpmActivity::graphics>},
    {{"DCGM_FI_PROF_SM_ACTIVE", MetricType::gauge,
      "The ratio of cycles an SM has at least 1 warp assigned."},
     gpm_ratio<&GpmActivity::sm>},
    {{"DCGM_FI_PROF_SM_OCCUPANCY", MetricType::gauge,
      "The ratio of number of warps resident on an SM."},
     gpm_ratio<&GpmActivity::sm_occupancy>},
    {{"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", MetricType::gauge,
      "Ratio of cycles the tensor (HMMA) pipe is active."},
     gpm_ratio<&GpmActivity::tensor>},
    {{"DCGM_FI_PROF_DRAM_ACTIVE", MetricType::gauge,
      "Ratio of cycles the device memory interface is active sending or receiving data."},
     gpm_ratio<&GpmActivity::dram>},
    {{"DCGM_FI_PROF_PIPE_FP64_ACTIVE", MetricType::gauge,
      "Ratio of cycles the fp64 pipes are active."},
     gpm_ratio<&GpmActivity::fp64>},
    {{"DCGM_FI_PROF_PIPE_FP32_ACTIVE", MetricType::gauge,
      "Ratio of cycles the fp32 pipes are active."},
     gpm_ratio<&GpmActivity::fp32>},
    {{"DCGM_FI_PROF_PIPE_FP16_ACTIVE", MetricType::gauge,
      "Ratio of cycles the fp16 pipes are active."},
     gpm_ratio<&GpmActivity::fp16>},
    {{"DCGM_FI_PROF_PCIE_TX_BYTES", MetricType::gauge,
      "The rate of data transmitted over the PCIe bus - including both protocol headers and "
      "data payloads - in bytes per second."},
     pcie<true, false>,
     k48},
    {{"DCGM_FI_PROF_PCIE_RX_BYTES", MetricType::gauge,
      "The rate of data received over the PCIe bus - including both protocol headers and data "
      "payloads - in bytes per second."},
     pcie<false, false>,
     k48},
};

// The rows of one release, in kRows's order.
template <Release R>
constexpr auto rows_of() {
  constexpr auto n = static_cast<std::size_t>(std::count_if(
      std::begin(kRows), std::end(kRows), [](const Row& r) { return r.releases & R; }));
  std::array<Row, n> rows{};
  std::copy_if(std::begin(kRows), std::end(kRows), rows.begin(),
               [](const Row& r) { return r.releases & R; });
  return rows;
}
constexpr auto kRows48 = rows_of<k48>();
constexpr auto kRows3 = rows_of<k3>();

// One set: its rows and its labels' spelling.
struct CompatSet {
  std::span<const Row> rows;
  std::string_view host_label;  // 4.8.3 renamed Hostname to hostname (NVIDIA/dcgm-exporter#655)
  bool driver_label;            // the file's DCGM_FI_DRIVER_VERSION label row
};

template <std::size_t N>
constexpr auto families_of(const std::array<Row, N>& rows) {
  std::array<DcgmFamily, N> families{};
  for (std::size_t i = 0; i < N; ++i) families[i] = rows[i].family;
  return families;
}
constexpr auto kFamilies48 = families_of(kRows48);
constexpr auto kFamilies3 = families_of(kRows3);

CompatSet set_of(MetricsCompat compat) {
  if (compat == MetricsCompat::dcgm_exporter_3) return {kRows3, "Hostname", false};
  return {kRows48, "hostname", true};
}

bool watches_xid(const Service& service, std::size_t gpu) {
  for (auto kind : service.events_watched(gpu))
    if (kind == gpu::EventKind::xid) return true;
  return false;
}

// One GPU's labels, in dcgm-exporter's order; the optional ones only when known.
Labels gpu_labels(const CompatSet& set, const GpuFacts& fact, std::string_view hostname,
                  std::string_view driver, const CompatOwner* owner) {
  const auto index = std::to_string(fact.key.index);
  Labels labels{{"gpu", index}, {"UUID", fact.key.uuid}};
  if (!fact.key.bus_id.empty()) labels.add("pci_bus_id", fact.key.bus_id);
  labels.add("device", "nvidia" + index);
  labels.add("modelName", fact.name);
  if (!hostname.empty()) labels.add(set.host_label, hostname);
  if (!driver.empty() && set.driver_label) labels.add("DCGM_FI_DRIVER_VERSION", driver);
  if (owner) {
    if (!owner->container.empty()) labels.add("container", owner->container);
    if (!owner->pod_namespace.empty()) labels.add("namespace", owner->pod_namespace);
    if (!owner->pod.empty()) labels.add("pod", owner->pod);
  }
  return labels;
}

}  // namespace

MetricsCompat parse_metrics_compat(std::string_view text) {
  if (text == "dcgm-exporter" || text == "dcgm-exporter:4.8")
    return MetricsCompat::dcgm_exporter_4_8;
  if (text == "dcgm-exporter:3") return MetricsCompat::dcgm_exporter_3;
  throw bad_argument(
      fmt::format("bad --metrics-compat '{}': the valid values are dcgm-exporter (its 4.8 "
                  "release's default counters), dcgm-exporter:4.8 and dcgm-exporter:3",
                  parse::quote(text)),
      "give --metrics-compat dcgm-exporter (DCGM_FI_* series beside gpuclk's; docs/exporter.md "
      "says which releases each set matches), or leave it out");
}

std::string dcgm_hostname() {
  if (const char* node = std::getenv("NODE_NAME"); node && *node) return node;
  std::array<char, HOST_NAME_MAX + 1> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) return {};
  return name.data();
}

std::span<const DcgmFamily> dcgm_families(MetricsCompat compat) {
  if (compat == MetricsCompat::dcgm_exporter_3) return kFamilies3;
  return kFamilies48;
}

void append_dcgm_compat(std::string& out, MetricsCompat compat, const Service& service,
                        const telemetry::Snapshot& snapshot, const NodeState* state,
                        std::string_view hostname, const std::vector<CompatOwner>& owners) {
  const CompatSet set = set_of(compat);
  Families f;
  const auto& facts = service.facts();
  for (std::size_t i = 0; i < facts.size(); ++i) {
    GpuView v;
    v.fact = &facts[i];
    if (i < snapshot.gpus.size() && !snapshot.gpus[i].health.lost) {
      const auto& g = snapshot.gpus[i];
      v.fast = g.fast ? &*g.fast : nullptr;
      v.slow = g.slow ? &*g.slow : nullptr;
    }
    if (state && i < state->status.size() && state->status[i].unavailable_code == 0)
      v.status = &state->status[i];
    v.xid_watched = watches_xid(service, i);
    v.last_xid = service.last_xid(i);
    const Labels labels = gpu_labels(set, facts[i], hostname, service.driver_version(),
                                     i < owners.size() ? &owners[i] : nullptr);
    for (const auto& row : set.rows) {
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
