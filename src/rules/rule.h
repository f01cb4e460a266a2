// The rules engine: one rule per problem, each a small unit that reads an Input (windows of
// samples + static facts) and adds Findings. Used by `gpuclk status` (one snapshot) and
// `gpuclk doctor` (a window of samples); the exporter's finding series and `top` read the same.
//
// Thresholds live in Thresholds below (one place; docs/doctor.md lists each with its rule).
// "Busy" everywhere means a fast sample whose GPU utilization is at least busy_utilization.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "rules/finding.h"
#include "rules/input.h"

namespace gpuclk::rules {

struct Thresholds {
  double busy_utilization = 0.5;          // a sample is "under load" from this GPU utilization on
  double power_capped_fraction = 0.5;     // power_capped: of the busy samples
  double power_limit_lowered = 0.95;      // power_capped: limit below this share of the default
  double app_clocks_fraction = 0.5;       // app_clocks_low: of the busy samples
  double thermal_fraction = 0.05;         // thermal_slowdown: of the busy samples
  double near_slowdown_c = 5;             // near_slowdown_temperature: within this of slowdown
  double hotter_than_peers_c = 10;        // hotter_than_peers: above the peers' median max temp
  double peers_utilization_delta = 0.1;   // ... whose mean utilization is within this of its own
  double peers_power_ratio = 0.1;         // ... and mean power within this share of its own
  double hw_slowdown_fraction = 0.01;     // hw_slowdown: of all samples
  double jitter_spread = 0.10;            // clock_jitter: busy p95 − p5 (no limiter) / max clock
  double clock_drop = 0.20;               // clock_jitter: a drop between two busy samples / max
  int clock_drops = 3;                    // clock_jitter: this many drops also count as jitter
  double starved_utilization = 0.30;      // input_starved: mean utilization below this ...
  double starved_process_fraction = 0.9;  // ... while a process held the GPU (of the samples)
  double starved_cpu_busy_pct = 80;       // ... and its holder at this % of a core: CPU-bound
  // ecc_errors: corrected errors in the window give a rate per hour (and a warning) only from
  // this many on; fewer are counted (info), not extrapolated: 1 error in 20 s is not 180 an hour.
  unsigned ecc_rate_min_errors = 5;
  double straggler_clock = 0.90;             // straggler: busy median clock below this × peers'
  double straggler_utilization = 0.20;       // straggler: mean utilization this far below peers'
  double straggler_peer_utilization = 0.30;  // straggler: peers at least this busy
  // nvlink_errors: corrected data-ECC errors per link and minute below this are the background
  // of a healthy link (18-96 per minute per link on a healthy 2x H100 NV18 host, idle or busy).
  double nvlink_ecc_per_minute = 1000;
  // retired_pages: NVIDIA's field diagnostic and DCGM's health check fail a GPU at 63 retired
  // pages (DCGM_LIMIT_MAX_RETIRED_PAGES; the InfoROM holds 64); warn from three quarters of the
  // 64, or beyond DCGM's soft limit of 15 pages retired after double-bit errors.
  unsigned retired_pages_limit = 63;
  unsigned retired_pages_near = 48;
  unsigned retired_dbe_pages_soft = 15;
  // communication_bound: a job spends at least this share of its wall time in NCCL operations
  // at a bus bandwidth below comm_bandwidth_fraction of its links' peak (a warning; at or above
  // it, info: the link is the limit). Messages below comm_small_message_bytes on average are
  // latency-bound, whatever the link.
  double comm_share = 0.25;
  double comm_bandwidth_fraction = 0.5;
  double comm_small_message_bytes = 1 << 20;
  // late_rank: one rank arrives last at this share of a communicator's delayed collectives (a
  // spread of telemetry::nccl::BuildOptions::delayed_us, 1 ms, or more between the first
  // arrival and the last), at least late_rank_min_operations of them, and they are at least
  // late_rank_delayed_share of the collectives every rank recorded.
  double late_rank_last_share = 0.75;
  std::size_t late_rank_min_operations = 5;
  double late_rank_delayed_share = 0.2;
};

// One rule. `explanation` is what `gpuclk doctor --explain NAME` prints: what it checks, its
// thresholds, the likely cause and the fix.
struct Rule {
  std::string_view name;  // snake_case, stable (JSON, --rules, Prometheus label values)
  std::string_view title;
  std::string_view explanation;
  void (*evaluate)(const Input& input, const Thresholds& t, std::vector<Finding>& out);
};

// Every rule, in the order findings are reported (most severe kinds first).
const std::vector<Rule>& all_rules();
// nullptr when no rule has this name.
const Rule* find_rule(std::string_view name);

// Runs `rules` (all when empty) over `input`; findings sorted by severity (critical first), then
// rule order, then GPU.
std::vector<Finding> evaluate(const Input& input, const std::vector<const Rule*>& rules = {},
                              const Thresholds& thresholds = {});

}  // namespace gpuclk::rules
