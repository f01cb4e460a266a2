#include "gpu/status.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

namespace gpuclk::gpu {

StatusSnapshot take_status(const Device& d) {
  const auto& id = d.identity();
  StatusSnapshot s;
  s.index = d.index();
  s.name = d.name();
  s.uuid = d.uuid();
  s.unavailable_code = id.unavailable_code;
  s.pstate = d.pstate();
  s.sm_clock = d.clock(ClockDomain::sm);
  s.sm_max = id.max(ClockDomain::sm);
  s.memory_clock = d.clock(ClockDomain::memory);
  s.memory_max = id.max(ClockDomain::memory);
  s.app_sm_clock = d.app_clock(ClockDomain::graphics);
  s.app_memory_clock = d.app_clock(ClockDomain::memory);
  s.default_app_sm_clock = id.default_app_clock[int(ClockDomain::graphics)];
  s.default_app_memory_clock = id.default_app_clock[int(ClockDomain::memory)];
  s.power_draw = d.power_draw();
  s.power_limit = d.power_limit();
  s.default_power_limit = id.default_power_limit;
  s.temperature = d.temperature();
  s.slowdown_temperature = id.thresholds.slowdown;
  s.utilization = d.utilization();
  s.clock_reasons = d.clock_reasons();
  s.persistence_mode = d.persistence_mode();
  s.pcie_link = d.pcie_link();
  s.pcie_max = id.pcie_max;
  return s;
}

namespace {

std::string list(const std::vector<unsigned>& gpus) {
  return fmt::format("{}", fmt::join(gpus, ","));
}

// Groups GPUs by a setting's value (as text); a setting that differs gives a warning naming the
// odd GPUs against the majority value.
template <class Key>
void check_same(const std::vector<StatusSnapshot>& gpus, Key key, const std::string& what,
                const std::string& fix, std::vector<Finding>& out) {
  std::map<std::string, std::vector<unsigned>> groups;
  for (const auto& g : gpus) {
    auto k = key(g);
    if (!k.empty()) groups[k].push_back(g.index);
  }
  if (groups.size() < 2) return;
  auto majority = groups.begin();
  for (auto it = groups.begin(); it != groups.end(); ++it) {
    if (it->second.size() > majority->second.size()) majority = it;
  }
  for (auto it = groups.begin(); it != groups.end(); ++it) {
    if (it == majority) continue;
    Finding f;
    f.gpus = it->second;
    f.message = fmt::format(
        "GPU {}: {} {} differ from the other GPUs' {}; a multi-GPU job runs at "
        "the pace of its slowest GPU",
        list(it->second), what, it->first, majority->first);
    f.action = fix;
    out.push_back(std::move(f));
  }
}

bool busy(const StatusSnapshot& g) { return g.utilization && g.utilization->gpu.value() > 0.0; }

}  // namespace

std::vector<Finding> check_status(const std::vector<StatusSnapshot>& gpus) {
  std::vector<Finding> out;
  for (const auto& g : gpus) {
    if (g.unavailable_code == 0) continue;
    out.push_back(
        {Finding::Severity::warning,
         {g.index},
         fmt::format("GPU {}: cannot be read: {} (NVML error {})", g.index, g.name,
                     g.unavailable_code),
         g.unavailable_code == 15
             ? "the GPU fell off the bus: check `dmesg` for Xid errors; it needs a reset or reboot"
             : "check `nvidia-smi` and `dmesg`"});
  }

  // Only GPUs of one model are expected to match.
  std::map<std::string, std::vector<StatusSnapshot>> by_model;
  for (const auto& g : gpus) by_model[g.name].push_back(g);
  for (const auto& [model, same] : by_model) {
    check_same(
        same,
        [](const StatusSnapshot& g) {
          return g.app_sm_clock && g.app_memory_clock
                     ? fmt::format("{:.0f}/{:.0f} MHz", g.app_sm_clock->value(),
                                   g.app_memory_clock->value())
                     : std::string();
        },
        "application clocks (SM/memory)",
        "gpuclk set --all --app-clocks MEM,SM (the same on every GPU), or gpuclk reset "
        "--app-clocks",
        out);
    check_same(
        same,
        [](const StatusSnapshot& g) {
          return g.power_limit ? fmt::format("{:.0f} W", g.power_limit->value()) : std::string();
        },
        "power limits", "gpuclk set --all --power-limit WATTS (the same on every GPU)", out);
  }

  std::vector<unsigned> persistence_off;
  for (const auto& g : gpus) {
    if (g.persistence_mode && !*g.persistence_mode) persistence_off.push_back(g.index);
  }
  if (!persistence_off.empty()) {
    out.push_back(
        {Finding::Severity::warning, persistence_off,
         fmt::format("GPU {}: persistence mode is off: the driver tears the GPU down when "
                     "no process uses it, so each job starts slower and settings may be lost",
                     list(persistence_off)),
         "gpuclk set --all --persistence on (or enable nvidia-persistenced at boot)"});
  }

  for (const auto& g : gpus) {
    if (!g.pcie_link || !g.pcie_max) continue;
    const auto& now = *g.pcie_link;
    const auto& max = *g.pcie_max;
    if (now.width < max.width) {
      out.push_back({Finding::Severity::warning,
                     {g.index},
                     fmt::format("GPU {}: PCIe link runs x{} of x{}: host transfers are limited to "
                                 "{:.0f}% of what the slot allows",
                                 g.index, now.width, max.width, 100.0 * now.width / max.width),
                     "reseat the card or check the slot and riser; see `gpuclk info`"});
    }
    // Links train down at idle to save power; a lower generation matters only under load.
    if (now.generation < max.generation && busy(g)) {
      out.push_back({Finding::Severity::warning,
                     {g.index},
                     fmt::format("GPU {}: PCIe link at Gen{} of Gen{} while busy: host transfers "
                                 "run at about half the speed or less",
                                 g.index, now.generation, max.generation),
                     "check the slot, riser and BIOS PCIe settings; `gpuclk info` shows the link"});
    }
  }

  for (const auto& g : gpus) {
    if (g.clock_reasons) {
      const auto r = *g.clock_reasons;
      if (r.has(ClockReasons::hw_thermal_slowdown) || r.has(ClockReasons::sw_thermal_slowdown)) {
        out.push_back(
            {Finding::Severity::warning,
             {g.index},
             fmt::format("GPU {}: thermal slowdown active ({}): the GPU is too hot to run "
                         "at its clocks",
                         g.index, r.names()),
             "improve cooling (airflow, fan policy, inlet temperature)"});
      } else if (r.has(ClockReasons::hw_slowdown) || r.has(ClockReasons::hw_power_brake_slowdown)) {
        out.push_back(
            {Finding::Severity::warning,
             {g.index},
             fmt::format("GPU {}: hardware slowdown active ({})", g.index, r.names()),
             "check power supply and temperatures; `gpuclk clocks` explains each reason"});
      } else if (r.has(ClockReasons::sw_power_cap) && g.sm_clock && g.sm_max) {
        out.push_back(
            {Finding::Severity::info,
             {g.index},
             fmt::format("GPU {}: the power limit holds the SM clock at {:.0f} of {:.0f} MHz",
                         g.index, g.sm_clock->value(), g.sm_max->value()),
             "expected for heavy tensor work; `gpuclk stat -- CMD` shows how often"});
      }
    }
    if (g.temperature && g.slowdown_temperature &&
        g.temperature->value() >= g.slowdown_temperature->value() - 5.0) {
      out.push_back(
          {Finding::Severity::warning,
           {g.index},
           fmt::format("GPU {}: {:.0f} C, within 5 C of its slowdown temperature {:.0f} C", g.index,
                       g.temperature->value(), g.slowdown_temperature->value()),
           "improve cooling before clocks drop"});
    }
  }
  return out;
}

}  // namespace gpuclk::gpu
