// Device's facts, each probed once on first use (device.h's identity(), clock_limits(), ratings(),
// affinity()): what the GPU is, its clock and power limits and ratings, and the CPUs and NUMA
// node near it.
#include <fmt/format.h>

#include <algorithm>

#include "gpu/device.h"
#include "gpu/device_nvml.h"
#include "gpu/limits_cache.h"
#include "nvml/api.h"

namespace gpuclk::gpu {
namespace {

using detail::probe;
using detail::to_nvml;
using nvml::Api;

Reading<Megahertz> mhz(Reading<unsigned> r) {
  return r.map([](unsigned v) { return Megahertz(v); });
}

// NVML writes the bus id as "00000000:00:06.0"; keep it as nvidia-smi prints it.
PciInfo to_pci(const nvmlPciInfo_t& raw) {
  PciInfo pci;
  pci.bus_id = raw.busId;
  pci.domain = raw.domain;
  pci.bus = raw.bus;
  pci.device = raw.device;
  pci.device_id = raw.pciDeviceId;
  pci.subsystem_id = raw.pciSubSystemId;
  return pci;
}

std::vector<unsigned> cpu_ids(const unsigned long* words, unsigned count) {
  std::vector<unsigned> ids;
  constexpr unsigned bits = sizeof(unsigned long) * 8;
  for (unsigned w = 0; w < count; ++w) {
    for (unsigned b = 0; b < bits; ++b) {
      if (words[w] & (1UL << b)) ids.push_back(w * bits + b);
    }
  }
  return ids;
}

}  // namespace

void Device::probe_identity() const {
  auto& id = identity_;
  if (!handle_ || id.unavailable_code != 0) return;
  const auto h = handle_;

  id.serial = probe<std::string>([&](std::string& s) {
    char serial[64] = {};
    auto rc = Api::call(api_.nvmlDeviceGetSerial, h, serial, unsigned(sizeof serial));
    s = serial;
    return rc;
  });
  id.pci = probe<PciInfo>([&](PciInfo& p) {
    nvmlPciInfo_t raw{};
    auto rc = Api::call(api_.nvmlDeviceGetPciInfo_v3, h, &raw);
    p = to_pci(raw);
    return rc;
  });
  id.architecture = probe<unsigned>(
      [&](unsigned& a) { return Api::call(api_.nvmlDeviceGetArchitecture, h, &a); });
  id.compute_capability = probe<ComputeCapability>([&](ComputeCapability& cc) {
    return Api::call(api_.nvmlDeviceGetCudaComputeCapability, h, &cc.major, &cc.minor);
  });
  if (id.compute_capability) id.arch = find_arch(*id.compute_capability);
  id.cuda_cores =
      probe<unsigned>([&](unsigned& c) { return Api::call(api_.nvmlDeviceGetNumGpuCores, h, &c); });
  if (id.cuda_cores && id.arch) id.sm_count = *id.cuda_cores / id.arch->fp32_cores_per_sm;
  id.memory_bus_width = probe<unsigned>(
      [&](unsigned& w) { return Api::call(api_.nvmlDeviceGetMemoryBusWidth, h, &w); });
  id.memory_total = probe<Bytes>([&](Bytes& b) {
    nvmlMemory_t m{};
    auto rc = Api::call(api_.nvmlDeviceGetMemoryInfo, h, &m);
    b = Bytes(double(m.total));
    return rc;
  });

  id.supported_clock_reasons = probe<ClockReasons>([&](ClockReasons& r) {
    unsigned long long bits = 0;
    auto rc = Api::call(api_.nvmlDeviceGetSupportedClocksEventReasons, h, &bits);
    r = ClockReasons(bits);
    return rc;
  });
}

void Device::probe_clock_limits() const {
  auto& id = clock_limits_;
  if (!handle_ || identity_.unavailable_code != 0) return;
  if (limits_cache_) {
    if (auto cached = limits_cache_->load(uuid())) {
      id = std::move(*cached);
      return;
    }
  }
  const auto h = handle_;
  // Only the domains something shows: no command shows a video boost clock or an SM or video
  // default applications clock (application clocks are set for graphics and memory), and each
  // read costs ~1 ms on an H100.
  for (int d = 0; d < 4; ++d) {
    const auto domain = static_cast<ClockDomain>(d);
    const auto type = to_nvml(domain);
    id.max_clock[d] = mhz(probe<unsigned>(
        [&](unsigned& v) { return Api::call(api_.nvmlDeviceGetMaxClockInfo, h, type, &v); }));
    id.max_boost_clock[d] =
        domain == ClockDomain::video
            ? Reading<Megahertz>::not_supported()
            : mhz(probe<unsigned>([&](unsigned& v) {
                return Api::call(api_.nvmlDeviceGetMaxCustomerBoostClock, h, type, &v);
              }));
    id.default_app_clock[d] =
        domain != ClockDomain::graphics && domain != ClockDomain::memory
            ? Reading<Megahertz>::not_supported()
            : mhz(probe<unsigned>([&](unsigned& v) {
                return Api::call(api_.nvmlDeviceGetDefaultApplicationsClock, h, type, &v);
              }));
  }

  id.supported_clocks = probe<std::vector<SupportedClocks>>([&](std::vector<SupportedClocks>& out) {
    unsigned memory[64];
    unsigned count = 64;
    auto rc = Api::call(api_.nvmlDeviceGetSupportedMemoryClocks, h, &count, memory);
    if (rc != NVML_SUCCESS) return rc;
    for (unsigned i = 0; i < count; ++i) {
      unsigned graphics[512];
      unsigned n = 512;
      rc = Api::call(api_.nvmlDeviceGetSupportedGraphicsClocks, h, memory[i], &n, graphics);
      if (rc != NVML_SUCCESS) return rc;
      SupportedClocks entry{Megahertz(memory[i]), {}};
      for (unsigned j = 0; j < n; ++j) entry.graphics.emplace_back(graphics[j]);
      out.push_back(std::move(entry));
    }
    return NVML_SUCCESS;
  });
  if (limits_cache_) limits_cache_->store(uuid(), id);
}

void Device::probe_ratings() const {
  auto& id = ratings_;
  if (!handle_ || identity_.unavailable_code != 0) return;
  const auto h = handle_;
  id.power_constraints = probe<PowerConstraints>([&](PowerConstraints& c) {
    unsigned lo = 0, hi = 0;
    auto rc = Api::call(api_.nvmlDeviceGetPowerManagementLimitConstraints, h, &lo, &hi);
    c = {units::from_milliwatts(lo), units::from_milliwatts(hi), units::Milliwatts(lo),
         units::Milliwatts(hi)};
    return rc;
  });
  const auto default_mw = probe<unsigned>(
      [&](unsigned& v) { return Api::call(api_.nvmlDeviceGetPowerManagementDefaultLimit, h, &v); });
  id.default_power_limit = default_mw.map([](unsigned v) { return units::from_milliwatts(v); });
  id.default_power_limit_mw = default_mw.map([](unsigned v) { return units::Milliwatts(v); });

  auto threshold = [&](nvmlTemperatureThresholds_t which) {
    return probe<unsigned>([&](unsigned& v) {
             return Api::call(api_.nvmlDeviceGetTemperatureThreshold, h, which, &v);
           })
        .map([](unsigned v) { return Celsius(v); });
  };
  id.thresholds.shutdown = threshold(NVML_TEMPERATURE_THRESHOLD_SHUTDOWN);
  id.thresholds.slowdown = threshold(NVML_TEMPERATURE_THRESHOLD_SLOWDOWN);
  id.thresholds.memory_max = threshold(NVML_TEMPERATURE_THRESHOLD_MEM_MAX);
  id.thresholds.gpu_max = threshold(NVML_TEMPERATURE_THRESHOLD_GPU_MAX);

  id.pcie_max = probe<PcieLink>([&](PcieLink& l) {
    auto rc = Api::call(api_.nvmlDeviceGetMaxPcieLinkGeneration, h, &l.generation);
    if (rc != NVML_SUCCESS) return rc;
    return Api::call(api_.nvmlDeviceGetMaxPcieLinkWidth, h, &l.width);
  });
  id.pcie_gpu_max_generation = probe<unsigned>(
      [&](unsigned& g) { return Api::call(api_.nvmlDeviceGetGpuMaxPcieLinkGeneration, h, &g); });
}

void Device::probe_affinity() const {
  if (!handle_ || identity_.unavailable_code != 0) return;
  const auto h = handle_;
  auto& a = affinity_;
  a.numa_node = probe<int>([&](int& n) {
    unsigned node = 0;
    auto rc = Api::call(api_.nvmlDeviceGetNumaNodeId, h, &node);
    n = int(node);
    return rc;
  });
  a.cpu_affinity = probe<std::vector<unsigned>>([&](std::vector<unsigned>& ids) {
    constexpr unsigned words = 16;  // 1024 CPUs
    unsigned long set[words] = {};
    auto rc = Api::call(api_.nvmlDeviceGetCpuAffinity, h, words, set);
    ids = cpu_ids(set, words);
    return rc;
  });
}

}  // namespace gpuclk::gpu
