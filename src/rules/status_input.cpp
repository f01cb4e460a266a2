#include "rules/status_input.h"

namespace gpuclk::rules {

namespace {

template <class T>
std::optional<T> opt(const gpu::Reading<T>& r) {
  return r ? std::optional<T>(*r) : std::nullopt;
}

}  // namespace

Input status_input(const std::vector<gpu::StatusSnapshot>& gpus) {
  Input in;
  for (const auto& g : gpus) {
    GpuWindow w;
    auto& f = w.facts;
    f.index = g.index;
    f.name = g.name;
    f.uuid = g.uuid;
    f.unavailable_code = g.unavailable_code;
    f.max_sm_clock = opt(g.sm_max);
    f.app_sm_clock = opt(g.app_sm_clock);
    f.app_memory_clock = opt(g.app_memory_clock);
    f.default_app_sm_clock = opt(g.default_app_sm_clock);
    f.default_app_memory_clock = opt(g.default_app_memory_clock);
    f.power_limit = opt(g.power_limit);
    f.default_power_limit = opt(g.default_power_limit);
    f.slowdown_temperature = opt(g.slowdown_temperature);
    f.persistence_mode = opt(g.persistence_mode);
    f.pcie_link = opt(g.pcie_link);
    f.pcie_max = opt(g.pcie_max);
    f.retired_pages = opt(g.retired_pages);
    if (g.unavailable_code == 0) {
      telemetry::FastSample s;
      s.sm_clock = opt(g.sm_clock);
      s.memory_clock = opt(g.memory_clock);
      s.power = opt(g.power_draw);
      s.gpu_temperature = opt(g.temperature);
      if (g.utilization) {
        s.gpu_utilization = g.utilization->gpu;
        s.memory_utilization = g.utilization->memory;
      }
      s.clock_reasons = opt(g.clock_reasons);
      s.pstate = opt(g.pstate);
      w.fast.push_back(s);
    }
    in.gpus.push_back(std::move(w));
  }
  return in;
}

}  // namespace gpuclk::rules
