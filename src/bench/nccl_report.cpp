#include "bench/nccl_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "bench/nccl_verdicts.h"
#include "gpu/clock_reasons.h"
#include "telemetry/field_table.h"

namespace gpuclk::bench::nccl {
namespace {

using p2p::Peak;

bool all_peer_access(const std::vector<std::vector<bool>>& access) {
  for (std::size_t a = 0; a < access.size(); ++a)
    for (std::size_t b = 0; b < access[a].size(); ++b)
      if (a != b && !access[a][b]) return false;
  return true;
}

bool can_access(const std::vector<std::vector<bool>>& access, std::size_t a, std::size_t b) {
  return a < access.size() && b < access[a].size() ? access[a][b] : true;
}

// Whether direct NVLinks (with peer access) join every rank to every other, hop by hop.
bool nvlinks_join_all(const Topology& t, const std::vector<std::vector<bool>>& access) {
  const std::size_t n = t.gpus.size();
  std::vector<bool> reached(n, false);
  std::vector<std::size_t> todo{0};
  reached[0] = true;
  while (!todo.empty()) {
    const std::size_t a = todo.back();
    todo.pop_back();
    for (std::size_t b = 0; b < n; ++b) {
      if (reached[b] || !can_access(access, a, b)) continue;
      const p2p::PairLinks* d = direct_link(t, t.gpus[a].index, t.gpus[b].index);
      if (!d || d->links == 0) continue;
      reached[b] = true;
      todo.push_back(b);
    }
  }
  return std::all_of(reached.begin(), reached.end(), [](bool r) { return r; });
}

std::optional<Peak> nvswitch_peak(const Topology& t) {
  const p2p::GpuLinks* slowest = nullptr;
  for (const p2p::GpuLinks& g : t.gpus) {
    if (!g.nvswitch_bytes_per_second) return std::nullopt;
    if (!slowest || *g.nvswitch_bytes_per_second < *slowest->nvswitch_bytes_per_second)
      slowest = &g;
  }
  if (!slowest) return std::nullopt;
  Peak p = p2p::nvlink_peak(slowest->nvswitch_links, slowest->nvlink_bytes_per_second_per_link);
  p.bytes_per_second = *slowest->nvswitch_bytes_per_second;
  p.basis += fmt::format(" to the NVSwitches (GPU {})", slowest->index);
  return p;
}

// Σ of each rank's direct NVLinks to the other ranks; the slowest rank's.
std::optional<Peak> direct_nvlink_peak(const Topology& t) {
  std::optional<Peak> slowest;
  for (const p2p::GpuLinks& g : t.gpus) {
    unsigned links = 0;
    double bytes = 0, per_link = 0;
    for (const p2p::GpuLinks& other : t.gpus) {
      if (other.index == g.index) continue;
      if (const p2p::PairLinks* d = direct_link(t, g.index, other.index)) {
        links += d->links;
        bytes += d->links * d->bytes_per_second_per_link;
        per_link = d->bytes_per_second_per_link;
      }
    }
    Peak p = p2p::nvlink_peak(links, per_link);
    p.bytes_per_second = bytes;
    p.basis += fmt::format(" to the other GPUs (GPU {})", g.index);
    if (!slowest || p.bytes_per_second < slowest->bytes_per_second) slowest = p;
  }
  return slowest;
}

std::optional<Peak> slowest_pcie_peak(const Topology& t) {
  std::optional<Peak> slowest;
  for (const p2p::GpuLinks& g : t.gpus) {
    const auto running = g.pcie_running();
    auto p = running ? p2p::pcie_peak(*running) : std::nullopt;
    if (!p) return std::nullopt;  // a GPU whose link is unknown: no peak
    p->basis += fmt::format(" (GPU {})", g.index);
    if (!slowest || p->bytes_per_second < slowest->bytes_per_second) slowest = p;
  }
  return slowest;
}

std::string reason_key(std::uint64_t bit) {
  for (const auto& info : gpu::clock_reasons())
    if (info.bit == bit) return std::string(info.key);
  return fmt::format("0x{:x}", bit);
}

OperationReport operation_report(const OperationResult& r, const std::optional<Peak>& peak,
                                 const RunOptions& options) {
  OperationReport o;
  o.operation = r.operation;
  o.sizes = r.sizes;
  o.peak = peak;
  o.checked = options.check;
  for (const SizeResult& s : r.sizes) {
    o.wrong += s.out_of_place.wrong.value_or(0);
    if (s.in_place) o.wrong += s.in_place->wrong.value_or(0);
  }
  if (!r.sizes.empty()) {
    const SizeResult& largest = r.sizes.back();
    o.judged_bytes = largest.counts.bytes;
    o.judged_bus_bandwidth = largest.out_of_place.bandwidth.bus;
    // The smallest size that moves anything (all-gather's first sizes round to 0 elements per
    // rank, which NCCL returns from at once).
    auto first = std::find_if(r.sizes.begin(), r.sizes.end(),
                              [](const SizeResult& s) { return s.counts.param > 0; });
    o.smallest_seconds = (first == r.sizes.end() ? r.sizes.front() : *first).out_of_place.seconds;
    if (peak && peak->bytes_per_second > 0 && o.judged_bus_bandwidth > 0)
      o.fraction_of_peak = o.judged_bus_bandwidth / peak->bytes_per_second;
  }
  return o;
}

void rank_pairs(NcclReport& report) {
  double worst = std::numeric_limits<double>::infinity(), best = -1;
  for (std::size_t i = 0; i < report.pairs.size(); ++i) {
    const PairReport& p = report.pairs[i];
    // By share of the pair's own peak where known (pairs of one host differ in links), else
    // by bandwidth.
    const double score = p.fraction_of_peak ? *p.fraction_of_peak : p.result.bandwidth * 1e-12;
    if (score < worst) worst = score, report.worst_pair = i;
    if (score > best) best = score, report.best_pair = i;
  }
}

}  // namespace

const p2p::PairLinks* direct_link(const Topology& t, unsigned a, unsigned b) {
  for (const p2p::PairLinks& p : t.nvlink_pairs) {
    if ((p.a == a && p.b == b) || (p.a == b && p.b == a)) return &p;
  }
  return nullptr;
}

std::optional<Peak> collective_peak(const Topology& t,
                                    const std::vector<std::vector<bool>>& peer_access) {
  if (t.gpus.size() < 2) return std::nullopt;
  const bool access = all_peer_access(peer_access);
  if (access) {
    if (auto p = nvswitch_peak(t)) return p;
    if (nvlinks_join_all(t, peer_access)) return direct_nvlink_peak(t);
  }
  return slowest_pcie_peak(t);
}

std::optional<Peak> pair_peak(const Topology& t, int a, int b, bool peer_access) {
  if (a < 0 || b < 0 || std::size_t(a) >= t.gpus.size() || std::size_t(b) >= t.gpus.size())
    return std::nullopt;
  const p2p::GpuLinks& ga = t.gpus[std::size_t(a)];
  const p2p::GpuLinks& gb = t.gpus[std::size_t(b)];
  return p2p::peer_peak(ga, gb, direct_link(t, ga.index, gb.index), peer_access);
}

std::optional<Peak> ring_peak(const Topology& t,
                              const std::vector<std::vector<bool>>& peer_access) {
  const int n = int(t.gpus.size());
  if (n < 2) return std::nullopt;
  std::optional<Peak> slowest;
  for (int r = 0; r < n; ++r) {
    const int next = (r + 1) % n;
    auto p = pair_peak(t, r, next, can_access(peer_access, std::size_t(r), std::size_t(next)));
    if (!p) return std::nullopt;
    if (!slowest || p->bytes_per_second < slowest->bytes_per_second) slowest = p;
  }
  return slowest;
}

GpuTelemetry gpu_telemetry(unsigned gpu, const telemetry::Summary& s,
                           const std::vector<telemetry::SlowSample>& slow) {
  GpuTelemetry g;
  g.gpu = gpu;
  if (s.sm_clock) g.sm_clock_mhz = s.sm_clock->median.value();
  if (s.memory_clock) g.memory_clock_mhz = s.memory_clock->median.value();
  if (s.power_mean)
    g.power_w = s.power_mean->value();
  else if (s.power_peak)
    g.power_w = s.power_peak->value();
  if (s.temperature_max) g.temperature_c = s.temperature_max->value();
  for (const auto& r : s.clock_reasons) {
    if (r.fraction.value() > 0) g.reasons.emplace_back(reason_key(r.bit), r.fraction.value());
  }
  // NVLink data counters: the change between the first and the last slow sample that has them
  // (telemetry::nvlink_rate, the one rate dmon and /metrics show).
  const telemetry::SlowSample* first = nullptr;
  const telemetry::SlowSample* last = nullptr;
  for (const auto& sample : slow) {
    if (!telemetry::link_sum(sample.nvlinks, telemetry::fields::nvlink_tx)) continue;
    if (!first) first = &sample;
    last = &sample;
  }
  if (first && last && last->time > first->time) {
    g.nvlink_tx_bytes_per_second =
        telemetry::nvlink_rate(*first, *last, {telemetry::fields::nvlink_tx});
    g.nvlink_rx_bytes_per_second =
        telemetry::nvlink_rate(*first, *last, {telemetry::fields::nvlink_rx});
  }
  return g;
}

NcclReport make_report(const RunResult& run, const RunOptions& options, Topology topology,
                       const std::map<std::string, std::string>& environment,
                       std::vector<std::vector<GpuTelemetry>> telemetry,
                       std::vector<GpuTelemetry> pairs_telemetry) {
  NcclReport report;
  report.options = options;
  report.options.on_progress = nullptr;
  report.native_all_to_all = run.native_all_to_all;
  report.topology = std::move(topology);
  report.peer_access = run.peer_access;
  report.settings = telemetry::nccl::bandwidth_settings(environment);
  const auto collective = collective_peak(report.topology, run.peer_access);
  const auto ring = ring_peak(report.topology, run.peer_access);
  for (std::size_t i = 0; i < run.operations.size(); ++i) {
    const OperationResult& r = run.operations[i];
    report.operations.push_back(
        operation_report(r, r.operation == Operation::send_recv ? ring : collective, options));
    if (i < telemetry.size()) report.operations.back().telemetry = std::move(telemetry[i]);
  }
  for (const PairResult& p : run.pairs) {
    PairReport pr;
    pr.gpu = report.topology.gpus.at(std::size_t(p.from)).index;
    pr.peer = report.topology.gpus.at(std::size_t(p.to)).index;
    pr.result = p;
    pr.peak = pair_peak(report.topology, p.from, p.to,
                        can_access(run.peer_access, std::size_t(p.from), std::size_t(p.to)));
    if (pr.peak && pr.peak->bytes_per_second > 0 && p.bandwidth > 0)
      pr.fraction_of_peak = p.bandwidth / pr.peak->bytes_per_second;
    report.pairs.push_back(std::move(pr));
  }
  report.pairs_telemetry = std::move(pairs_telemetry);
  rank_pairs(report);
  report.notes = report_notes(report);
  report.verdicts = report_verdicts(report);
  return report;
}

bool any_wrong(const NcclReport& report) {
  for (const OperationReport& o : report.operations)
    if (o.wrong > 0) return true;
  for (const PairReport& p : report.pairs)
    if (p.result.wrong.value_or(0) > 0) return true;
  return false;
}

}  // namespace gpuclk::bench::nccl
