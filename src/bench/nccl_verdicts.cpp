#include "bench/nccl_verdicts.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace gpuclk::bench::nccl {
namespace {

namespace tn = telemetry::nccl;

std::string label(Operation op) { return std::string(tn::info(op).label); }
std::string percent(double fraction) { return fmt::format("{:.0f}%", fraction * 100); }
std::string gbs(double bytes_per_second) { return fmt::format("{:.2f}", bytes_per_second * 1e-9); }

bool below(const gpu::PcieLink& running, const gpu::PcieLink& max) {
  return running.generation < max.generation || running.width < max.width;
}

void wrong_data(const NcclReport& r, std::vector<std::string>& out) {
  for (const OperationReport& o : r.operations) {
    if (o.wrong == 0) continue;
    out.push_back(fmt::format(
        "{}: {} elements wrong: do not trust these figures (NCCL or the GPUs corrupted data on "
        "the way: gpuclk doctor)",
        label(o.operation), o.wrong));
  }
  for (const PairReport& p : r.pairs) {
    if (p.result.wrong.value_or(0) == 0) continue;
    out.push_back(fmt::format("send/recv GPU {} -> GPU {}: {} elements wrong: do not trust it",
                              p.gpu, p.peer, *p.result.wrong));
  }
}

void settings(const NcclReport& r, std::vector<std::string>& out) {
  for (const tn::SettingEffect& s : r.settings) {
    out.push_back(fmt::format("{} is set in the environment NCCL ran with{}", tn::describe(s),
                              s.limits ? "" : ": unset it to let NCCL choose"));
  }
}

void links_down_and_access(const NcclReport& r, std::vector<std::string>& out) {
  for (const p2p::GpuLinks& g : r.topology.gpus) {
    if (g.nvlinks_down == 0) continue;
    out.push_back(fmt::format("GPU {} has {} of its {} NVLinks down: the peak counts the {} up",
                              g.index, g.nvlinks_down, g.nvlinks, g.nvlinks - g.nvlinks_down));
  }
  const auto& gpus = r.topology.gpus;
  for (std::size_t a = 0; a < r.peer_access.size() && a < gpus.size(); ++a) {
    for (std::size_t b = a + 1; b < r.peer_access[a].size() && b < gpus.size(); ++b) {
      if (r.peer_access[a][b] && r.peer_access[b][a]) continue;
      out.push_back(fmt::format(
          "peer access between GPU {} and GPU {} is not possible: NCCL stages their traffic "
          "through host memory",
          gpus[a].index, gpus[b].index));
    }
  }
}

// Over PCIe: which GPUs lack NVLink, links below their maximum, GPUs on different NUMA nodes.
void pcie_causes(const NcclReport& r, std::vector<std::string>& out) {
  const auto& gpus = r.topology.gpus;
  std::string without;
  for (std::size_t a = 0; a < gpus.size() && without.empty(); ++a) {
    for (std::size_t b = a + 1; b < gpus.size(); ++b) {
      if (!direct_link(r.topology, gpus[a].index, gpus[b].index) && !gpus[a].nvswitch_links) {
        without = fmt::format("GPU {} and GPU {}", gpus[a].index, gpus[b].index);
        break;
      }
    }
  }
  // Without peer access NCCL stages through host memory whatever the links: that verdict
  // (links_down_and_access) says so; NVLink's absence is the cause only with access.
  const bool access = std::all_of(r.peer_access.begin(), r.peer_access.end(), [](const auto& row) {
    return std::all_of(row.begin(), row.end(), [](bool b) { return b; });
  });
  if (access) {
    out.push_back(r.topology.nvlink_pairs.empty()
                      ? std::string("no NVLink between the GPUs: the collectives cross PCIe")
                      : fmt::format("NVLink does not join every GPU ({} have none): the "
                                    "collectives cross PCIe",
                                    without.empty() ? "some" : without));
  }
  for (const p2p::GpuLinks& g : gpus) {
    const auto running = g.pcie_running();
    if (!running || !g.pcie_max || !below(*running, *g.pcie_max)) continue;
    out.push_back(fmt::format(
        "GPU {}'s PCIe link runs {}{}, below the {} it and its slot can reach", g.index,
        p2p::pcie_text(*running), g.pcie_loaded ? " under load" : "", p2p::pcie_text(*g.pcie_max)));
  }
  std::map<int, unsigned> first_on_node;
  for (const p2p::GpuLinks& g : gpus) {
    if (g.numa_node) first_on_node.try_emplace(*g.numa_node, g.index);
  }
  if (first_on_node.size() > 1) {
    std::string nodes;
    for (const auto& [node, gpu] : first_on_node)
      nodes += fmt::format("{}GPU {} on node {}", nodes.empty() ? "" : ", ", gpu, node);
    out.push_back(
        fmt::format("the GPUs hang off different NUMA nodes ({}): their traffic crosses the CPU "
                    "interconnect, slower than their PCIe links",
                    nodes));
  }
}

// Clocks held by heat, a power brake or the power cap while an operation ran (20 % or more).
void throttled(const NcclReport& r, std::vector<std::string>& out) {
  static const std::map<std::string, std::string> meaning = {
      {"sw_thermal_slowdown", "thermal slowdown"},
      {"hw_thermal_slowdown", "HW thermal slowdown"},
      {"hw_slowdown", "HW slowdown"},
      {"hw_power_brake_slowdown", "HW power brake"},
      {"sw_power_cap", "the power cap"}};
  std::set<std::pair<unsigned, std::string>> said;
  for (const OperationReport& o : r.operations) {
    for (const GpuTelemetry& t : o.telemetry) {
      for (const auto& [key, share] : t.reasons) {
        auto m = meaning.find(key);
        if (m == meaning.end() || share < 0.2 || !said.insert({t.gpu, key}).second) continue;
        out.push_back(fmt::format(
            "GPU {} was held by {} {} of {}'s run{}", t.gpu, m->second, percent(share),
            label(o.operation),
            t.sm_clock_mhz ? fmt::format(" (SM clock {:.0f} MHz)", *t.sm_clock_mhz) : ""));
      }
    }
  }
}

void beyond_peak(const NcclReport& r, std::vector<std::string>& out) {
  for (const OperationReport& o : r.operations) {
    if (!o.fraction_of_peak || *o.fraction_of_peak <= 1.05 || !o.peak) continue;
    const bool fabric = std::all_of(r.topology.gpus.begin(), r.topology.gpus.end(),
                                    [](const p2p::GpuLinks& g) { return g.nvswitch_links > 0; });
    out.push_back(
        fabric && o.operation == Operation::all_reduce
            ? fmt::format("{} passes the links' peak ({}): NVLink SHARP (NVLS) reduces in the "
                          "NVSwitches, so its bus bandwidth can exceed the link rate",
                          label(o.operation), percent(*o.fraction_of_peak))
            : fmt::format("{} passes the peak gpuclk computed ({} of {}): the links NVML "
                          "reports may be wrong",
                          label(o.operation), percent(*o.fraction_of_peak), o.peak->basis));
  }
}

void latency_bound(const NcclReport& r, std::vector<std::string>& out) {
  for (const OperationReport& o : r.operations) {
    if (o.sizes.empty() || o.judged_bytes >= kBandwidthBytes || !o.peak) continue;
    out.push_back(fmt::format(
        "the largest size ({}) is latency-bound: no verdict on bandwidth (give --sizes up to 1G "
        "or more for one)",
        size_text(o.judged_bytes)));
    return;
  }
}

void pairs(const NcclReport& r, std::vector<std::string>& out) {
  if (!r.worst_pair || !r.best_pair || r.pairs.size() < 2) return;
  const PairReport& w = r.pairs[*r.worst_pair];
  const PairReport& b = r.pairs[*r.best_pair];
  const auto share = [](const PairReport& p) {
    return p.fraction_of_peak ? fmt::format(", {} of {} GB/s ({})", percent(*p.fraction_of_peak),
                                            gbs(p.peak->bytes_per_second), p.peak->basis)
                              : std::string();
  };
  std::string line = fmt::format(
      "worst send/recv pair: GPU {} -> GPU {}, {} GB/s{}; best: GPU {} -> GPU {}, {} GB/s{}", w.gpu,
      w.peer, gbs(w.result.bandwidth), share(w), b.gpu, b.peer, gbs(b.result.bandwidth), share(b));
  const double ws = w.fraction_of_peak.value_or(w.result.bandwidth);
  const double bs = b.fraction_of_peak.value_or(b.result.bandwidth);
  if (bs > 0 && ws < kWorstPairShortOfBest * bs)
    line += ": look at that pair's links (gpuclk topo, gpuclk bench p2p)";
  out.push_back(line);
}

}  // namespace

