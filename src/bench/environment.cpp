#include "bench/environment.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <ctime>

#include "bench/workload.h"

#ifndef GPUCLK_VERSION
#define GPUCLK_VERSION "unknown"
#endif

namespace gpuclk::bench {
namespace {

template <class T>
std::optional<T> optional(const gpu::Reading<T>& r) {
  return r ? std::optional<T>(*r) : std::nullopt;
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string hostname() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

output::Value watts(const std::optional<units::Watts>& w) {
  return w ? output::number(w->value(), "W", 0) : output::na();
}
output::Value text(const std::optional<std::string>& s) {
  return s && !s->empty() ? output::text(*s) : output::na();
}

}  // namespace

GpuFacts gpu_facts(const gpu::Device& device) {
  const gpu::Identity& id = device.identity();
  const auto& limits = device.clock_limits();
  GpuFacts f;
  f.index = device.index();
  f.name = device.name();
  f.uuid = device.uuid();
  if (id.pci) f.pci_bus_id = id.pci->bus_id;
  f.max_sm_clock = optional(limits.max(gpu::ClockDomain::sm));
  f.max_memory_clock = optional(limits.max(gpu::ClockDomain::memory));
  f.memory_bus_width_bits = optional(id.memory_bus_width);
  f.power_limit = optional(device.enforced_power_limit());
  if (!f.power_limit) f.power_limit = optional(device.power_limit());
  return f;
}

GpuSettings gpu_settings(const gpu::Device& device) {
  const gpu::Identity& id = device.identity();
  const auto& limits = device.clock_limits();
  const auto& ratings = device.ratings();
  GpuSettings s;
  s.facts = gpu_facts(device);
  if (id.compute_capability) {
    s.compute_capability =
        fmt::format("{}.{}", id.compute_capability->major, id.compute_capability->minor);
  }
  s.default_power_limit = optional(ratings.default_power_limit);
  s.app_sm_clock = optional(device.app_clock(gpu::ClockDomain::graphics));
  s.app_memory_clock = optional(device.app_clock(gpu::ClockDomain::memory));
  s.default_app_sm_clock = optional(limits.default_app_clock[int(gpu::ClockDomain::graphics)]);
  s.default_app_memory_clock = optional(limits.default_app_clock[int(gpu::ClockDomain::memory)]);
  s.persistence_mode = optional(device.persistence_mode());
  s.temperature_at_start = optional(device.temperature());
  return s;
}

Environment collect_environment(const gpu::DeviceSet& set, const std::vector<gpu::Device*>& devices,
                                std::string command_line) {
  Environment env;
  env.gpuclk_version = GPUCLK_VERSION;
  env.hostname = hostname();
  env.started_at = utc_now();
  env.command_line = std::move(command_line);
  env.driver_version = optional(set.driver_version());
  env.nvml_version = optional(set.nvml_version());
  env.cuda_driver_version = optional(set.cuda_driver_version());
  env.cuda_runtime_version = cuda_runtime_version();
  for (const gpu::Device* d : devices) env.gpus.push_back(gpu_settings(*d));
  return env;
}

std::string cuda_version_text(int version) {
  if (version <= 0) return {};
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

output::Node environment_node(const Environment& env) {
  output::Node n{"environment", "Environment", {}, {}, false};
  n.add("gpuclk_version", "gpuclk", output::text(env.gpuclk_version));
  n.add("host", "Host", output::text(env.hostname));
  n.add("started_at", "Started (UTC)", output::text(env.started_at));
  n.add("command", "Command", output::text(env.command_line));
  n.add("driver_version", "Driver", text(env.driver_version));
  n.add("nvml_version", "NVML", text(env.nvml_version));
  n.add("cuda_driver_version", "CUDA (driver)",
        text(env.cuda_driver_version ? std::optional(cuda_version_text(*env.cuda_driver_version))
                                     : std::nullopt));
  n.add("cuda_runtime_version", "CUDA (gpuclk's runtime)",
        text(cuda_version_text(env.cuda_runtime_version)));
  auto& gpus = n.section("gpus", "GPUs", true);
  for (const GpuSettings& g : env.gpus) {
    output::Node& gpu = gpus.section("gpu", fmt::format("GPU {}", g.facts.index));
    gpu.add("index", "Index", output::integer(g.facts.index));
    gpu.add("name", "Name", output::text(g.facts.name));
    gpu.add("uuid", "UUID", output::text(g.facts.uuid));
    gpu.add("pci_bus_id", "PCI bus id", output::text(g.facts.pci_bus_id));
    gpu.add("compute_capability", "Compute capability", text(g.compute_capability));
    gpu.add("persistence_mode", "Persistence mode",
            g.persistence_mode ? output::flag(*g.persistence_mode) : output::na());
    gpu.add("power_limit_w", "Power limit (enforced)", watts(g.facts.power_limit));
    gpu.add("default_power_limit_w", "Power limit (default)", watts(g.default_power_limit));
    gpu.add("max_sm_clock_mhz", "Max SM clock", output::mhz(g.facts.max_sm_clock));
    gpu.add("max_memory_clock_mhz", "Max memory clock", output::mhz(g.facts.max_memory_clock));
    gpu.add("app_sm_clock_mhz", "App SM clock", output::mhz(g.app_sm_clock));
    gpu.add("app_memory_clock_mhz", "App memory clock", output::mhz(g.app_memory_clock));
    gpu.add("default_app_sm_clock_mhz", "Default app SM clock",
            output::mhz(g.default_app_sm_clock));
    gpu.add("default_app_memory_clock_mhz", "Default app memory clock",
            output::mhz(g.default_app_memory_clock));
    gpu.add("temperature_at_start_c", "Temperature at start",
            g.temperature_at_start ? output::number(g.temperature_at_start->value(), "C", 0)
                                   : output::na());
  }
  return n;
}

}  // namespace gpuclk::bench
