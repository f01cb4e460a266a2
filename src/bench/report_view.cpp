#include "bench/report_view.h"

#include <fmt/format.h>

#include <cmath>

#include "gpu/clock_reasons.h"

namespace gpuclk::bench {
namespace {

using output::mhz;
using output::Node;
using output::Value;

Value scaled(std::optional<double> v, double scale, const std::string& unit, int precision) {
  return v ? output::number(*v * scale, unit, precision) : output::na();
}
Value pct(std::optional<double> fraction) { return scaled(fraction, 100, "%", 1); }
template <class Q>
Value quantity(const std::optional<Q>& q, const char* unit, int precision) {
  return q ? output::number(q->value(), unit, precision) : output::na();
}
std::optional<double> value_of(const std::optional<units::Ratio>& r) {
  return r ? std::optional(r->value()) : std::nullopt;
}

std::string check_text(const Verification& v) {
  if (!v.checked) return "skipped";
  std::string text = v.passed ? "passed" : "FAILED";
  text += fmt::format(" ({} of {} elements off", v.failures, v.samples);
  // Not the error against `bound`: each element's allowance also has its output rounding.
  if (v.bound > 0 && std::isfinite(v.worst_of_allowed))
    text +=
        fmt::format("; the closest used {:.0f} % of its allowed error", v.worst_of_allowed * 100);
  return text + ")";
}

void add_rate(Node& n, const WorkloadReport& r, const DisplayUnits& u) {
  auto& rate = n.section("rate", "Rate (per repetition)");
  rate.add("median", "Median",
           output::number(r.rate.median * u.rate_scale, u.rate, u.rate_precision));
  rate.add("min", "Min", output::number(r.rate.min * u.rate_scale, u.rate, u.rate_precision));
  rate.add("max", "Max", output::number(r.rate.max * u.rate_scale, u.rate, u.rate_precision));
  rate.add("spread_pct", "Spread (max-min)/median", output::number(r.rate.spread * 100, "%", 1));
  rate.add("repetitions", "Repetitions", output::integer(r.rate.count));
  n.add("seconds", "Measured window", output::number(r.window_seconds, "s", 2));
}

void add_peak(Node& n, const WorkloadReport& r, const DisplayUnits& u) {
  const bool memory = r.peak && r.peak->domain == PeakDomain::memory_clock;
  const char* clock = memory ? "memory clock" : "SM clock";
  auto& peak = n.section("peak", "Theoretical peak");
  peak.add("at_max_clock", fmt::format("At max {}", clock),
           r.peak ? output::number(r.peak->at_max_clock * u.rate_scale, u.rate, u.rate_precision)
                  : output::na());
  peak.add("at_median_clock", fmt::format("At median {}", clock),
           scaled(r.peak ? r.peak->at_observed_clock : std::nullopt, u.rate_scale, u.rate,
                  u.rate_precision));
  peak.add("basis", "Basis", r.peak ? output::text(r.peak->basis) : output::na());
  auto& eff = n.section("efficiency_pct", "Efficiency (median rate / peak)");
  eff.add("at_max_clock", "At max clock", pct(r.efficiency_at_max_clock));
  eff.add("at_median_clock", "At median clock", pct(r.efficiency_at_observed_clock));
  auto& gap = n.section("gap_pct", "Gap to the max-clock peak");
  gap.add("clock", "From the clock", pct(r.gap ? std::optional(r.gap->clock) : std::nullopt));
  gap.add("kernel", "From the kernel", pct(r.gap ? std::optional(r.gap->kernel) : std::nullopt));
}

void add_telemetry(Node& n, const WorkloadReport& r, const DisplayUnits& u) {
  auto& sm = n.section("sm_clock_mhz", "SM clock");
  sm.add("median", "Median", mhz(r.sm_clock ? std::optional(r.sm_clock->median) : std::nullopt));
  sm.add("p5", "p5", mhz(r.sm_clock ? std::optional(r.sm_clock->p5) : std::nullopt));
  sm.add("p95", "p95", mhz(r.sm_clock ? std::optional(r.sm_clock->p95) : std::nullopt));
  sm.add("max", "Max (GPU)", mhz(r.gpu.max_sm_clock));
  auto& mem = n.section("memory_clock_mhz", "Memory clock");
  mem.add("median", "Median",
          mhz(r.memory_clock ? std::optional(r.memory_clock->median) : std::nullopt));
  mem.add("max", "Max (GPU)", mhz(r.gpu.max_memory_clock));
  auto& power = n.section("power_w", "Power");
  power.add("mean", "Mean", quantity(r.power_mean, "W", 1));
  power.add("peak", "Peak reading", quantity(r.power_peak, "W", 1));
  power.add("limit", "Limit", quantity(r.gpu.power_limit, "W", 0));
  n.add("energy_j", "Energy", quantity(r.energy, "J", 1));
  n.add("per_watt", "Performance per watt",
        scaled(r.rate_per_watt, u.per_watt_scale, u.per_watt, 1));
  n.add("energy_per_unit", "Energy per unit of work",
        scaled(r.joules_per_unit, u.energy_per_unit_scale, u.energy_per_unit, 3));
  auto& reasons = n.section("clock_reasons_pct", "Clock event reasons (time active)");
  for (const auto& share : r.reasons) reasons.add(share.key, share.key, pct(share.fraction));
  if (reasons.children.empty())
    reasons.value = r.has_telemetry ? output::text("none") : output::na();
  auto& activity = n.section("activity_pct", "Activity (mean)");
  const auto none = std::optional<units::Ratio>{};
  activity.add("gpu", "GPU busy", pct(value_of(r.gpu_utilization)));
  activity.add("sm", "SM (GPM)", pct(value_of(r.gpm ? r.gpm->sm : none)));
  activity.add("tensor", "Tensor (GPM)", pct(value_of(r.gpm ? r.gpm->tensor : none)));
  activity.add("dram", "DRAM (GPM)", pct(value_of(r.gpm ? r.gpm->dram : none)));
  n.add("temperature_max_c", "Max temperature", quantity(r.temperature_max, "C", 0));
}

}  // namespace

DisplayUnits display_units(RateUnit unit) {
  if (unit == RateUnit::byte_per_second) return {"GB/s", 1e-9, "GB/s/W", 1e-9, "J/TB", 1e12, 1};
  return {"TFLOP/s", 1e-12, "GFLOP/s/W", 1e-9, "J/TFLOP", 1e12, 2};
}

std::optional<RateUnit> rate_unit_from_display(std::string_view rate) {
  for (RateUnit u : {RateUnit::flop_per_second, RateUnit::byte_per_second}) {
    if (display_units(u).rate == rate) return u;
  }
  return std::nullopt;
}

Node result_node(const WorkloadReport& r, const ViewOptions& options) {
  const DisplayUnits u = display_units(r.unit);
  Node n{"result", fmt::format("GPU {}: {} {}", r.gpu.index, r.workload, r.variant), {}, {}, false};
  auto& gpu = n.section("gpu", "GPU");
  gpu.add("index", "Index", output::integer(r.gpu.index));
  gpu.add("name", "Name", output::text(r.gpu.name));
  gpu.add("uuid", "UUID", output::text(r.gpu.uuid));
  gpu.add("pci_bus_id", "PCI bus id", output::text(r.gpu.pci_bus_id));
  gpu.add("cuda_ordinal", "CUDA ordinal", output::integer(r.cuda_ordinal));
  n.add("workload", "Workload", output::text(r.workload));
  n.add("variant", "Variant", output::text(r.variant));
  // Every run names its inputs; a report written before runs did (a committed fixture) has none.
  if (!r.input.empty()) n.add("input", "Inputs", output::text(r.input));
  n.add("unit", "Unit", output::text(u.rate));
  add_rate(n, r, u);
  add_peak(n, r, u);
  add_telemetry(n, r, u);
  n.add("check", "Result check", output::text(check_text(r.verification)));
  n.add("verdict", "Verdict", output::text(r.verdicts.empty() ? "" : r.verdicts.front().text));
  std::string more;
  for (std::size_t i = 1; i < r.verdicts.size(); ++i) {
    more += (more.empty() ? "" : "; ") + r.verdicts[i].text;
  }
  n.add("also", "Also", more.empty() ? output::na() : output::text(more));
  if (options.details) {
    auto& details = n.section("details", "Details");
    for (const auto& [key, value] : r.details) details.add(key, key, output::text(value));
  }
  if (options.repetitions) {
    auto& reps = n.section("repetitions", "Repetitions", true);
    for (const Repetition& rep : r.repetitions) {
      auto& e = reps.section("repetition", "");
      e.add("start_s", "Start", output::number(rep.start_seconds, "s", 4));
      e.add("seconds", "Duration", output::number(rep.seconds, "s", 4));
      e.add("launches", "Launches", output::integer(rep.launches));
      e.add("rate", "Rate", output::number(rep.rate * u.rate_scale, u.rate, u.rate_precision + 2));
    }
  }
  return n;
}

Node bench_tree(const BenchRun& run, const ViewOptions& options) {
  Node root;
  root.add("format", "Report format", output::text(kReportFormat));
  auto& settings = root.section("settings", "Settings");
  settings.add("seconds", "Measured window per workload", output::number(run.seconds, "s", 2));
  settings.add("warmup_seconds", "Warm-up", output::number(run.warmup_seconds, "s", 2));
  settings.add("concurrent", "GPUs at once", output::flag(run.concurrent));
  settings.add("sample_interval_ms", "Telemetry every",
               output::number(run.sample_interval_ms, "ms", 0));
  auto& results = root.section("results", "Results", true);
  for (const auto& r : run.reports) results.children.push_back(result_node(r, options));
  if (!run.across_gpus.empty()) {
    auto& across = root.section("across_gpus", "Across GPUs", true);
    for (const auto& a : run.across_gpus) {
      const auto& fast = run.reports[a.fastest];
      const auto& slow = run.reports[a.slowest];
      const DisplayUnits u = display_units(fast.unit);
      auto& e = across.section("workload", fmt::format("{} {}", a.workload, a.variant));
      e.add("workload", "Workload", output::text(a.workload));
      e.add("variant", "Variant", output::text(a.variant));
      e.add("fastest_gpu", "Fastest GPU", output::integer(fast.gpu.index));
      e.add("fastest_rate", "Fastest rate",
            output::number(fast.rate.median * u.rate_scale, u.rate, u.rate_precision));
      e.add("slowest_gpu", "Slowest GPU", output::integer(slow.gpu.index));
      e.add("slowest_rate", "Slowest rate",
            output::number(slow.rate.median * u.rate_scale, u.rate, u.rate_precision));
      e.add("slowest_vs_fastest_pct", "Slowest / fastest",
            output::number(a.slowest_vs_fastest * 100, "%", 1));
      e.add("verdict", "Verdict", output::text(a.verdict));
    }
  }
  if (!run.errors.empty()) {
    auto& errors = root.section("errors", "Errors", true);
    for (const auto& err : run.errors) {
      auto& e = errors.section(
          "error", fmt::format("GPU {}: {} {}", err.gpu_index, err.workload, err.variant));
      e.add("gpu", "GPU", output::integer(err.gpu_index));
      e.add("workload", "Workload", output::text(err.workload));
      e.add("variant", "Variant", output::text(err.variant));
      e.add("exit_code", "Exit code", output::integer(static_cast<int>(err.code)));
      e.add("message", "Message", output::text(err.message));
      e.add("hint", "Hint", err.hint.empty() ? output::na() : output::text(err.hint));
    }
  }
  root.children.push_back(environment_node(run.environment));
  return root;
}

}  // namespace gpuclk::bench
