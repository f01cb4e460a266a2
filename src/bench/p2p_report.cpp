#include "bench/p2p_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuclk::bench::p2p {

namespace {

std::string percent(double fraction) { return fmt::format("{:.0f}%", fraction * 100); }

bool below(const gpu::PcieLink& running, const gpu::PcieLink& max) {
  return running.generation < max.generation || running.width < max.width;
}

FigureReport figure_report(const Measured& m, const std::optional<Peak>& link_peak) {
  FigureReport f;
  f.figure = m.figure;
  f.value = m.summary.median;
  f.summary = m.summary;
  f.samples = m.samples;
  f.verified = m.verified;
  const FigureInfo& fi = info(m.figure);
  if (link_peak && !fi.latency) {
    Peak p = *link_peak;
    if (fi.bidirectional) {
      p.bytes_per_second *= 2;
      p.basis = "2 directions x " + p.basis;
    }
    f.peak = p;
    if (p.bytes_per_second > 0) f.fraction_of_peak = m.summary.median / p.bytes_per_second;
  }
  return f;
}

void add_check_verdicts(const std::vector<FigureReport>& figures, std::vector<std::string>& out) {
  for (const FigureReport& f : figures) {
    if (f.verified && !*f.verified) {
      out.push_back(
          fmt::format("{}: the copy's destination differs from its source (data "
                      "corrupted on the way: gpuclk doctor)",
                      info(f.figure).label));
    }
  }
}

// The generic verdict, only when no cause was named: the figures short of peak.
void add_short_verdicts(const std::vector<FigureReport>& figures, std::vector<std::string>& out) {
  if (!out.empty()) return;
  for (const FigureReport& f : figures) {
    if (f.fraction_of_peak && *f.fraction_of_peak < kShortOfPeak) {
      out.push_back(
          fmt::format("{} reaches {} of its peak and gpuclk sees no cause (other "
                      "traffic on the link, or another process on the GPU?)",
                      info(f.figure).label, percent(*f.fraction_of_peak)));
    }
  }
}

void add_pcie_verdict(const GpuLinks& g, std::vector<std::string>& out) {
  const auto running = g.pcie_running();
  if (!running || !g.pcie_max || !below(*running, *g.pcie_max)) return;
  out.push_back(fmt::format("GPU {}'s PCIe link runs {}{}, below the {} it and its slot can reach",
                            g.index, pcie_text(*running), g.pcie_loaded ? " under load" : "",
                            pcie_text(*g.pcie_max)));
}

void add_nvlink_down_verdict(const GpuLinks& g, std::vector<std::string>& out) {
  if (g.nvlinks_down == 0) return;
  out.push_back(fmt::format("GPU {} has {} of its {} NVLinks down: the peak counts the {} up",
                            g.index, g.nvlinks_down, g.nvlinks, g.nvlinks - g.nvlinks_down));
}

}  // namespace

std::optional<double> pcie_lane_bytes_per_second(unsigned generation) {
  switch (generation) {
    case 1:
      return 0.25e9;
    case 2:
      return 0.5e9;
    case 3:
      return 0.985e9;
    case 4:
      return 1.969e9;
    case 5:
      return 3.938e9;
    case 6:
      return 7.563e9;
    default:
      return std::nullopt;
  }
}

std::string pcie_text(const gpu::PcieLink& link) {
  return fmt::format("Gen{} x{}", link.generation, link.width);
}

std::optional<Peak> pcie_peak(const gpu::PcieLink& link) {
  const auto lane = pcie_lane_bytes_per_second(link.generation);
  if (!lane || link.width == 0) return std::nullopt;
  return Peak{Peak::Link::pcie, *lane * link.width,
              fmt::format("PCIe {}: {} x {:.3f} GB/s", pcie_text(link), link.width, *lane * 1e-9)};
}

Peak nvlink_peak(unsigned links, double bytes_per_second_per_link) {
  return Peak{Peak::Link::nvlink, links * bytes_per_second_per_link,
              fmt::format("{} NVLink{} x {:.3f} GB/s", links, links == 1 ? "" : "s",
                          bytes_per_second_per_link * 1e-9)};
}

std::optional<Peak> peer_peak(const GpuLinks& a, const GpuLinks& b, const PairLinks* direct,
                              bool peer_access) {
  if (peer_access && direct && direct->links > 0 && direct->bytes_per_second_per_link > 0) {
    return nvlink_peak(direct->links, direct->bytes_per_second_per_link);
  }
  if (peer_access && a.nvswitch_bytes_per_second && b.nvswitch_bytes_per_second) {
    const GpuLinks& slower = *a.nvswitch_bytes_per_second <= *b.nvswitch_bytes_per_second ? a : b;
    Peak p = nvlink_peak(slower.nvswitch_links, slower.nvlink_bytes_per_second_per_link);
    p.bytes_per_second = *slower.nvswitch_bytes_per_second;
    p.basis += fmt::format(" through NVSwitch (GPU {})", slower.index);
    return p;
  }
  const auto pa = a.pcie_running() ? pcie_peak(*a.pcie_running()) : std::nullopt;
  const auto pb = b.pcie_running() ? pcie_peak(*b.pcie_running()) : std::nullopt;
  if (!pa || !pb) return pa ? pa : pb;
  Peak p = pa->bytes_per_second <= pb->bytes_per_second ? *pa : *pb;
  p.basis +=
      fmt::format(" (GPU {})", pa->bytes_per_second <= pb->bytes_per_second ? a.index : b.index);
  return p;
}

