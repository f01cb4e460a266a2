#include "govern/classifier.h"

#include <array>
#include <cmath>

namespace gpuclk::govern {
namespace {

constexpr std::array<std::string_view, kPhaseClassCount> kNames = {
    "compute_bound", "memory_bound", "idle", "power_capped", "unknown"};

}  // namespace

std::string_view to_string(PhaseClass c) { return kNames[static_cast<std::size_t>(c)]; }

std::optional<PhaseClass> phase_class_by_name(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<PhaseClass>(i);
  }
  return std::nullopt;
}

PhaseClass classify(const Signals& s, const ClassifierThresholds& t) {
  if (!s.complete()) return PhaseClass::unknown;
  using R = gpu::ClockReasons;
  // The power controller decides the clock: a lower cap would only add to its slowdown.
  if (s.reasons->has(R::sw_power_cap) || s.reasons->has(R::hw_power_brake_slowdown)) {
    return PhaseClass::power_capped;
  }
  const double sm = s.sm_active->value();
  const double dram = s.dram_active->value();
  // A NaN compares false everywhere and would fall through to compute_bound.
  if (!std::isfinite(sm) || !std::isfinite(dram)) return PhaseClass::unknown;
  if (sm < t.idle_activity && dram < t.idle_activity) return PhaseClass::idle;
  if (dram >= t.memory_dram && dram > s.pipe_active()) return PhaseClass::memory_bound;
  return PhaseClass::compute_bound;
}

}  // namespace gpuclk::govern
