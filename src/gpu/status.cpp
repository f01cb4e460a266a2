#include "gpu/status.h"

#include "nvml/error.h"

namespace gpuclk::gpu {

StatusSnapshot take_status_readings(const Device& d) {
  const auto& id = d.identity();
  const auto& limits = d.clock_limits();
  const auto& ratings = d.ratings();
  StatusSnapshot s;
  s.index = d.index();
  s.name = d.name();
  s.uuid = d.uuid();
  s.unavailable_code = id.unavailable_code;
  s.pstate = d.pstate();
  s.sm_clock = d.clock(ClockDomain::sm);
  s.sm_max = limits.max(ClockDomain::sm);
  s.memory_clock = d.clock(ClockDomain::memory);
  s.memory_max = limits.max(ClockDomain::memory);
  s.default_app_sm_clock = limits.default_app_clock[int(ClockDomain::graphics)];
  s.default_app_memory_clock = limits.default_app_clock[int(ClockDomain::memory)];
  s.power_draw = d.power_draw();
  s.default_power_limit = ratings.default_power_limit;
  s.temperature = d.temperature();
  s.slowdown_temperature = ratings.thresholds.slowdown;
  s.utilization = d.utilization();
  s.clock_reasons = d.clock_reasons();
  s.pcie_link = d.pcie_link();
  s.pcie_max = ratings.pcie_max;
  // A GPU that fell off the bus after it was opened (a service's, top's) answers every read with
  // GPU_IS_LOST: it is shown as one that could not be opened, as a fresh process would see it.
  if (s.unavailable_code == 0 && s.sm_clock.status() == ReadStatus::error &&
      Device::is_lost_error(s.sm_clock.error_code()) &&
      s.power_draw.status() == ReadStatus::error &&
      Device::is_lost_error(s.power_draw.error_code())) {
    StatusSnapshot lost;  // nothing read before the loss stays: not even the limits
    lost.index = s.index;
    lost.uuid = s.uuid;
    lost.unavailable_code = s.sm_clock.error_code();
    lost.name = std::string("(") + nvml::describe(nvmlReturn_t(lost.unavailable_code)) + ")";
    return lost;
  }
  return s;
}

void read_status_settings(const Device& d, StatusSnapshot& s) {
  s.app_sm_clock = d.app_clock(ClockDomain::graphics);
  s.app_memory_clock = d.app_clock(ClockDomain::memory);
  s.power_limit = d.power_limit();
  s.persistence_mode = d.persistence_mode();
  s.retired_pages = d.retired_pages();
}

std::string describe_read_error(int nvml_code) { return nvml::describe(nvmlReturn_t(nvml_code)); }

void copy_status_settings(const StatusSnapshot& from, StatusSnapshot& to) {
  if (to.unavailable_code != 0) return;  // a lost GPU has no settings, cached or not
  to.app_sm_clock = from.app_sm_clock;
  to.app_memory_clock = from.app_memory_clock;
  to.power_limit = from.power_limit;
  to.persistence_mode = from.persistence_mode;
  to.retired_pages = from.retired_pages;
}

StatusSnapshot take_status(const Device& d) {
  auto s = take_status_readings(d);
  read_status_settings(d, s);
  return s;
}

}  // namespace gpuclk::gpu