std::optional<Peak> host_peak(const GpuLinks& gpu) {
  const auto running = gpu.pcie_running();
  return running ? pcie_peak(*running) : std::nullopt;
}

PairReport make_pair_report(const PeerResult& result, const GpuLinks& a, const GpuLinks& b,
                            const PairLinks* direct, std::string path) {
  PairReport r;
  r.gpu = a.index;
  r.peer = b.index;
  r.cuda_device = result.device;
  r.cuda_peer = result.peer;
  r.peer_access = result.peer_access;
  r.path = std::move(path);
  const std::optional<Peak> link = peer_peak(a, b, direct, result.peer_access);
  for (const FigureInfo& fi : all_figures()) {
    if (!fi.peer) continue;
    auto it = std::find_if(result.figures.begin(), result.figures.end(),
                           [&](const Measured& m) { return m.figure == fi.figure; });
    if (it != result.figures.end()) {
      r.figures.push_back(figure_report(*it, link));
      continue;
    }
    FigureReport missing;
    missing.figure = fi.figure;
    missing.skipped = result.peer_access ? "not measured" : "needs peer access";
    r.figures.push_back(std::move(missing));
  }

  if (!result.peer_access) {
    r.verdicts.push_back(fmt::format(
        "peer access between GPU {} and GPU {} is not possible: the driver stages copies through "
        "host memory, and no kernel can reach the other's memory (no SM figures, no latency)",
        a.index, b.index));
  }
  add_check_verdicts(r.figures, r.verdicts);
  add_nvlink_down_verdict(a, r.verdicts);
  add_nvlink_down_verdict(b, r.verdicts);
  const bool over_nvlink = link && link->link == Peak::Link::nvlink;
  if (!over_nvlink) {
    if (result.peer_access) {
      r.verdicts.push_back(
          fmt::format("no NVLink between GPU {} and GPU {}: peer traffic crosses PCIe{}", a.index,
                      b.index, r.path.empty() ? "" : " (" + r.path + ")"));
    }
    add_pcie_verdict(a, r.verdicts);
    add_pcie_verdict(b, r.verdicts);
  }
  add_short_verdicts(r.figures, r.verdicts);
  return r;
}

HostReport make_host_report(const HostResult& result, const GpuLinks& gpu, const HostReport* local,
                            std::size_t host_numa_nodes) {
  HostReport r;
  r.gpu = gpu.index;
  r.cuda_device = result.device;
  r.numa_node = result.numa_node;
  r.gpu_numa_node = gpu.numa_node;
  r.local = !result.numa_node || !gpu.numa_node || *result.numa_node == *gpu.numa_node;
  const std::optional<Peak> link = host_peak(gpu);
  for (const Measured& m : result.figures) {
    // The local copy stays on the device: no link peak applies to it.
    r.figures.push_back(figure_report(m, m.figure == Figure::local_copy ? std::nullopt : link));
  }

  add_check_verdicts(r.figures, r.verdicts);
  add_pcie_verdict(gpu, r.verdicts);
  if (!r.local) {
    std::string cost;
    auto value_of = [](const HostReport& h, Figure f) -> std::optional<double> {
      for (const FigureReport& x : h.figures)
        if (x.figure == f) return x.value;
      return std::nullopt;
    };
    if (local) {
      for (Figure f : {Figure::host_to_device, Figure::device_to_host}) {
        const auto here = value_of(r, f), there = value_of(*local, f);
        if (!here || !there || *there <= 0) continue;
        cost += fmt::format("{}{} {}", cost.empty() ? ": " : ", ", info(f).label,
                            *here < *there ? percent(1 - *here / *there) + " slower"
                                           : percent(*here / *there - 1) + " faster");
      }
      if (!cost.empty()) cost += " than from its own node";
    }
    r.verdicts.push_back(
        fmt::format("wrong NUMA node: host memory on node {}, GPU {} is attached "
                    "to node {}{}",
                    *r.numa_node, gpu.index, *gpu.numa_node, cost));
  } else if (!result.numa_node && host_numa_nodes > 1) {
    r.verdicts.push_back(fmt::format(
        "GPU {}'s NUMA node is unknown: host memory went where the OS put it, maybe a remote "
        "node (try --numa N)",
        gpu.index));
  }
  add_short_verdicts(r.figures, r.verdicts);
  return r;
}

}  // namespace gpuclk::bench::p2p
