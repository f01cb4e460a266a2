// Helpers shared by the simulator's unit tests (tests/unit/sim_*_test.cpp): scenario paths and
// a one-GPU scenario built in code around the calibrated H100 model.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "scenario.h"

namespace gpuclk::sim::testing {

inline std::filesystem::path scenarios_dir() {
  return std::filesystem::path(GPUCLK_SOURCE_DIR) / "sim" / "scenarios";
}

inline Scenario load(const std::string& name) {
  return load_scenario(scenarios_dir() / (name + ".toml"), {scenarios_dir()});
}

inline std::shared_ptr<const GpuSpec> h100() {
  static auto spec = load_gpu_spec(scenarios_dir() / "models" / "h100-sxm5-80gb.toml");
  return spec;
}

// One H100 at the driver's defaults running `phases` once (or forever with repeat).
inline Scenario one_gpu(std::vector<Phase> phases, bool repeat = false, bool privileged = true) {
  Scenario s;
  s.name = "test";
  s.privileged = privileged;
  s.fingerprint = 42;
  GpuConfig g;
  g.spec = h100();
  g.uuid = "GPU-00000000-0000-0000-0000-000000000000";
  g.app_sm_mhz = g.spec->default_app_sm_mhz;
  g.app_memory_mhz = g.spec->default_app_memory_mhz;
  g.power_limit_mw = static_cast<std::uint32_t>(g.spec->power_limit_default_w * 1000);
  g.pcie_generation = g.pcie_slot_max_generation = g.spec->pcie_max_generation;
  g.pcie_width = g.spec->pcie_max_width;
  g.ambient_c = g.spec->ambient_c;
  g.workload.phases = std::move(phases);
  g.workload.repeat = repeat;
  g.workload.process = {1234, "test", 1ULL << 30, {}};
  s.gpus.push_back(g);
  return s;
}

inline Phase compute(DataType type, double tflop, double intensity = 0) {
  Phase p;
  p.name = "compute";
  p.kind = PhaseKind::compute;
  p.dtype = type;
  p.flops = tflop * 1e12;
  p.intensity = intensity;
  return p;
}

inline Phase memory(double gib) {
  Phase p;
  p.name = "memory";
  p.kind = PhaseKind::memory;
  p.dtype = DataType::fp32;
  p.bytes = gib * 1024.0 * 1024.0 * 1024.0;
  return p;
}

inline Phase wait(PhaseKind kind, double seconds) {
  Phase p;
  p.name = kind == PhaseKind::off ? "off" : "idle";
  p.kind = kind;
  p.seconds = seconds;
  return p;
}

}  // namespace gpuclk::sim::testing