std::string shortfall_verdict(const OperationReport& o) {
  if (!o.fraction_of_peak || !o.peak || o.judged_bytes < kBandwidthBytes ||
      *o.fraction_of_peak >= kCollectiveShortOfPeak)
    return {};
  return fmt::format(
      "{} reaches {} of its peak at {} ({} of {} GB/s, {}) and gpuclk sees no cause (another "
      "process on these GPUs or their links?)",
      label(o.operation), percent(*o.fraction_of_peak), size_text(o.judged_bytes),
      gbs(o.judged_bus_bandwidth), gbs(o.peak->bytes_per_second), o.peak->basis);
}

std::vector<std::string> report_notes(const NcclReport& r) {
  std::vector<std::string> notes;
  if (r.topology.gpus.size() == 1) {
    notes.push_back(fmt::format(
        "one GPU (GPU {}): NCCL runs with one rank, so every operation is a copy within the GPU "
        "(in place: nothing to do) and no link is measured; by nccl-tests' definition bus "
        "bandwidth is 0 for all-reduce, all-gather, reduce-scatter and all-to-all (their factors "
        "have n - 1 = 0)",
        r.topology.gpus.front().index));
  }
  const bool has_all_to_all =
      std::any_of(r.operations.begin(), r.operations.end(),
                  [](const OperationReport& o) { return o.operation == Operation::all_to_all; });
  if (has_all_to_all && !r.native_all_to_all) {
    notes.push_back(
        "all-to-all ran as grouped ncclSend/ncclRecv (this NCCL has no ncclAlltoAll, which came "
        "in 2.28), as nccl-tests does with such an NCCL");
  }
  return notes;
}

std::vector<std::string> report_verdicts(const NcclReport& r) {
  std::vector<std::string> out;
  wrong_data(r, out);
  const std::size_t before_causes = out.size();
  settings(r, out);
  links_down_and_access(r, out);
  const bool over_pcie = std::any_of(r.operations.begin(), r.operations.end(), [](const auto& o) {
    return o.peak && o.peak->link == p2p::Peak::Link::pcie;
  });
  if (over_pcie && r.topology.gpus.size() > 1) pcie_causes(r, out);
  throttled(r, out);
  const bool cause_named = out.size() > before_causes;
  beyond_peak(r, out);
  if (!cause_named) {
    for (const OperationReport& o : r.operations) {
      if (std::string s = shortfall_verdict(o); !s.empty()) out.push_back(std::move(s));
    }
  }
  latency_bound(r, out);
  pairs(r, out);
  return out;
}

}  // namespace gpuclk::bench::nccl
