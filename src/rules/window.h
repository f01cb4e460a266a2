// Helpers the rules share: what a window of samples says (busy samples, fractions with a clock
// reason, clock statistics), and building findings. Internal to src/rules.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rules/rule.h"

namespace gpuclk::rules::detail {

using telemetry::FastSample;

inline bool busy_sample(const FastSample& s, const Thresholds& t) {
  return s.gpu_utilization && s.gpu_utilization->value() >= t.busy_utilization;
}

// The samples for which `keep` holds.
std::vector<const FastSample*> select(const GpuWindow& w,
                                      const std::function<bool(const FastSample&)>& keep);
std::vector<const FastSample*> busy_samples(const GpuWindow& w, const Thresholds& t);

// Among `samples` with clock reasons known, the fraction with any bit of `mask`; nullopt when
// none had reasons.
std::optional<double> reason_fraction(const std::vector<const FastSample*>& samples,
                                      std::uint64_t mask);
// How many of `samples` have any bit of `mask`.
std::size_t count_reason(const std::vector<const FastSample*>& samples, std::uint64_t mask);

// Time the samples stand for: their share of the window's samples × the window's length.
double held_seconds(const Input& in, const GpuWindow& w, std::size_t samples);

// Percentiles (0..1) of the SM clock over `samples` (nearest rank); nullopt when no clock.
std::optional<double> sm_clock_percentile(const std::vector<const FastSample*>& samples, double p);
std::optional<double> mean_utilization(const GpuWindow& w);
std::optional<double> mean_power(const GpuWindow& w);  // W
std::optional<double> max_temperature(const GpuWindow& w);
std::optional<double> median(std::vector<double> values);

// GPUs grouped by model (name), usable ones only (not lost at open).
std::map<std::string, std::vector<const GpuWindow*>> by_model(const Input& in);

std::string gpu_list(const std::vector<unsigned>& gpus);  // "0,2"
// "GPU 1", "GPUs 0,2": a finding's subject.
std::string gpus_label(const std::vector<unsigned>& gpus);

// A finding of `rule` for `gpus`, its docs link set.
Finding make(std::string_view rule, Severity severity, std::vector<unsigned> gpus,
             std::string summary, std::string cause, std::string fix);
void add(Finding& f, std::string key, double value, std::string unit = {}, int precision = 0);

// The rule groups (one source file each).
void power_capped(const Input&, const Thresholds&, std::vector<Finding>&);
void app_clocks_low(const Input&, const Thresholds&, std::vector<Finding>&);
void thermal_slowdown(const Input&, const Thresholds&, std::vector<Finding>&);
void near_slowdown_temperature(const Input&, const Thresholds&, std::vector<Finding>&);
void hotter_than_peers(const Input&, const Thresholds&, std::vector<Finding>&);
void hw_slowdown(const Input&, const Thresholds&, std::vector<Finding>&);
void clock_jitter(const Input&, const Thresholds&, std::vector<Finding>&);
void settings_differ(const Input&, const Thresholds&, std::vector<Finding>&);
void persistence_off(const Input&, const Thresholds&, std::vector<Finding>&);
void pcie_link_degraded(const Input&, const Thresholds&, std::vector<Finding>&);
void pcie_replays(const Input&, const Thresholds&, std::vector<Finding>&);
void nvlink_down(const Input&, const Thresholds&, std::vector<Finding>&);
void nvlink_errors(const Input&, const Thresholds&, std::vector<Finding>&);
void nvlink_fewer_links(const Input&, const Thresholds&, std::vector<Finding>&);
void input_starved(const Input&, const Thresholds&, std::vector<Finding>&);
void straggler(const Input&, const Thresholds&, std::vector<Finding>&);
void numa_affinity(const Input&, const Thresholds&, std::vector<Finding>&);
void ecc_errors(const Input&, const Thresholds&, std::vector<Finding>&);
void row_remapping(const Input&, const Thresholds&, std::vector<Finding>&);
void retired_pages(const Input&, const Thresholds&, std::vector<Finding>&);
void gpu_lost(const Input&, const Thresholds&, std::vector<Finding>&);
void xid_errors(const Input&, const Thresholds&, std::vector<Finding>&);
void communication_bound(const Input&, const Thresholds&, std::vector<Finding>&);
void late_rank(const Input&, const Thresholds&, std::vector<Finding>&);

}  // namespace gpuclk::rules::detail
