#include "gpu/device.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "gpu/device_nvml.h"
#include "gpu/limits_cache.h"
#include "nvml/api.h"

namespace gpuclk::gpu {
namespace {

using detail::probe;
using detail::to_nvml;
using nvml::Api;

// A field value as an unsigned integer (every field gpuclk reads is a count, a time or °C).
nvmlReturn_t unsigned_value(const nvmlFieldValue_t& fv, unsigned long long& out) {
  if (fv.nvmlReturn != NVML_SUCCESS) return fv.nvmlReturn;
  switch (fv.valueType) {
    case NVML_VALUE_TYPE_DOUBLE:
      out = static_cast<unsigned long long>(fv.value.dVal);
      break;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      out = fv.value.uiVal;
      break;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      out = fv.value.ulVal;
      break;
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      out = fv.value.ullVal;
      break;
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      out = static_cast<unsigned long long>(fv.value.sllVal);
      break;
    case NVML_VALUE_TYPE_SIGNED_INT:
      out = static_cast<unsigned long long>(fv.value.siVal);
      break;
    case NVML_VALUE_TYPE_UNSIGNED_SHORT:
      out = fv.value.usVal;
      break;
    default:
      return NVML_ERROR_UNKNOWN;
  }
  return NVML_SUCCESS;
}

// One field value as an unsigned integer.
nvmlReturn_t field_value(const Api& api, nvmlDevice_t h, unsigned field, unsigned long long& out) {
  nvmlFieldValue_t fv{};
  fv.fieldId = field;
  auto rc = Api::call(api.nvmlDeviceGetFieldValues, h, 1, &fv);
  if (rc != NVML_SUCCESS) return rc;
  return unsigned_value(fv, out);
}

}  // namespace

Device::Device(const nvml::Api& api, nvmlDevice_st* handle, unsigned index, int open_error)
    : api_(api), handle_(handle) {
  identity_.index = index;
  if (!handle) {
    identity_.unavailable_code = open_error ? open_error : int(NVML_ERROR_UNKNOWN);
    identity_.name =
        std::string("(") + nvml::describe(nvmlReturn_t(identity_.unavailable_code)) + ")";
    return;
  }
  try {
    open_core();
  } catch (const nvml::NvmlError& e) {
    // A GPU that fell off the bus (or errs on its name/UUID) is shown as such; the node goes on.
    identity_.unavailable_code = int(e.nvml_code());
    identity_.name = std::string("(") + nvml::describe(e.nvml_code()) + ")";
  }
}

void Device::open_core() {
  auto& id = identity_;
  char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  NVML_CHECK(api_, nvmlDeviceGetName, handle_, buf, unsigned(sizeof buf));
  id.name = buf;
  char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  NVML_CHECK(api_, nvmlDeviceGetUUID, handle_, uuid, unsigned(sizeof uuid));
  id.uuid = uuid;
  nvmlPciInfo_t raw{};
  if (Api::call(api_.nvmlDeviceGetPciInfo_v3, handle_, &raw) == NVML_SUCCESS) bus_id_ = raw.busId;
}

template <class T, class Call>
Reading<T> Device::read(Field field, Call&& call) const {
  if (!handle_) return Reading<T>::error(identity_.unavailable_code);
  auto& unsupported = unsupported_[field];
  if (unsupported.load(std::memory_order_relaxed)) return Reading<T>::not_supported();
  T value{};
  nvmlReturn_t rc = call(value);
  if (rc == NVML_SUCCESS) return value;
  if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND) {
    unsupported.store(true, std::memory_order_relaxed);
    return Reading<T>::not_supported();
  }
  return Reading<T>::error(rc);
}

Reading<Megahertz> Device::clock(ClockDomain d) const {
  return read<Megahertz>(Field(kClock + int(d)), [&](Megahertz& v) {
    unsigned mhz = 0;
    auto rc = Api::call(api_.nvmlDeviceGetClockInfo, handle_, to_nvml(d), &mhz);
    v = Megahertz(mhz);
    return rc;
  });
}

