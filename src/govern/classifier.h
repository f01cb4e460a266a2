// Sorts one interval of one GPU into the class that decides what its SM clock buys:
//   compute_bound  — an arithmetic pipe is the busiest unit: the clock buys throughput;
//   memory_bound   — DRAM bandwidth is the busiest unit: the clock buys little;
//   idle           — nothing runs (a process may hold its context: clocks stay up for nothing);
//   power_capped   — the power controller already holds the clock down (never fight it);
//   unknown        — a key reading is missing: the governor holds the safe decision (max clock).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "govern/signals.h"

namespace gpuclk::govern {

enum class PhaseClass : std::uint8_t { compute_bound, memory_bound, idle, power_capped, unknown };
inline constexpr int kPhaseClassCount = 5;

// "compute_bound", "memory_bound", "idle", "power_capped", "unknown".
std::string_view to_string(PhaseClass c);
std::optional<PhaseClass> phase_class_by_name(std::string_view name);

struct ClassifierThresholds {
  double idle_activity = 0.05;  // SM and DRAM activity below this: nothing runs
  double memory_dram = 0.40;    // DRAM activity at least this, and above every pipe's: memory-bound
};

PhaseClass classify(const Signals& signals, const ClassifierThresholds& thresholds = {});

}  // namespace gpuclk::govern
