// gpuclk_sim_*: the library's own exports (see gpuclk_sim.h).
#include <cmath>
#include <limits>
#include <string>

#include "abi_common.h"
#include "gpu_model.h"
#include "gpuclk_sim.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename Result, typename Body>
Result with_model(Result on_error, Body&& body) {
  Context& c = Context::get();
  std::lock_guard<std::recursive_mutex> guard(c.mutex());
  try {
    if (!c.ensure_loaded()) return on_error;
    c.sync();
    return body(c);
  } catch (const std::exception&) {
    return on_error;
  }
}

}  // namespace

GPUCLK_SIM_EXPORT double gpuclk_sim_time_scale(void) {
  return with_model(1.0, [](Context& c) { return c.speed(); });
}

GPUCLK_SIM_EXPORT double gpuclk_sim_time(void) {
  return with_model(kNaN, [](Context& c) { return c.model().now_s(); });
}

GPUCLK_SIM_EXPORT int gpuclk_sim_advance(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return -1;
  return with_model(-1, [&](Context& c) {
    c.skip(seconds);
    return 0;
  });
}

GPUCLK_SIM_EXPORT int gpuclk_sim_reset(void) {
  return with_model(-1, [](Context& c) {
    c.reset();
    return 0;
  });
}

GPUCLK_SIM_EXPORT int gpuclk_sim_gpu_truth(unsigned int index, gpuclk_sim_gpu_truth_t* out) {
  if (!out) return -1;
  return with_model(-1, [&](Context& c) {
    if (index >= c.model().gpu_count()) return -1;
    const GpuConfig& config = c.model().config(index);
    const GpuState& s = c.model().gpu(index);
    const GpuDynamics& d = s.dynamics;
    *out = {};
    out->time_s = c.model().now_s();
    out->energy_j = d.energy_j;
    out->power_w = d.power_w;
    out->power_average_w = average_power_w(s);
    out->die_c = d.die_c;
    out->sink_c = d.sink_c;
    out->sm_mhz = d.sm_mhz;
    out->memory_mhz = d.memory_mhz;
    out->event_reasons = d.event_reasons;
    out->phase_index = d.phase_index;
    out->iterations = d.iterations;
    out->total_flops = d.total_flops;
    out->total_dram_bytes = d.total_dram_bytes;
    out->total_pcie_bytes = d.total_pcie_bytes;
    out->context_active = static_cast<int>(d.context_active);
    out->lost = static_cast<int>(d.lost);
    const Phase* phase = current_phase(config, s);
    const std::string name = phase ? phase->name : "off";
    std::snprintf(out->phase_name, sizeof out->phase_name, "%s", name.c_str());
    return 0;
  });
}

GPUCLK_SIM_EXPORT double gpuclk_sim_energy_joules(unsigned int index) {
  return with_model(kNaN, [&](Context& c) {
    return index < c.model().gpu_count() ? c.model().gpu(index).dynamics.energy_j : kNaN;
  });
}

GPUCLK_SIM_EXPORT const char* gpuclk_sim_scenario_path(void) {
  static thread_local std::string path;
  return with_model<const char*>("", [&](Context& c) {
    path = c.scenario_path().string();
    return path.c_str();
  });
}

GPUCLK_SIM_EXPORT const char* gpuclk_sim_state_path(void) {
  static thread_local std::string path;
  return with_model<const char*>("", [&](Context& c) {
    path = c.state_path().string();
    return path.c_str();
  });
}

GPUCLK_SIM_EXPORT const char* gpuclk_sim_last_error(void) {
  static thread_local std::string error;
  Context& c = Context::get();
  std::lock_guard<std::recursive_mutex> guard(c.mutex());
  c.ensure_loaded();
  error = c.last_error();
  return error.c_str();
}