Reading<Megahertz> Device::app_clock(ClockDomain d) const {
  return read<Megahertz>(Field(kAppClock + int(d)), [&](Megahertz& v) {
    unsigned mhz = 0;
    auto rc = Api::call(api_.nvmlDeviceGetApplicationsClock, handle_, to_nvml(d), &mhz);
    v = Megahertz(mhz);
    return rc;
  });
}

Reading<int> Device::pstate() const {
  return read<int>(kPstate, [&](int& v) {
    nvmlPstates_t p = NVML_PSTATE_UNKNOWN;
    auto rc = Api::call(api_.nvmlDeviceGetPerformanceState, handle_, &p);
    if (rc == NVML_SUCCESS && p == NVML_PSTATE_UNKNOWN) rc = NVML_ERROR_NOT_SUPPORTED;
    v = int(p);
    return rc;
  });
}

Reading<ClockRange> Device::pstate_clock_range(ClockDomain d, int pstate) const {
  return read<ClockRange>(kPstateRange, [&](ClockRange& r) {
    unsigned lo = 0, hi = 0;
    auto rc = Api::call(api_.nvmlDeviceGetMinMaxClockOfPState, handle_, to_nvml(d),
                        static_cast<nvmlPstates_t>(pstate), &lo, &hi);
    r = {Megahertz(lo), Megahertz(hi)};
    return rc;
  });
}

Reading<ClockReasons> Device::clock_reasons() const {
  return read<ClockReasons>(kReasons, [&](ClockReasons& r) {
    unsigned long long bits = 0;
    auto rc = Api::call(api_.nvmlDeviceGetCurrentClocksEventReasons, handle_, &bits);
    r = ClockReasons(bits);
    return rc;
  });
}

Reading<std::chrono::nanoseconds> Device::violation_time(ViolationPolicy policy) const {
  // In ViolationPolicy's order.
  constexpr nvmlPerfPolicyType_t kNvmlPolicy[] = {
      NVML_PERF_POLICY_POWER,       NVML_PERF_POLICY_THERMAL,         NVML_PERF_POLICY_SYNC_BOOST,
      NVML_PERF_POLICY_BOARD_LIMIT, NVML_PERF_POLICY_LOW_UTILIZATION, NVML_PERF_POLICY_RELIABILITY};
  const auto nvml_policy = kNvmlPolicy[static_cast<std::size_t>(policy)];
  // Not cached: support differs per policy (POWER and THERMAL on most boards, others rarely).
  return probe<std::chrono::nanoseconds>([&](std::chrono::nanoseconds& t) {
    nvmlViolationTime_t v{};
    auto rc = Api::call(api_.nvmlDeviceGetViolationStatus, handle_, nvml_policy, &v);
    t = std::chrono::nanoseconds(v.violationTime);
    return rc;
  });
}

std::array<Reading<std::chrono::nanoseconds>, 6> Device::violation_times() const {
  // NVML_FI_DEV_PERF_POLICY_* are in ViolationPolicy's order and count nanoseconds, as
  // nvmlDeviceGetViolationStatus does (the same counter, checked on an H100; the field can lag it
  // by up to ~0.1 s). A field the driver refuses is read the slow way.
  std::array<Reading<std::chrono::nanoseconds>, 6> out;
  std::array<nvmlFieldValue_t, 6> fields{};
  for (std::size_t i = 0; i < fields.size(); ++i) {
    fields[i].fieldId = NVML_FI_DEV_PERF_POLICY_POWER + unsigned(i);
  }
  const auto rc =
      handle_ ? Api::call(api_.nvmlDeviceGetFieldValues, handle_, int(fields.size()), fields.data())
              : NVML_ERROR_UNINITIALIZED;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    unsigned long long ns = 0;
    if (rc == NVML_SUCCESS && unsigned_value(fields[i], ns) == NVML_SUCCESS) {
      out[i] = std::chrono::nanoseconds(ns);
    } else {
      out[i] = violation_time(static_cast<ViolationPolicy>(i));
    }
  }
  return out;
}

