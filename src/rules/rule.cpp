#include "rules/rule.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "rules/window.h"

namespace gpuclk::rules {

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::info:
      return "info";
    case Severity::warning:
      return "warning";
    case Severity::critical:
      return "critical";
  }
  return "info";
}

Severity worst(const std::vector<Finding>& findings) {
  Severity w = Severity::info;
  for (const auto& f : findings) w = std::max(w, f.severity);
  return w;
}

int exit_code(const std::vector<Finding>& findings) {
  switch (worst(findings)) {
    case Severity::critical:
      return kExitCritical;
    case Severity::warning:
      return kExitWarning;
    case Severity::info:
      break;
  }
  return 0;
}

namespace {

// The GPU's health: lost, Xid errors, memory errors and remapping.
std::vector<Rule> health_rules() {
  using namespace detail;
  return {
      {"gpu_lost", "A GPU fell off the bus or cannot be opened",
       "Checks: the GPU could not be opened, or a read answered GPU_IS_LOST during the window.\n"
       "Severity: critical.\n"
       "Cause: an Xid 79 (fallen off the bus), a power or thermal shutdown, a driver fault.\n"
       "Fix: check `dmesg` for Xid errors; the GPU needs a reset (nvidia-smi -r -i N) or a "
       "reboot.",
       gpu_lost},
      {"xid_errors", "Xid errors the driver reported (NVML events)",
       "Checks: Xid critical-error events NVML delivered during the window (doctor waits on "
       "the GPUs' event set; a snapshot such as `gpuclk status` sees none). One finding per "
       "GPU with the codes, how often each came and when the first did.\n"
       "Severity: critical for Xids that mean a reset is needed or data may be corrupt: 79 "
       "(fallen off the bus), 48 (double-bit ECC), 63/64 (row remapping / page retirement event "
       "or failure), 94/95 (contained/uncontained ECC), 74 (NVLink), 62 (micro-controller "
       "halt), 119/120 (GSP); warning for any other (mostly an application's fault: 13, 31, "
       "43, 45; 92 a high single-bit ECC rate).\n"
       "Cause and fix by class: bus: power, seating or driver fault, reset (nvidia-smi -r -i "
       "N) or reboot, RMA if it repeats; memory: drain, reset so rows are remapped, RMA if it "
       "repeats; NVLink: nvidia-smi nvlink -e, reset, service the link; firmware: reset, "
       "update the driver; other: check `dmesg` and the job's log.",
       xid_errors},
      {"ecc_errors", "ECC memory errors",
       "Checks: volatile uncorrected ECC errors (any: critical), the aggregate uncorrected count "
       "(any: warning), corrected errors counted during the window (warning with a rate per "
       "hour from 5 errors on; fewer: info, counted but not extrapolated) or before it "
       "(info).\n"
       "Cause: failing device memory; uncorrected errors corrupt results and kill the job.\n"
       "Fix: drain the GPU, reset it to retire/remap the rows (nvidia-smi -r -i N), replace it "
       "if errors come back.",
       ecc_errors},
      {"row_remapping", "Rows of device memory remapped, pending or failed",
       "Checks: NVML's remapped rows (A100 and later). A remap pending until the next reset "
       "(critical), a remap that failed for want of spare rows (critical), rows already "
       "remapped (info).\n"
       "Cause: failing device memory repaired with spare rows.\n"
       "Fix: pending: drain the GPU and reset it (nvidia-smi -r -i N); failed: replace the GPU.",
       row_remapping},
      {"retired_pages", "Pages of device memory retired, pending or near the limit",
       "Checks: NVML's retired pages (Kepler to Turing, e.g. V100; A100 and later remap rows "
       "instead). A retirement pending until the GPU is next reset (critical), 63 or more pages "
       "retired, NVIDIA's replacement (RMA) limit (critical), pages retired after double-bit "
       "errors, 48 or more pages in all, or more than 15 after double-bit errors (warning), pages "
       "retired after repeated single-bit errors only (info).\n"
       "Cause: failing device memory; the driver retires a page after a double-bit error or a "
       "second single-bit error at one address.\n"
       "Fix: pending: drain the GPU and reset it (nvidia-smi -r -i N) or reboot, so the driver "
       "reloads and stops using the page; at the limit: replace the GPU (RMA).",
       retired_pages},
  };
}

// What holds the clocks down: slowdowns, heat, the power cap, settings, jitter.
std::vector<Rule> clock_rules() {
  using namespace detail;
  return {
      {"hw_slowdown", "Hardware slowdown or power brake",
       "Checks: HW slowdown or HW power brake clock event reasons active in at least 1 % of the "
       "samples without HW thermal slowdown (thermal_slowdown covers that).\n"
       "Severity: warning. Evidence: time held, the clock drop.\n"
       "Cause: the board's power supply or an external power-brake signal (PSU, rack power "
       "capping) halves the clock: sudden frequency drops.\n"
       "Fix: check the power supplies, cabling and the rack's power capping; `dmesg`.",
       hw_slowdown},
      {"thermal_slowdown", "Thermal slowdown",
       "Checks: SW or HW thermal slowdown active in at least 5 % of the busy samples.\n"
       "Severity: warning. Evidence: time held, max temperature, busy median SM clock.\n"
       "Cause: the GPU is too hot to hold its clocks: blocked airflow, fan policy, inlet "
       "temperature. Training time then varies by more than 10 % between runs.\n"
       "Fix: improve cooling (airflow, fans, inlet temperature); lock a lower clock "
       "(gpuclk set -i N --lock-gpu-clocks MHZ) for steady run times.",
       thermal_slowdown},
      {"near_slowdown_temperature", "Temperature near the slowdown threshold",
       "Checks: the highest temperature within 5 C of the GPU's slowdown temperature.\n"
       "Severity: warning.\n"
       "Fix: improve cooling before clocks drop.",
       near_slowdown_temperature},
      {"hotter_than_peers", "Much hotter than its peers under the same load",
       "Checks: max temperature over 10 C above the median of the same model's GPUs whose mean "
       "utilization is within 10 points and mean power within 10 % of its own (the same "
       "load).\n"
       "Severity: warning.\n"
       "Cause: this GPU's cooling (heat sink, fan, airflow path) is worse than its neighbours'.\n"
       "Fix: inspect that slot's airflow and the heat sink.",
       hotter_than_peers},
      {"power_capped", "Power-capped most of the time",
       "Checks: SW power cap active in at least 50 % of the busy samples.\n"
       "Severity: info when the power limit is the default (a tensor-core GEMM on an H100 "
       "reaches it: normal), warning when the limit is below 95 % of the default (the job runs "
       "at a fraction of its peak). Evidence: time capped, busy median SM clock vs max (the "
       "clock cost), power limit vs default.\n"
       "Fix: gpuclk set --all --power-limit DEFAULT_W (or gpuclk reset --power-limit).",
       power_capped},
      {"app_clocks_low", "Application clocks hold the SM clock below its maximum",
       "Checks: the 'applications clocks setting' reason in at least 50 % of the busy samples, "
       "with the application SM clock below the maximum (NVML reports a clock lock under the "
       "same reason: with application clocks at the maximum the lock holds the clock, not "
       "them).\n"
       "Severity: warning. Evidence: application SM clock vs max.\n"
       "Cause: power-saving or benchmark application clocks left set.\n"
       "Fix: gpuclk reset --all --app-clocks (or set the maximum: gpuclk set --all "
       "--app-clocks MEM,SM).",
       app_clocks_low},
      {"clock_jitter", "SM clock drops and jitter under steady load",
       "Checks: among busy samples no limiter explains (no power cap, thermal, HW slowdown, "
       "application clocks), the SM clock's p95 − p5 spread exceeds 10 % of the max clock, or "
       "the clock dropped by 20 % of max between two such samples at least 3 times.\n"
       "Severity: warning.\n"
       "Cause: GPU boost moves the clock with load; kernels see varying speed.\n"
       "Fix: gpuclk set --all --persistence on --lock-gpu-clocks MHZ (lock a clock the GPU "
       "holds under the job's power).",
       clock_jitter},
  };
}

// Settings across the node.
std::vector<Rule> setting_rules() {
  using namespace detail;
  return {
      {"settings_differ", "Settings differ across GPUs of one model",
       "Checks: application clocks, power limits and clock locks (gpuclk's journal) compared "
       "across GPUs of the same model; the GPUs off the majority value are named.\n"
       "Severity: warning (a multi-GPU job runs at the pace of its slowest GPU).\n"
       "Fix: gpuclk set --all SETTING VALUE (the same on every GPU), or gpuclk restore.",
       settings_differ},
      {"persistence_off", "Persistence mode off",
       "Checks: persistence mode reads Off.\n"
       "Severity: warning: the driver tears the GPU down when no process uses it, each job "
       "starts slower and settings may be lost.\n"
       "Fix: gpuclk set --all --persistence on (or enable nvidia-persistenced at boot).",
       persistence_off},
  };
}

// PCIe and NVLink.
std::vector<Rule> link_rules() {
  using namespace detail;
  return {
      {"pcie_link_degraded", "PCIe link below its maximum",
       "Checks: link width below the maximum (any time), or generation below the maximum while "
       "the GPU is busy (links train down at idle to save power).\n"
       "Severity: warning. Evidence: current and max generation and width, the share of the "
       "slot's bandwidth.\n"
       "Cause: a Gen4/Gen5 link trained down to Gen3 (BIOS setting, riser, slot) or a card "
       "not seated fully: host transfers slow down, performance becomes unstable.\n"
       "Fix: reseat the card, check the riser and the BIOS PCIe settings; `gpuclk info` "
       "shows the link.",
       pcie_link_degraded},
      {"pcie_replays", "PCIe replay counter rising",
       "Checks: the PCIe replay counter increased during the window.\n"
       "Severity: warning. Evidence: replays in the window and per minute.\n"
       "Cause: link errors (signal integrity: riser, slot, cable) make the link resend packets.\n"
       "Fix: reseat the card or riser; if it persists, the slot or card needs service.",
       pcie_replays},
      {"nvlink_down", "NVLink down",
       "Checks: a link of the GPU reads inactive while its other links, or a peer's (another GPU "
       "of the same model), are up (a GPU whose links are all down with no peer's up has no "
       "NVLink bridge: not reported). Read on the slow cadence with the link counters.\n"
       "Severity: warning. Evidence: links_down, links_up, links, peers_links_up.\n"
       "Cause: a link failed to train or dropped (cable, connector, bridge or NVSwitch tray), "
       "or the driver disabled it after errors.\n"
       "Fix: nvidia-smi nvlink -s / -e -i GPU; reset the GPUs; if it stays down, service the "
       "link.",
       nvlink_down},
      {"nvlink_errors", "NVLink error counters rising",
       "Checks: a link's DL replay, recovery or CRC counter grew during the window, or its "
       "data-ECC counter grew faster than 1000 per minute (a healthy H100 link corrects 18-96 "
       "per minute; counts that do not grow, however high, are not reported).\n"
       "Severity: warning for replays, recoveries and CRC errors (data resent); info for "
       "data-ECC errors alone (corrected). Evidence: linkN_COUNTER_per_minute, "
       "errors_in_window.\n"
       "Cause: a marginal link (signal integrity of the cable, connector or NVSwitch tray).\n"
       "Fix: watch nvidia-smi nvlink -e; if it keeps rising, reset the GPUs and service the "
       "link.",
       nvlink_errors},
      {"nvlink_fewer_links", "Fewer NVLinks between one GPU pair",
       "Checks: GPUs joined directly by NVLink (no NVSwitch): a pair with fewer active links "
       "than the node's other pairs (needs two pairs or more).\n"
       "Severity: warning. Evidence: links, links_other_pairs.\n"
       "Cause: links of the pair down or never connected (a bridge or cable missing or "
       "faulty).\n"
       "Fix: gpuclk topo; reseat or replace the pair's bridge or cable.",
       nvlink_fewer_links},
  };
}

// How the work uses the GPUs: starved, straggling, on the wrong socket.
std::vector<Rule> workload_rules() {
  using namespace detail;
  return {
      {"input_starved", "Idle while a process holds the GPU",
       "Checks: a process held the GPU in at least 90 % of the window but the mean GPU "
       "utilization stayed below 30 %.\n"
       "Severity: warning.\n"
       "Cause: the input pipeline (data loading, CPU preprocessing, I/O) does not feed the GPU "
       "fast enough.\n"
       "Fix: more data-loader workers, pinned memory, prefetching; check the job's CPU use "
       "(top -p PID).",
       input_starved},
      {"straggler", "One GPU slower than the other GPUs of its job",
       "Checks: the GPUs of one job are those whose processes share a Slurm job, a Kubernetes "
       "pod, a container or a session (one process on several GPUs is one job); a GPU without "
       "a process is idle, never a straggler, and a job on one GPU has no peers. Among a job's "
       "GPUs of one model whose peers are at least 30 % busy, a GPU whose busy median SM clock "
       "is below 90 % of the peers' median, or whose mean utilization is 20 points below "
       "theirs.\n"
       "Severity: warning. Evidence: clocks, utilization, power, temperature against the peers, "
       "the job and its GPUs; the cause names what held it back.\n"
       "Fix: the finding names it (settings, cooling, link); two GPUs are not twice as fast "
       "while one lags.",
       straggler},
      {"numa_affinity", "A process bound to CPUs of another NUMA node than its GPU",
       "Checks: a process holding the GPU may run only on CPUs outside the GPU's CPU affinity "
       "(NVML: the CPUs of its NUMA node).\n"
       "Severity: warning. Evidence: pid, its CPUs, the GPU's NUMA node and CPUs.\n"
       "Cause: the job, its launcher, numactl/taskset or a cgroup cpuset binds it to the other "
       "socket: host transfers and the input pipeline cross the socket link.\n"
       "Fix: numactl --cpunodebind=NODE --membind=NODE CMD (or taskset -c CPUS CMD).",
       numa_affinity},
      {"communication_bound", "A job spends its time in NCCL at well below its links' bandwidth",
       "Checks: a communicator of a job (the NCCL Inspector's records, joined with the job's "
       "GPUs) whose ranks spend at least 25 % of the job's wall time in NCCL operations. Its bus "
       "bandwidth is the rank that waited least's (the transfers without the waits), set against "
       "the peak each rank has to the others (NVLink or PCIe, as bench nccl computes it).\n"
       "Severity: warning below 50 % of that peak; info at or above it (the links are the "
       "limit) or when the peak is unknown. Evidence: time share, bus bandwidth, peak, mean "
       "message, ranks, nodes.\n"
       "Cause, first that applies: an NCCL setting in the job's environment (NCCL_P2P_DISABLE, "
       "NCCL_P2P_LEVEL, NCCL_SHM_DISABLE, NCCL_NVLS_ENABLE=0, NCCL_IB_DISABLE, channel limits), "
       "NVLinks down, a PCIe link below its maximum, GPUs on different NUMA nodes, the network "
       "between nodes, small messages (latency-bound).\n"
       "Fix: what the cause names; at the links' peak, overlap communication with compute or "
       "send less.",
       communication_bound},
      {"late_rank", "One rank arrives late at every collective: the others wait for it",
       "Checks: in a communicator (NCCL Inspector records), the collectives every rank recorded "
       "whose arrivals spread by 1 ms or more (arrival: from each GPU's execution time for "
       "all-reduce, all-gather, reduce-scatter and all-to-all, which end together; from traced "
       "kernel starts otherwise). One rank is last at 75 % or more of at least 5 such "
       "collectives, and they are at least 20 % of the shared ones.\n"
       "Severity: warning. Evidence: the rank, its pid and GPU, how late, how often, what the "
       "others waited.\n"
       "Cause: what held its GPU back against the other ranks' GPUs, first that applies: thermal "
       "slowdown, a HW slowdown or power brake, the power cap, a lower clock, a GPU idle more "
       "than the others (its process is late: input pipeline, host work); else the hardware "
       "shows none and the delay is the rank's own work.\n"
       "Fix: balance the rank's work or feed it faster; the clock rules name a clock cause.",
       late_rank},
  };
}

}  // namespace

