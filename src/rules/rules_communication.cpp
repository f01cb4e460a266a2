// Rules on the third layer, the network (NCCL): a job that spends much of its time in NCCL
// operations at well below what its links carry (and why: a setting, a link, the messages), and
// the rank the others wait for at each collective (and what held its GPU back). Both read the
// NCCL Inspector's communicators joined with the node (Input::communicators).
#include <fmt/format.h>

#include <algorithm>

#include "rules/window.h"
#include "telemetry/nccl.h"

namespace gpuclk::rules::detail {
namespace {

namespace tn = telemetry::nccl;
using gpu::ClockReasons;

const GpuWindow* window_of(const Input& in, unsigned gpu) {
  for (const auto& w : in.gpus)
    if (w.facts.index == gpu) return &w;
  return nullptr;
}

std::vector<unsigned> rank_gpus(const tn::Communicator& c) {
  std::vector<unsigned> gpus;
  for (const auto& m : c.members)
    if (m.gpu) gpus.push_back(m.gpu->index);
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  return gpus;
}

// "communicator DP (0x7f8c…, 2 ranks) of Slurm job 1234".
std::string subject(const CommunicatorWindow& w) {
  const tn::Communicator& c = w.communicator;
  const std::string name = c.name.empty() || c.name == "unknown" ? "" : c.name + " ";
  return fmt::format("communicator {}({}, {} rank{}){}", name, c.id, c.ranks,
                     c.ranks == 1 ? "" : "s", w.job.empty() ? "" : " of " + w.job);
}

// The job's wall time the records cover: given, else the records' span where it can be one.
std::optional<double> wall_seconds(const CommunicatorWindow& w) {
  if (w.wall_seconds && *w.wall_seconds > 0) return w.wall_seconds;
  const tn::Communicator& c = w.communicator;
  const double span = c.span_seconds();
  // Dump times all written at teardown span nothing: a span shorter than the time spent in
  // the operations cannot be the wall time.
  if (span <= 0 || (c.span_from_dump_times && span < c.mean_seconds().value_or(0))) return {};
  return span;
}

struct Bandwidth {
  double bus_bytes = 0, seconds = 0, messages = 0, message_bytes = 0;
  double bus() const { return seconds > 0 ? bus_bytes / seconds : 0; }
  double mean_message() const { return messages > 0 ? message_bytes / messages : 0; }
};

// The least-waiting rank's view of each kind: the transfers without the waits.
Bandwidth transfer_bandwidth(const tn::Communicator& c) {
  Bandwidth b;
  for (const auto& t : c.least_waiting) {
    b.bus_bytes += t.bus_bytes;
    b.seconds += t.seconds;
    b.messages += double(t.count);
    b.message_bytes += t.message_bytes;
  }
  return b;
}

// Why the bandwidth is low, first that applies: a setting, a link, the topology, the messages.
std::string communication_cause(const Input& in, const CommunicatorWindow& w, const Bandwidth& b,
                                const Thresholds& t) {
  for (const auto& s : tn::bandwidth_settings(w.nccl_environment)) {
    if (s.limits) return fmt::format("{} is set for the job", tn::describe(s));
  }
  const auto gpus = rank_gpus(w.communicator);
  bool any_nvlink = false;
  std::map<int, unsigned> nodes;
  for (unsigned g : gpus) {
    const GpuWindow* gw = window_of(in, g);
    if (!gw) continue;
    const GpuFacts& f = gw->facts;
    any_nvlink = any_nvlink || !f.nvlink_peers.empty();
    if (!gw->slow.empty()) {
      const auto& links = gw->slow.back().nvlinks;
      const auto down = std::count_if(links.begin(), links.end(),
                                      [](const auto& l) { return l.active && !*l.active; });
      if (down > 0 && down < std::ptrdiff_t(links.size()))
        return fmt::format("GPU {} has {} of its {} NVLinks down", g, down, links.size());
    }
    if (f.pcie_link && f.pcie_max && f.nvlink_peers.empty() &&
        (f.pcie_link->generation < f.pcie_max->generation ||
         f.pcie_link->width < f.pcie_max->width))
      return fmt::format("GPU {}'s PCIe link runs Gen{} x{}, below its Gen{} x{}", g,
                         f.pcie_link->generation, f.pcie_link->width, f.pcie_max->generation,
                         f.pcie_max->width);
    if (f.numa_node) nodes.try_emplace(*f.numa_node, g);
  }
  if (!any_nvlink && nodes.size() > 1) {
    return fmt::format(
        "its GPUs hang off different NUMA nodes (GPU {} and GPU {}): traffic "
        "crosses the CPU interconnect",
        nodes.begin()->second, nodes.rbegin()->second);
  }
  if (w.communicator.nodes > 1) {
    return fmt::format(
        "it spans {} nodes: the network between them bounds it (gpuclk does not "
        "see the NICs)",
        w.communicator.nodes);
  }
  if (b.mean_message() > 0 && b.mean_message() < t.comm_small_message_bytes) {
    return fmt::format(
        "its messages are small ({:.0f} KiB on average): latency, not the link, "
        "bounds them",
        b.mean_message() / 1024);
  }
  return "no cause gpuclk sees: another job's traffic on the links, or NCCL's choice of "
         "algorithm (NCCL_DEBUG=INFO names it)";
}

// What held a rank's GPU back, against the other ranks' GPUs, from the window's samples.
std::string held_back(const Input& in, unsigned gpu, const std::vector<unsigned>& others,
                      const Thresholds& t) {
  const GpuWindow* me = window_of(in, gpu);
  if (!me || me->fast.empty()) return "gpuclk has no samples of its GPU over the window";
  const auto busy = busy_samples(*me, t);
  const auto share = [&](std::uint64_t mask) { return reason_fraction(busy, mask).value_or(0); };
  std::vector<double> clocks, utils;
  double peer_thermal = 0, peer_cap = 0;
  for (unsigned o : others) {
    const GpuWindow* w = window_of(in, o);
    if (!w || w->fast.empty()) continue;
    const auto pb = busy_samples(*w, t);
    if (auto c = sm_clock_percentile(pb, 0.5)) clocks.push_back(*c);
    if (auto u = mean_utilization(*w)) utils.push_back(*u);
    peer_thermal = std::max(peer_thermal, reason_fraction(pb, ClockReasons::sw_thermal_slowdown |
                                                                  ClockReasons::hw_thermal_slowdown)
                                              .value_or(0));
    peer_cap = std::max(peer_cap, reason_fraction(pb, ClockReasons::sw_power_cap).value_or(0));
  }
  const auto clock = sm_clock_percentile(busy, 0.5);
  const auto peer_clock = median(clocks);
  const std::string clocks_text =
      clock && peer_clock
          ? fmt::format(" (SM clock {:.0f} MHz, the others' {:.0f} MHz)", *clock, *peer_clock)
          : "";
  if (share(ClockReasons::sw_thermal_slowdown | ClockReasons::hw_thermal_slowdown) >
      peer_thermal + 0.05)
    return "its GPU was held by thermal slowdown" + clocks_text;
  if (share(ClockReasons::hw_slowdown | ClockReasons::hw_power_brake_slowdown) > 0.05)
    return "its GPU was held by a HW slowdown or power brake" + clocks_text;
  if (share(ClockReasons::sw_power_cap) > peer_cap + 0.2)
    return "its GPU was held by its power cap more than the others'" + clocks_text;
  if (clock && peer_clock && *clock < t.straggler_clock * *peer_clock)
    return "its GPU ran at a lower clock than the others'" + clocks_text;
  const auto util = mean_utilization(*me);
  const auto peer_util = median(utils);
  if (util && peer_util && *util < *peer_util - t.straggler_utilization) {
    return fmt::format(
        "its GPU was busy {:.0f}% of the time against the others' {:.0f}%: it waited for its "
        "own process (input pipeline, host-side work), not for its clocks",
        *util * 100, *peer_util * 100);
  }
  return "the hardware shows no cause: its clocks and throttling match the other GPUs'; the "
         "delay is in the rank's own work (more compute or input than the others, or a pause)";
}

}  // namespace

void communication_bound(const Input& in, const Thresholds& t, std::vector<Finding>& out) {
  for (const CommunicatorWindow& w : in.communicators) {
    const tn::Communicator& c = w.communicator;
    const auto wall = wall_seconds(w);
    const auto in_nccl = c.mean_seconds();
    if (!wall || !in_nccl || *wall <= 0) continue;
    const double share = std::min(1.0, *in_nccl / *wall);
    if (share < t.comm_share) continue;
    const Bandwidth b = transfer_bandwidth(c);
    const double peak = w.link_peak_bytes_per_second.value_or(0);
    const bool has_peak = peak > 0;
    const double of_peak = has_peak ? b.bus() / peak : 0;
    std::string summary =
        fmt::format("{}: {:.0f}% of the job's time in NCCL operations at {:.1f} GB/s bus bandwidth",
                    subject(w), share * 100, b.bus() * 1e-9);
    if (has_peak)
      summary += fmt::format(", {:.0f}% of its links' {:.1f} GB/s", of_peak * 100, peak * 1e-9);
    std::string cause, fix;
    Severity severity = Severity::info;
    if (has_peak && of_peak < t.comm_bandwidth_fraction) {
      severity = Severity::warning;
      cause = communication_cause(in, w, b, t);
      fix =
          "remove the setting or repair the link the cause names; then `gpuclk bench nccl` on "
          "the job's GPUs should reach the links' peak";
    } else if (has_peak) {
      cause = "the links carry what they can: the job waits for communication, not for a fault";
      fix =
          "overlap communication with compute (DDP buckets, FSDP prefetch), send less (larger "
          "batches, gradient compression) or give the job faster links";
    } else {
      cause = "the links' peak is unknown, so gpuclk cannot tell a slow link from a busy one";
      fix = "`gpuclk bench nccl` on the job's GPUs measures what they reach";
    }
    auto f = make("communication_bound", severity, rank_gpus(c), std::move(summary),
                  std::move(cause), std::move(fix));
    add(f, "nccl_time_pct", share * 100, "%", 1);
    add(f, "nccl_time_s", *in_nccl, "s", 3);
    add(f, "wall_time_s", *wall, "s", 3);
    add(f, "bus_bandwidth_gb_per_s", b.bus() * 1e-9, "GB/s", 2);
    if (has_peak) {
      add(f, "link_peak_gb_per_s", peak * 1e-9, "GB/s", 2);
      add(f, "pct_of_peak", of_peak * 100, "%", 1);
    }
    if (!w.link_basis.empty()) f.evidence.push_back({"link_basis", "", 0, 0, w.link_basis});
    add(f, "mean_message_bytes", b.mean_message(), "B");
    add(f, "ranks", c.ranks);
    add(f, "nodes", double(c.nodes));
    f.evidence.push_back({"communicator", "", 0, 0, c.id});
    out.push_back(std::move(f));
  }
}

void late_rank(const Input& in, const Thresholds& t, std::vector<Finding>& out) {
  for (const CommunicatorWindow& w : in.communicators) {
    const tn::Communicator& c = w.communicator;
    const tn::RankActivity* late = c.latest();
    if (!late || c.delayed_operations < t.late_rank_min_operations) continue;
    if (double(late->last_arrivals) < t.late_rank_last_share * double(c.delayed_operations))
      continue;
    if (double(c.delayed_operations) < t.late_rank_delayed_share * double(c.shared_operations))
      continue;
    double others_waited = 0, others_time = 0;
    std::vector<unsigned> others;
    for (const auto& m : c.members) {
      if (&m == late) continue;
      others_waited += m.waited_us * 1e-6 / double(c.members.size() - 1);
      others_time += m.seconds / double(c.members.size() - 1);
      if (m.gpu) others.push_back(m.gpu->index);
    }
    const std::string who =
        late->gpu ? fmt::format("GPU {} (rank {}, pid {})", late->gpu->index, late->rank, late->pid)
                  : fmt::format("rank {} (pid {}; its GPU is not known)", late->rank, late->pid);
    auto f = make(
        "late_rank", Severity::warning,
        late->gpu ? std::vector<unsigned>{late->gpu->index} : std::vector<unsigned>{},
        fmt::format("{} of {} arrives last at {} of its {} delayed collectives, {:.1f} ms after "
                    "the first rank: the others wait {:.3f} s each ({:.0f}% of their time in "
                    "NCCL)",
                    who, subject(w), late->last_arrivals, c.delayed_operations,
                    late->lateness_us * 1e-3, others_waited,
                    others_time > 0 ? 100 * others_waited / others_time : 0),
        late->gpu ? held_back(in, late->gpu->index, others, t)
                  : "without its GPU gpuclk cannot say what held it back",
        "look at that rank's own work: its input pipeline, extra compute or a pause before each "
        "step; where the cause is its GPU's clock, the clock rules (gpuclk doctor) say why");
    add(f, "rank", late->rank);
    add(f, "pid", late->pid);
    add(f, "lateness_ms", late->lateness_us * 1e-3, "ms", 2);
    add(f, "last_arrivals", double(late->last_arrivals));
    add(f, "delayed_collectives", double(c.delayed_operations));
    add(f, "shared_collectives", double(c.shared_operations));
    add(f, "others_waited_s", others_waited, "s", 3);
    f.evidence.push_back({"arrival_method", "", 0, 0, std::string(tn::to_string(c.arrival))});
    f.evidence.push_back({"communicator", "", 0, 0, c.id});
    out.push_back(std::move(f));
  }
}

}  // namespace gpuclk::rules::detail