Reading<Watts> Device::power_draw() const {
  return read<Watts>(kPowerDraw, [&](Watts& w) {
    unsigned mw = 0;
    auto rc = Api::call(api_.nvmlDeviceGetPowerUsage, handle_, &mw);
    w = units::from_milliwatts(mw);
    return rc;
  });
}

Reading<Watts> Device::memory_power() const {
  return read<Watts>(kMemoryPower, [&](Watts& w) {
    nvmlFieldValue_t fv{};
    fv.fieldId = NVML_FI_DEV_POWER_AVERAGE;
    fv.scopeId = NVML_POWER_SCOPE_MEMORY;
    auto rc = Api::call(api_.nvmlDeviceGetFieldValues, handle_, 1, &fv);
    unsigned long long mw = 0;
    if (rc == NVML_SUCCESS) rc = unsigned_value(fv, mw);
    w = units::from_milliwatts(static_cast<unsigned>(mw));
    return rc;
  });
}

Reading<units::Milliwatts> Device::power_limit_mw() const {
  return read<units::Milliwatts>(kPowerLimit, [&](units::Milliwatts& out) {
    unsigned mw = 0;
    auto rc = Api::call(api_.nvmlDeviceGetPowerManagementLimit, handle_, &mw);
    out = units::Milliwatts(mw);
    return rc;
  });
}

Reading<Watts> Device::power_limit() const {
  return read<Watts>(kPowerLimit, [&](Watts& w) {
    unsigned mw = 0;
    auto rc = Api::call(api_.nvmlDeviceGetPowerManagementLimit, handle_, &mw);
    w = units::from_milliwatts(mw);
    return rc;
  });
}

Reading<Watts> Device::enforced_power_limit() const {
  return read<Watts>(kEnforcedLimit, [&](Watts& w) {
    unsigned mw = 0;
    auto rc = Api::call(api_.nvmlDeviceGetEnforcedPowerLimit, handle_, &mw);
    w = units::from_milliwatts(mw);
    return rc;
  });
}

Reading<Joules> Device::energy() const {
  return read<Joules>(kEnergy, [&](Joules& j) {
    unsigned long long mj = 0;
    auto rc = Api::call(api_.nvmlDeviceGetTotalEnergyConsumption, handle_, &mj);
    j = units::from_millijoules(mj);
    return rc;
  });
}

Reading<Celsius> Device::temperature() const {
  return read<Celsius>(kTemperature, [&](Celsius& c) {
    unsigned t = 0;
    auto rc = Api::call(api_.nvmlDeviceGetTemperature, handle_, NVML_TEMPERATURE_GPU, &t);
    c = Celsius(t);
    return rc;
  });
}

Reading<Ratio> Device::fan_speed() const {
  return read<Ratio>(kFan, [&](Ratio& r) {
    unsigned pct = 0;
    auto rc = Api::call(api_.nvmlDeviceGetFanSpeed, handle_, &pct);
    r = units::from_percent(pct);
    return rc;
  });
}

Reading<Utilization> Device::utilization() const {
  return read<Utilization>(kUtilization, [&](Utilization& u) {
    nvmlUtilization_t raw{};
    auto rc = Api::call(api_.nvmlDeviceGetUtilizationRates, handle_, &raw);
    u = {units::from_percent(raw.gpu), units::from_percent(raw.memory)};
    return rc;
  });
}

Reading<MemoryUsage> Device::memory() const {
  return read<MemoryUsage>(kMemory, [&](MemoryUsage& m) {
    nvmlMemory_t raw{};
    auto rc = Api::call(api_.nvmlDeviceGetMemoryInfo, handle_, &raw);
    m = {Bytes(double(raw.total)), Bytes(double(raw.used)), Bytes(double(raw.free))};
    return rc;
  });
}