const std::vector<Rule>& all_rules() {
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> all;
    for (auto group : {health_rules, clock_rules, setting_rules, link_rules, workload_rules}) {
      const auto some = group();
      all.insert(all.end(), some.begin(), some.end());
    }
    return all;
  }();
  return rules;
}

const Rule* find_rule(std::string_view name) {
  for (const auto& r : all_rules()) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

std::vector<Finding> evaluate(const Input& input, const std::vector<const Rule*>& rules,
                              const Thresholds& thresholds) {
  std::vector<const Rule*> chosen = rules;
  if (chosen.empty()) {
    for (const auto& r : all_rules()) chosen.push_back(&r);
  }
  std::vector<Finding> out;
  for (const auto* r : chosen) r->evaluate(input, thresholds, out);
  auto order = [](const std::string& rule) {
    const auto& all = all_rules();
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (all[i].name == rule) return i;
    }
    return all.size();
  };
  std::stable_sort(out.begin(), out.end(), [&](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    if (a.rule != b.rule) return order(a.rule) < order(b.rule);
    return a.gpus < b.gpus;
  });
  return out;
}

namespace detail {

std::vector<const FastSample*> select(const GpuWindow& w,
                                      const std::function<bool(const FastSample&)>& keep) {
  std::vector<const FastSample*> out;
  for (const auto& s : w.fast) {
    if (keep(s)) out.push_back(&s);
  }
  return out;
}

std::vector<const FastSample*> busy_samples(const GpuWindow& w, const Thresholds& t) {
  return select(w, [&](const FastSample& s) { return busy_sample(s, t); });
}

std::optional<double> reason_fraction(const std::vector<const FastSample*>& samples,
                                      std::uint64_t mask) {
  std::size_t known = 0, hit = 0;
  for (const auto* s : samples) {
    if (!s->clock_reasons) continue;
    ++known;
    if (s->clock_reasons->bits() & mask) ++hit;
  }
  if (known == 0) return std::nullopt;
  return static_cast<double>(hit) / static_cast<double>(known);
}

std::size_t count_reason(const std::vector<const FastSample*>& samples, std::uint64_t mask) {
  std::size_t n = 0;
  for (const auto* s : samples) {
    if (s->clock_reasons && (s->clock_reasons->bits() & mask)) ++n;
  }
  return n;
}

double held_seconds(const Input& in, const GpuWindow& w, std::size_t samples) {
  if (w.fast.empty()) return 0;
  return in.seconds() * static_cast<double>(samples) / static_cast<double>(w.fast.size());
}

std::optional<double> sm_clock_percentile(const std::vector<const FastSample*>& samples, double p) {
  std::vector<double> v;
  for (const auto* s : samples) {
    if (s->sm_clock) v.push_back(s->sm_clock->value());
  }
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::lround(p * static_cast<double>(v.size() - 1)));
  return v[std::min(rank, v.size() - 1)];
}

