#include "control/nvml_gpu_control.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "nvml/api.h"

namespace gpuclk::control {
namespace {

unsigned to_nvml(ClockBound b) {
  switch (b.kind) {
    case ClockBound::Kind::tdp:
      return NVML_CLOCK_LIMIT_ID_TDP;
    case ClockBound::Kind::unlimited:
      return NVML_CLOCK_LIMIT_ID_UNLIMITED;
    case ClockBound::Kind::mhz:
      break;
  }
  return b.mhz;
}

unsigned whole_mhz(units::Megahertz f) { return static_cast<unsigned>(std::lround(f.value())); }

}  // namespace

WriteAccess allow_writes(bool read_only, std::string_view command) {
  if (read_only) {
    throw Error(ExitCode::no_permission,
                fmt::format("read-only mode: `gpuclk {}` would change GPU settings, and this "
                            "gpuclk refuses every change (--read-only or GPUCLK_READ_ONLY=1)",
                            command),
                "on a host where changing clocks is allowed, drop --read-only and unset "
                "GPUCLK_READ_ONLY; changes also need root or CAP_SYS_ADMIN");
  }
  return WriteAccess();
}

GpuFacts facts_of(const gpu::Device& device) {
  const auto& id = device.identity();
  const auto& limits = device.clock_limits();
  const auto& ratings = device.ratings();
  GpuFacts f;
  f.index = device.index();
  f.uuid = device.uuid();
  f.name = device.name();
  f.unavailable_code = device.available() ? 0 : device.identity().unavailable_code;
  f.lost = !device.available() && gpu::Device::is_lost_error(f.unavailable_code);
  if (id.pci) f.pci_bus_id = id.pci->bus_id;
  if (id.arch) f.architecture = std::string(id.arch->family);
  f.hopper = id.architecture && *id.architecture == NVML_DEVICE_ARCH_HOPPER;
  if (f.hopper && f.architecture.empty()) f.architecture = "Hopper";
  f.supported_clocks = limits.supported_clocks;
  f.power_constraints = ratings.power_constraints;
  f.default_power_limit_mw = ratings.default_power_limit_mw;
  // Lost after it was opened: its reads say so.
  for (int code : {ratings.power_constraints.error_code(), limits.supported_clocks.error_code(),
                   ratings.default_power_limit_mw.error_code()}) {
    if (code != 0 && gpu::Device::is_lost_error(code)) f.lost = true;
  }
  const auto& gfx = limits.default_app_clock[int(gpu::ClockDomain::graphics)];
  const auto& mem = limits.default_app_clock[int(gpu::ClockDomain::memory)];
  if (gfx && mem)
    f.default_application_clocks = ApplicationClocks{whole_mhz(*mem), whole_mhz(*gfx)};
  return f;
}

Settings read_settings(const gpu::Device& device) {
  Settings s;
  if (auto p = device.persistence_mode()) s.persistence_mode = *p;
  auto gfx = device.app_clock(gpu::ClockDomain::graphics);
  auto mem = device.app_clock(gpu::ClockDomain::memory);
  if (gfx && mem) s.application_clocks = ApplicationClocks{whole_mhz(*mem), whole_mhz(*gfx)};
  // In integer mW: a restore must write back exactly the number that was read.
  if (auto mw = device.power_limit_mw()) s.power_limit_mw = *mw;
  return s;
}

LiveClocks live_clocks(const gpu::Device& device) {
  LiveClocks c;
  c.sm = device.clock(gpu::ClockDomain::sm);
  c.memory = device.clock(gpu::ClockDomain::memory);
  if (auto r = device.clock_reasons()) c.clock_event_reasons = r->names();
  return c;
}

NvmlGpuControl::NvmlGpuControl(const gpu::Device& device, std::optional<WriteAccess> access)
    : device_(device), access_(access), facts_(facts_of(device)) {}

void NvmlGpuControl::require_access() const {
  if (!access_) {
    throw Error(ExitCode::no_permission,
                fmt::format("GPU {}: no write access (dry run or read-only mode)", facts_.index));
  }
}

Settings NvmlGpuControl::read_settings() const { return control::read_settings(device_); }
LiveClocks NvmlGpuControl::live_clocks() const { return control::live_clocks(device_); }

void NvmlGpuControl::set_persistence_mode(bool enabled) {
  require_access();
  NVML_CHECK(device_.api(), nvmlDeviceSetPersistenceMode, device_.handle(),
             enabled ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED);
}

void NvmlGpuControl::set_application_clocks(ApplicationClocks clocks) {
  require_access();
  NVML_CHECK(device_.api(), nvmlDeviceSetApplicationsClocks, device_.handle(), clocks.memory_mhz,
             clocks.graphics_mhz);
}

void NvmlGpuControl::reset_application_clocks() {
  require_access();
  NVML_CHECK(device_.api(), nvmlDeviceResetApplicationsClocks, device_.handle());
}

void NvmlGpuControl::lock_gpu_clocks(ClockBound min, ClockBound max) {
  require_access();
  NVML_CHECK(device_.api(), nvmlDeviceSetGpuLockedClocks, device_.handle(), to_nvml(min),
             to_nvml(max));
}

void NvmlGpuControl::reset_gpu_locked_clocks() {
  require_access();
  NVML_CHECK(device_.api(), nvmlDeviceResetGpuLockedClocks, device_.handle());
}

void NvmlGpuControl::lock_memory_clocks(ClockBound min, ClockBound max) {
  require_access();
  NVML_CHECK(device_.api(), nvmlDeviceSetMemoryLockedClocks, device_.handle(), to_nvml(min),
             to_nvml(max));
}

void NvmlGpuControl::reset_memory_locked_clocks() {
  require_access();
  NVML_CHECK(device_.api(), nvmlDeviceResetMemoryLockedClocks, device_.handle());
}

void NvmlGpuControl::set_power_limit(units::Milliwatts limit) {
  require_access();
  // validate() keeps every target inside the GPU's own range, which NVML gives as 32-bit mW.
  if (limit.count() > std::numeric_limits<unsigned>::max()) {
    throw bad_argument(
        fmt::format("GPU {}: power limit {} does not fit the driver's 32-bit "
                    "milliwatts",
                    facts_.index, describe_watts(limit)));
  }
  NVML_CHECK(device_.api(), nvmlDeviceSetPowerManagementLimit, device_.handle(),
             static_cast<unsigned>(limit.count()));
}

}  // namespace gpuclk::control