Reading<bool> Device::persistence_mode() const {
  return read<bool>(kPersistence, [&](bool& on) {
    nvmlEnableState_t s = NVML_FEATURE_DISABLED;
    auto rc = Api::call(api_.nvmlDeviceGetPersistenceMode, handle_, &s);
    on = s == NVML_FEATURE_ENABLED;
    return rc;
  });
}

Reading<int> Device::compute_mode() const {
  return read<int>(kComputeMode, [&](int& m) {
    nvmlComputeMode_t mode = NVML_COMPUTEMODE_DEFAULT;
    auto rc = Api::call(api_.nvmlDeviceGetComputeMode, handle_, &mode);
    m = int(mode);
    return rc;
  });
}

Reading<bool> Device::ecc_enabled() const {
  return read<bool>(kEcc, [&](bool& on) {
    nvmlEnableState_t current = NVML_FEATURE_DISABLED, pending = NVML_FEATURE_DISABLED;
    auto rc = Api::call(api_.nvmlDeviceGetEccMode, handle_, &current, &pending);
    on = current == NVML_FEATURE_ENABLED;
    return rc;
  });
}

Reading<std::uint64_t> Device::ecc_errors(bool uncorrected, bool aggregate) const {
  return read<std::uint64_t>(kEccErrors, [&](std::uint64_t& n) {
    unsigned long long count = 0;
    auto rc = Api::call(
        api_.nvmlDeviceGetTotalEccErrors, handle_,
        uncorrected ? NVML_MEMORY_ERROR_TYPE_UNCORRECTED : NVML_MEMORY_ERROR_TYPE_CORRECTED,
        aggregate ? NVML_AGGREGATE_ECC : NVML_VOLATILE_ECC, &count);
    n = count;
    return rc;
  });
}

Reading<RemappedRows> Device::remapped_rows() const {
  return read<RemappedRows>(kRemappedRows, [&](RemappedRows& r) {
    unsigned pending = 0, failure = 0;
    auto rc = Api::call(api_.nvmlDeviceGetRemappedRows, handle_, &r.corrected, &r.uncorrected,
                        &pending, &failure);
    r.pending = pending != 0;
    r.failure = failure != 0;
    return rc;
  });
}

Reading<RetiredPages> Device::retired_pages() const {
  return read<RetiredPages>(kRetiredPages, [&](RetiredPages& r) {
    // A GPU retires at most 64 pages; a longer list still gives its count (INSUFFICIENT_SIZE
    // sets it).
    std::array<unsigned long long, 64> addresses{};
    const auto count = [&](nvmlPageRetirementCause_t cause, unsigned& n) {
      n = static_cast<unsigned>(addresses.size());
      const auto rc =
          Api::call(api_.nvmlDeviceGetRetiredPages, handle_, cause, &n, addresses.data());
      return rc == NVML_ERROR_INSUFFICIENT_SIZE ? NVML_SUCCESS : rc;
    };
    auto rc = count(NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, r.multiple_sbe);
    if (rc != NVML_SUCCESS) return rc;
    rc = count(NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, r.dbe);
    if (rc != NVML_SUCCESS) return rc;
    nvmlEnableState_t pending = NVML_FEATURE_DISABLED;
    rc = Api::call(api_.nvmlDeviceGetRetiredPagesPendingStatus, handle_, &pending);
    r.pending = pending == NVML_FEATURE_ENABLED;
    return rc;
  });
}

Reading<PcieLink> Device::pcie_link() const {
  return read<PcieLink>(kPcieLink, [&](PcieLink& l) {
    auto rc = Api::call(api_.nvmlDeviceGetCurrPcieLinkGeneration, handle_, &l.generation);
    if (rc != NVML_SUCCESS) return rc;
    return Api::call(api_.nvmlDeviceGetCurrPcieLinkWidth, handle_, &l.width);
  });
}