std::optional<double> mean_utilization(const GpuWindow& w) {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& s : w.fast) {
    if (s.gpu_utilization) sum += s.gpu_utilization->value(), ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

std::optional<double> mean_power(const GpuWindow& w) {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& s : w.fast) {
    if (s.power) sum += s.power->value(), ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

std::optional<double> max_temperature(const GpuWindow& w) {
  std::optional<double> m;
  for (const auto& s : w.fast) {
    if (s.gpu_temperature) m = std::max(m.value_or(-1e9), s.gpu_temperature->value());
  }
  return m;
}

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const auto n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::map<std::string, std::vector<const GpuWindow*>> by_model(const Input& in) {
  std::map<std::string, std::vector<const GpuWindow*>> out;
  for (const auto& w : in.gpus) {
    if (w.facts.unavailable_code == 0 && !w.health.lost) out[w.facts.name].push_back(&w);
  }
  return out;
}

std::string gpus_label(const std::vector<unsigned>& gpus) {
  return (gpus.size() == 1 ? "GPU " : "GPUs ") + gpu_list(gpus);
}

std::string gpu_list(const std::vector<unsigned>& gpus) {
  return fmt::format("{}", fmt::join(gpus, ","));
}

Finding make(std::string_view rule, Severity severity, std::vector<unsigned> gpus,
             std::string summary, std::string cause, std::string fix) {
  Finding f;
  f.rule = std::string(rule);
  f.severity = severity;
  f.gpus = std::move(gpus);
  f.summary = std::move(summary);
  f.cause = std::move(cause);
  f.fix = std::move(fix);
  f.docs = "docs/doctor.md#" + f.rule;
  return f;
}

void add(Finding& f, std::string key, double value, std::string unit, int precision) {
  f.evidence.push_back({std::move(key), std::move(unit), value, precision});
}

}  // namespace detail
}  // namespace gpuclk::rules
