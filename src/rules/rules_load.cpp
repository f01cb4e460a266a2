// Rules on how the work is spread: GPUs idle while a process holds them (input pipeline), and
// one GPU slower than the other GPUs of its job (the straggler a multi-GPU job waits for).
#include <set>

#include "host/cpu.h"
#include "rules/jobs.h"
#include "rules/window.h"

namespace gpuclk::rules::detail {

using gpu::ClockReasons;

void input_starved(const Input& in, const Thresholds& t, std::vector<Finding>& out) {
  if (in.snapshot()) return;
  for (const auto& w : in.gpus) {
    const auto& g = w.facts;
    if (!g.processes || g.processes->empty()) continue;
    const auto util = mean_utilization(w);
    // A process holds a context: the GPU is not in the driver's idle state.
    const auto held = select(w, [](const FastSample& s) {
      return s.clock_reasons && !s.clock_reasons->has(ClockReasons::gpu_idle);
    });
    if (!util || w.fast.empty()) continue;
    const double held_fraction =
        static_cast<double>(held.size()) / static_cast<double>(w.fast.size());
    if (*util >= t.starved_utilization || held_fraction < t.starved_process_fraction) continue;
    std::string pids;
    for (auto p : *g.processes) pids += (pids.empty() ? "" : ",") + std::to_string(p);
    // What the holding process does on the CPU says where the input pipeline waits: busy (a core
    // or more), its own preprocessing bounds the step; nearly idle, it waits for something else
    // (data-loader worker processes, which are not counted here, storage, the network).
    std::optional<double> cpu;
    if (auto it = g.process_cpu_percent.find(g.processes->front());
        it != g.process_cpu_percent.end())
      cpu = it->second;
    std::string cause =
        "the input pipeline (data loading, CPU preprocessing, I/O) does not feed the GPU fast "
        "enough";
    if (cpu && *cpu >= t.starved_cpu_busy_pct) {
      cause = fmt::format(
          "the process holding the GPU is busy on the CPU ({:.0f}% of a core): its own input "
          "work (decoding, augmentation, collation) bounds each step",
          *cpu);
    } else if (cpu) {
      cause = fmt::format(
          "the process holding the GPU uses only {:.0f}% of a core: it waits for its input — "
          "data-loader worker processes, storage or the network — not for its own CPU",
          *cpu);
    }
    auto f = make("input_starved", Severity::warning, {g.index},
                  fmt::format("GPU {}: {:.0f}% busy while process {} held it {:.0f}% of the "
                              "time: the GPU waits for its input",
                              g.index, 100 * *util, pids, 100 * held_fraction),
                  cause,
                  fmt::format("more data-loader workers, pinned memory, prefetching; check the "
                              "job's CPU use: top -p {}",
                              pids));
    add(f, "utilization_pct", 100 * *util, "%", 1);
    add(f, "held_by_process_pct", 100 * held_fraction, "%", 1);
    add(f, "idle_s", in.seconds() * (1 - *util), "s", 1);
    add(f, "pid", g.processes->front());
    if (cpu) add(f, "process_cpu_pct", *cpu, "%", 1);
    out.push_back(std::move(f));
  }
}

namespace {

struct Load {
  const GpuWindow* w;
  std::optional<double> clock, util, power, temp;
};

// What held this GPU back more than its peers, as the finding's cause.
std::string cause_of(const Load& me, const std::vector<Load>& peers, const Thresholds& t,
                     const std::optional<double>& peer_util) {
  const auto& w = *me.w;
  const auto busy = busy_samples(w, t);
  const auto frac = [&](std::uint64_t mask) { return reason_fraction(busy, mask).value_or(0); };
  double peer_app = 0, peer_thermal = 0, peer_cap = 0;
  for (const auto& p : peers) {
    const auto pb = busy_samples(*p.w, t);
    peer_app = std::max(peer_app,
                        reason_fraction(pb, ClockReasons::applications_clocks_setting).value_or(0));
    peer_thermal = std::max(peer_thermal, reason_fraction(pb, ClockReasons::sw_thermal_slowdown |
                                                                  ClockReasons::hw_thermal_slowdown)
                                              .value_or(0));
    peer_cap = std::max(peer_cap, reason_fraction(pb, ClockReasons::sw_power_cap).value_or(0));
  }
  const auto& g = w.facts;
  if (frac(ClockReasons::applications_clocks_setting) > peer_app + 0.2 && g.app_sm_clock)
    return fmt::format("its application clocks ({:.0f} MHz) hold it below its peers",
                       g.app_sm_clock->value());
  if (frac(ClockReasons::sw_thermal_slowdown | ClockReasons::hw_thermal_slowdown) >
      peer_thermal + 0.05)
    return fmt::format("heat: thermal slowdown holds its clock (up to {:.0f} C)",
                       me.temp.value_or(0));
  if (frac(ClockReasons::hw_slowdown | ClockReasons::hw_power_brake_slowdown) > 0.05)
    return "hardware slowdown / power brake";
  if (frac(ClockReasons::sw_power_cap) > peer_cap + 0.2 ||
      (g.power_limit && peers.size() && peers.front().w->facts.power_limit &&
       g.power_limit->value() < peers.front().w->facts.power_limit->value()))
    return fmt::format("its power limit ({:.0f} W) caps it below its peers",
                       g.power_limit ? g.power_limit->value() : 0);
  if (g.pcie_link && g.pcie_max &&
      (g.pcie_link->generation < g.pcie_max->generation || g.pcie_link->width < g.pcie_max->width))
    return fmt::format("its PCIe link (Gen{} x{}) feeds it slower than its peers'",
                       g.pcie_link->generation, g.pcie_link->width);
  if (me.util && peer_util && *me.util < *peer_util - t.straggler_utilization)
    return "it waits more than its peers (input, link or a slower rank)";
  return "its clock is lower than its peers' with no reason NVML reports";
}

}  // namespace

void straggler(const Input& in, const Thresholds& t, std::vector<Finding>& out) {
  if (in.snapshot()) return;
  // Only GPUs that run the same job wait for each other: an idle GPU, or one running another
  // job, is no peer. A GPU in two jobs is reported once, for the first job it lags in.
  std::set<unsigned> reported;
  for (const auto& job : jobs(in)) {
    if (job.gpus.size() < 2) continue;
    std::map<std::string, std::vector<const GpuWindow*>> of_model;
    for (const auto& w : in.gpus) {
      if (std::binary_search(job.gpus.begin(), job.gpus.end(), w.facts.index))
        of_model[w.facts.name].push_back(&w);
    }
    const auto job_name =
        fmt::format("{} (GPUs {})", host::describe(job.owner), host::cpu_list(job.gpus));
    for (const auto& [model, same] : of_model) {
      if (same.size() < 2) continue;
      std::vector<Load> loads;
      for (const auto* w : same) {
        loads.push_back({w, sm_clock_percentile(busy_samples(*w, t), 0.5), mean_utilization(*w),
                         mean_power(*w).value_or(0), max_temperature(*w)});
      }
      for (const auto& me : loads) {
        if (reported.contains(me.w->facts.index)) continue;
        std::vector<Load> peers;
        std::vector<double> clocks, utils, powers, temps;
        for (const auto& p : loads) {
          if (p.w == me.w) continue;
          if (!p.util || *p.util < t.straggler_peer_utilization) continue;
          peers.push_back(p);
          if (p.clock) clocks.push_back(*p.clock);
          utils.push_back(*p.util);
          powers.push_back(p.power.value_or(0));
          if (p.temp) temps.push_back(*p.temp);
        }
        if (peers.empty() || !me.util) continue;
        const auto peer_clock = median(clocks);
        const auto peer_util = median(utils);
        const bool slow_clock =
            me.clock && peer_clock && *me.clock < t.straggler_clock * *peer_clock;
        const bool less_busy = peer_util && *me.util < *peer_util - t.straggler_utilization;
        if (!slow_clock && !less_busy) continue;
        const auto& g = me.w->facts;
        auto f =
            make("straggler", Severity::warning, {g.index},
                 slow_clock ? fmt::format("GPU {} of {}: median SM clock under load {:.0f} MHz, "
                                          "{:.0f}% of its peers' {:.0f} MHz: the job waits for it",
                                          g.index, job_name, *me.clock,
                                          100 * *me.clock / *peer_clock, *peer_clock)
                            : fmt::format("GPU {} of {}: {:.0f}% busy while its peers are {:.0f}% "
                                          "busy: it lags behind them",
                                          g.index, job_name, 100 * *me.util, 100 * *peer_util),
                 cause_of(me, peers, t, peer_util),
                 "fix the cause named (settings: gpuclk set --all …; cooling; the link); "
                 "`gpuclk doctor` lists it as its own finding");
        if (me.clock) add(f, "sm_clock_median_mhz", *me.clock, "MHz");
        if (peer_clock) add(f, "peers_sm_clock_median_mhz", *peer_clock, "MHz");
        add(f, "utilization_pct", 100 * *me.util, "%", 1);
        if (peer_util) add(f, "peers_utilization_pct", 100 * *peer_util, "%", 1);
        add(f, "power_mean_w", me.power.value_or(0), "W", 1);
        if (auto pp = median(powers)) add(f, "peers_power_mean_w", *pp, "W", 1);
        if (me.temp) add(f, "temperature_max_c", *me.temp, "C");
        if (auto pt = median(temps)) add(f, "peers_temperature_max_c", *pt, "C");
        f.evidence.push_back({"job", "", 0, 0, host::owner_key(job.owner)});
        f.evidence.push_back({"job_gpus", "", 0, 0, host::cpu_list(job.gpus)});
        if (!job.owner.user.empty()) f.evidence.push_back({"job_user", "", 0, 0, job.owner.user});
        f.summary += "; cause: " + f.cause;
        reported.insert(g.index);
        out.push_back(std::move(f));
      }
    }
  }
}

void numa_affinity(const Input& in, const Thresholds&, std::vector<Finding>& out) {
  for (const auto& w : in.gpus) {
    const auto& g = w.facts;
    if (!g.cpu_affinity || g.cpu_affinity->empty()) continue;
    for (const auto& [pid, cpus] : g.process_cpus) {
      bool near = false;
      for (auto c : cpus) {
        near = near || std::find(g.cpu_affinity->begin(), g.cpu_affinity->end(), c) !=
                           g.cpu_affinity->end();
      }
      if (near || cpus.empty()) continue;
      const auto list = [](const std::vector<unsigned>& v) {
        // "0-3,8": compact CPU ranges
        std::string text;
        for (std::size_t i = 0; i < v.size();) {
          auto j = i;
          while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
          text +=
              (text.empty() ? "" : ",") +
              (j == i ? std::to_string(v[i]) : std::to_string(v[i]) + "-" + std::to_string(v[j]));
          i = j + 1;
        }
        return text;
      };
      const std::string node = g.numa_node ? std::to_string(*g.numa_node) : "?";
      auto f =
          make("numa_affinity", Severity::warning, {g.index},
               fmt::format("GPU {}: process {} may run only on CPUs {}, none of them near the "
                           "GPU (NUMA node {}, CPUs {}): every host transfer crosses the "
                           "socket link",
                           g.index, pid, list(cpus), node, list(*g.cpu_affinity)),
               "the job (or its launcher, numactl, taskset, cgroup cpuset) is bound to the "
               "other socket",
               g.numa_node
                   ? fmt::format("bind it to the GPU's node: numactl --cpunodebind={0} "
                                 "--membind={0} CMD (or taskset -c {1} CMD)",
                                 *g.numa_node, list(*g.cpu_affinity))
                   : fmt::format("bind it near the GPU: taskset -c {} CMD", list(*g.cpu_affinity)));
      add(f, "pid", pid);
      if (g.numa_node) add(f, "gpu_numa_node", *g.numa_node);
      f.evidence.push_back({"process_cpus", "", 0, 0, list(cpus)});
      f.evidence.push_back({"gpu_cpus", "", 0, 0, list(*g.cpu_affinity)});
      out.push_back(std::move(f));
    }
  }
}

}  // namespace gpuclk::rules::detail