Reading<PcieThroughput> Device::pcie_throughput() const {
  return read<PcieThroughput>(kPcieThroughput, [&](PcieThroughput& t) {
    unsigned tx = 0, rx = 0;
    auto rc = Api::call(api_.nvmlDeviceGetPcieThroughput, handle_, NVML_PCIE_UTIL_TX_BYTES, &tx);
    if (rc != NVML_SUCCESS) return rc;
    rc = Api::call(api_.nvmlDeviceGetPcieThroughput, handle_, NVML_PCIE_UTIL_RX_BYTES, &rx);
    t = {units::BytesPerSecond(tx * 1024.0), units::BytesPerSecond(rx * 1024.0)};
    return rc;
  });
}

Reading<std::vector<ProcessInfo>> Device::processes() const {
  return read<std::vector<ProcessInfo>>(kProcesses, [&](std::vector<ProcessInfo>& out) {
    nvmlProcessInfo_t infos[256];
    unsigned count = 256;
    auto rc = Api::call(api_.nvmlDeviceGetComputeRunningProcesses_v3, handle_, &count, infos);
    if (rc != NVML_SUCCESS) return rc;
    for (unsigned i = 0; i < count; ++i) {
      ProcessInfo p;
      p.pid = infos[i].pid;
      // NVML reports "not available" (e.g. under WDDM or without permission) as all ones.
      if (infos[i].usedGpuMemory != ~0ULL)
        p.used_memory = Bytes(double(infos[i].usedGpuMemory));
      else
        p.used_memory = Reading<Bytes>::not_supported();
      out.push_back(p);
    }
    return rc;
  });
}

Reading<std::vector<ProcessUtilization>> Device::process_utilization(std::uint64_t since_us) const {
  if (!api_.nvmlDeviceGetProcessUtilization) {
    return Reading<std::vector<ProcessUtilization>>::not_supported();
  }
  return read<std::vector<ProcessUtilization>>(
      kProcessUtilization, [&](std::vector<ProcessUtilization>& out) {
        // The (count, array) protocol in one call when the buffer is large enough (each call
        // costs ~1.3 ms on an H200: docs/results/attribution_h200x2.md), else again with the
        // count the driver asked for (more may have come in between: room to spare).
        std::vector<nvmlProcessUtilizationSample_t> samples(std::max(64u, utilization_samples_));
        unsigned count = static_cast<unsigned>(samples.size());
        auto rc = Api::call(api_.nvmlDeviceGetProcessUtilization, handle_, samples.data(), &count,
                            static_cast<unsigned long long>(since_us));
        if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
          samples.resize(count + 64);
          count = static_cast<unsigned>(samples.size());
          rc = Api::call(api_.nvmlDeviceGetProcessUtilization, handle_, samples.data(), &count,
                         static_cast<unsigned long long>(since_us));
        }
        if (rc == NVML_ERROR_NOT_FOUND) return NVML_SUCCESS;  // no process ran since
        if (rc != NVML_SUCCESS) return rc;
        utilization_samples_ = count + 16;
        for (unsigned i = 0; i < count; ++i) {
          const auto& raw = samples[i];
          out.push_back({raw.pid, raw.timeStamp, Ratio(std::min(raw.smUtil, 100u) / 100.0),
                         Ratio(std::min(raw.memUtil, 100u) / 100.0)});
        }
        return rc;
      });
}

Reading<Celsius> Device::memory_temperature() const {
  return read<Celsius>(kMemoryTemperature, [&](Celsius& c) {
    unsigned long long t = 0;
    auto rc = field_value(api_, handle_, NVML_FI_DEV_MEMORY_TEMP, t);
    // Boards without a memory sensor answer 0 rather than NOT_SUPPORTED.
    if (rc == NVML_SUCCESS && t == 0) rc = NVML_ERROR_NOT_SUPPORTED;
    c = Celsius(double(t));
    return rc;
  });
}

Reading<std::uint64_t> Device::pcie_replay_errors() const {
  return read<std::uint64_t>(kPcieReplay, [&](std::uint64_t& n) {
    unsigned long long count = 0;
    auto rc = field_value(api_, handle_, NVML_FI_DEV_PCIE_REPLAY_COUNTER, count);
    n = count;
    return rc;
  });
}

