// /metrics under dcgm-exporter's names (`gpuclk serve --metrics-compat dcgm-exporter[:SET]`): the
// DCGM_FI_* series of dcgm-exporter's default counters (its etc/default-counters.csv) that gpuclk
// reads, and the GPM ratios sites add from its DCP list, in dcgm-exporter's units (MHz, W, mJ,
// °C, %, MiB, ratios 0..1), metric types, HELP and labels, so dashboards and alerts written for
// dcgm-exporter keep working. Its default counters move between releases, so a set per release
// line: the current one's (4.8) and the older one's with the PCIe throughput counters (3). Appended
// after the gpuclk_* series, which stay as they are. Computed from what the service already holds
// (the sampler's snapshot, the static facts, the cached node state, the Xid events it received): no
// NVML call. docs/exporter.md lists every default counter, exported or not and why.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "serve/exposition.h"
#include "serve/service.h"

namespace gpuclk::serve {

// The names /metrics exports besides its own: none, or a set of dcgm-exporter's default counters.
enum class MetricsCompat {
  none,
  dcgm_exporter_4_8,  // dcgm-exporter 4.8.3-4.8.4: PCIe bytes, `hostname` (`dcgm-exporter`)
  dcgm_exporter_3,    // the 2.x-3.x files: PCIe throughput in KB, `Hostname`
};

// "dcgm-exporter" (the 4.8 set), "dcgm-exporter:4.8" or "dcgm-exporter:3". Throws Error (exit 2)
// naming the value and the valid ones.
MetricsCompat parse_metrics_compat(std::string_view text);

// Who holds a GPU, as dcgm-exporter labels it under Kubernetes (`pod`, `namespace`,
// `container`). An empty string is unknown: that label is left out, as dcgm-exporter leaves it.
struct CompatOwner {
  std::string pod;
  std::string pod_namespace;
  std::string container;
};

// The owners of the GPUs by position, asked for at each build of the text (on an HTTP worker
// thread); a shorter list (or none) leaves the rest unknown.
using CompatOwnerSource = std::function<std::vector<CompatOwner>()>;

// dcgm-exporter's `Hostname` label: $NODE_NAME when set (as dcgm-exporter reads it under
// Kubernetes), else the host's name; "" when neither is known (no label then).
std::string dcgm_hostname();

// One series family of the compat output: its DCGM name, type and HELP.
struct DcgmFamily {
  std::string_view name;
  MetricType type;
  std::string_view help;
};

// Every family a set's output may hold, in the order it writes them.
std::span<const DcgmFamily> dcgm_families(MetricsCompat compat);

// Appends the DCGM_FI_* series of every GPU of `service` to `out`, from `snapshot` and `state`
// (null: not refreshed yet; the series that need it are left out). `owners` by GPU position.
// Each GPU's labels: gpu (index), UUID, pci_bus_id, device ("nvidia<index>"), modelName,
// hostname (Hostname in the 3 set), DCGM_FI_DRIVER_VERSION (not in the 3 set), container,
// namespace, pod (the last five when known).
void append_dcgm_compat(std::string& out, MetricsCompat compat, const Service& service,
                        const telemetry::Snapshot& snapshot, const NodeState* state,
                        std::string_view hostname, const std::vector<CompatOwner>& owners);

}  // namespace gpuclk::serve
