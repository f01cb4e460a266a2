// Which of /metrics's series are shown: a default set within a budget of 40 series per GPU (the
// node-level series besides), with everything gpuclk's dashboard, alert rules, `gpuclk fleet` and
// doctor read, and groups of detail a site asks for with `gpuclk serve --metrics-detail LIST`
// (docs/exporter.md lists each family's group and count). One option with a list, in the
// `--metrics-*` family of `--metrics-compat`: node_exporter turns such groups on with a flag per
// collector (`--collector.NAME`), dcgm-exporter with a counters file (`-f`); gpuclk is one
// collector whose groups are named in one list.
#pragma once

#include <string>
#include <string_view>

namespace gpuclk::serve {

// The groups of detail (none by default).
struct MetricsDetail {
  // nvlink: every NVLink's own series (gpuclk_nvlink_*). By default the links are summed per GPU
  // (gpuclk_gpu_nvlink*), and a link has series of its own only while it is down or once its DL
  // error counters rose (metrics_nvlink.h).
  bool nvlink = false;
  // gpu: every per-GPU reading, limit and count beyond the default set: the clock event reasons
  // that do not throttle, the GPM engines beyond SM/tensor/DRAM, memory clock, power and
  // utilization, P-state, PCIe replays, read errors, the limits and settings nothing reads, the
  // findings per GPU, and the counts that are 0 (links down, a memory clock lock not set).
  bool gpu = false;
  // attribution: each GPU's energy split (idle, per process split, unattributed) and its process
  // count. The per job, pod, container and user series are node-level and always shown.
  bool attribution = false;

  bool operator==(const MetricsDetail&) const = default;
};

// "nvlink", "gpu", "attribution", a comma-separated list of them, "all" or "none". Throws Error
// (exit 2) naming the bad item and the valid ones.
MetricsDetail parse_metrics_detail(std::string_view list);

// The list as parse_metrics_detail takes it ("none" when empty).
std::string to_string(const MetricsDetail& detail);

}  // namespace gpuclk::serve