Reading<Bytes> Device::bar1_used() const {
  return read<Bytes>(kBar1, [&](Bytes& b) {
    nvmlBAR1Memory_t raw{};
    auto rc = Api::call(api_.nvmlDeviceGetBAR1MemoryInfo, handle_, &raw);
    b = Bytes(double(raw.bar1Used));
    return rc;
  });
}

Reading<Bytes> Device::protected_memory_used() const {
  return read<Bytes>(kProtectedMemory, [&](Bytes& b) {
    nvmlMemory_t raw{};
    auto rc = Api::call(api_.nvmlDeviceGetConfComputeProtectedMemoryUsage, handle_, &raw);
    b = Bytes(double(raw.used));
    return rc;
  });
}

Reading<Ratio> Device::engine_utilization(Field field) const {
  const auto entry_point = field == kEncoder   ? api_.nvmlDeviceGetEncoderUtilization
                           : field == kDecoder ? api_.nvmlDeviceGetDecoderUtilization
                           : field == kJpeg    ? api_.nvmlDeviceGetJpgUtilization
                                               : api_.nvmlDeviceGetOfaUtilization;
  return read<Ratio>(field, [&](Ratio& r) {
    unsigned percent = 0, period_us = 0;
    auto rc = Api::call(entry_point, handle_, &percent, &period_us);
    r = units::from_percent(percent);
    return rc;
  });
}

MediaUtilization Device::media_utilization() const {
  return {engine_utilization(kEncoder), engine_utilization(kDecoder), engine_utilization(kJpeg),
          engine_utilization(kOfa)};
}

bool Device::is_lost_error(int nvml_code) { return nvml_code == NVML_ERROR_GPU_IS_LOST; }

DeviceSet::DeviceSet(const nvml::Api& api) : api_(api) {
  unsigned count = 0;
  NVML_CHECK(api, nvmlDeviceGetCount_v2, &count);
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t handle = nullptr;
    // A handle that cannot be had (GPU lost at enumeration) still gets its row.
    auto rc = Api::call(api.nvmlDeviceGetHandleByIndex_v2, i, &handle);
    if (rc != NVML_SUCCESS) handle = nullptr;
    devices_.push_back(std::make_unique<Device>(api, handle, i, int(rc)));
  }
  driver_version_ = probe<std::string>([&](std::string& s) {
    char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    auto rc = Api::call(api.nvmlSystemGetDriverVersion, buf, unsigned(sizeof buf));
    s = buf;
    return rc;
  });
  nvml_version_ = probe<std::string>([&](std::string& s) {
    char buf[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE] = {};
    auto rc = Api::call(api.nvmlSystemGetNVMLVersion, buf, unsigned(sizeof buf));
    s = buf;
    return rc;
  });
  cuda_driver_version_ =
      probe<int>([&](int& v) { return Api::call(api.nvmlSystemGetCudaDriverVersion_v2, &v); });
}

DeviceSet::~DeviceSet() = default;

void DeviceSet::cache_clock_limits(const std::filesystem::path& dir) {
  limits_cache_ = dir.empty() || !driver_version_
                      ? nullptr
                      : std::make_unique<LimitsCache>(dir, *driver_version_);
  for (auto& d : devices_) d->use_limits_cache(limits_cache_.get());
}

Reading<std::string> DeviceSet::process_name(unsigned pid) const {
  return probe<std::string>([&](std::string& s) {
    char buf[256] = {};
    auto rc = Api::call(api_.nvmlSystemGetProcessName, pid, buf, unsigned(sizeof buf - 1));
    s = buf;
    return rc;
  });
}

std::vector<Device*> DeviceSet::all() const {
  std::vector<Device*> out;
  for (const auto& d : devices_) out.push_back(d.get());
  return out;
}

}  // namespace gpuclk::gpu
