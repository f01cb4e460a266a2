// Library life cycle, versions, device count and handle lookup.
#include <cctype>
#include <cstdio>
#include <string>

#include "abi_common.h"
#include "nvml/error_text.h"

namespace gpuclk::sim::abi {
namespace {

nvmlDevice_st g_handles[kMaxGpus] = {};
bool g_handles_ready = false;

void prepare_handles() {
  if (g_handles_ready) return;
  for (std::uint32_t i = 0; i < kMaxGpus; ++i) g_handles[i].index = i;
  g_handles_ready = true;
}

// "domain:bus:device.function" in any of NVML's spellings → numbers; false if malformed.
bool parse_bus_id(const char* text, unsigned& domain, unsigned& bus, unsigned& device,
                  unsigned& function) {
  int consumed = 0;
  if (std::sscanf(text, "%x:%x:%x.%x%n", &domain, &bus, &device, &function, &consumed) == 4 &&
      text[consumed] == '\0') {
    return true;
  }
  domain = 0;
  return std::sscanf(text, "%x:%x.%x%n", &bus, &device, &function, &consumed) == 3 &&
         text[consumed] == '\0';
}

template <typename Match>
nvmlReturn_t find_handle(nvmlDevice_t* device, Match&& match) {
  Context& context = Context::get();
  std::lock_guard<std::recursive_mutex> guard(context.mutex());
  if (!context.initialized()) return NVML_ERROR_UNINITIALIZED;
  if (!device) return NVML_ERROR_INVALID_ARGUMENT;
  try {
    context.sync();
    for (std::size_t i = 0; i < context.model().gpu_count(); ++i) {
      if (match(context.model().config(i))) {
        if (context.model().gpu(i).dynamics.lost) return NVML_ERROR_GPU_IS_LOST;
        *device = handle_of(i);
        return NVML_SUCCESS;
      }
    }
    return NVML_ERROR_NOT_FOUND;
  } catch (const std::exception&) {
    return NVML_ERROR_UNKNOWN;
  }
}

}  // namespace

nvmlDevice_t handle_of(std::size_t index) {
  prepare_handles();
  return &g_handles[index];
}

std::optional<std::size_t> index_of(nvmlDevice_t device) {
  if (!device || device < &g_handles[0] || device >= &g_handles[0] + kMaxGpus) return std::nullopt;
  const std::size_t index = static_cast<std::size_t>(device - &g_handles[0]);
  if (index >= Context::get().model().gpu_count()) return std::nullopt;
  return index;
}

nvmlReturn_t to_nvml(Status status) {
  switch (status) {
    case Status::ok:
      return NVML_SUCCESS;
    case Status::invalid_argument:
      return NVML_ERROR_INVALID_ARGUMENT;
    case Status::not_supported:
      return NVML_ERROR_NOT_SUPPORTED;
    case Status::no_permission:
      return NVML_ERROR_NO_PERMISSION;
    case Status::gpu_lost:
      return NVML_ERROR_GPU_IS_LOST;
    case Status::in_use:
      return NVML_ERROR_IN_USE;
  }
  return NVML_ERROR_UNKNOWN;
}

}  // namespace gpuclk::sim::abi

using namespace gpuclk::sim::abi;

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  Context& context = Context::get();
  std::lock_guard<std::recursive_mutex> guard(context.mutex());
  return context.init();
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlShutdown(void) {
  Context& context = Context::get();
  std::lock_guard<std::recursive_mutex> guard(context.mutex());
  return context.shutdown();
}

GPUCLK_SIM_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  return gpuclk::nvml::error_text(result);
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
  // NVML_INIT_FLAG_NO_GPUS (1) and NVML_INIT_FLAG_NO_ATTACH (2) change nothing for the model.
  if ((flags & ~3u) != 0) return NVML_ERROR_INVALID_ARGUMENT;
  return nvmlInit_v2();
}

namespace gpuclk::sim::abi::get {

nvmlReturn_t driver_version(Context& c, std::string& text) {
  text = c.scenario().driver_version;
  return NVML_SUCCESS;
}

nvmlReturn_t nvml_version(Context& c, std::string& text) {
  text = c.scenario().nvml_version;
  return NVML_SUCCESS;
}

nvmlReturn_t cuda_driver_version(Context& c, int* version) {
  *version = c.scenario().cuda_driver_version;
  return NVML_SUCCESS;
}

nvmlReturn_t device_count(Context& c, unsigned int* count) {
  *count = static_cast<unsigned int>(c.model().gpu_count());
  return NVML_SUCCESS;
}

}  // namespace gpuclk::sim::abi::get

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                             nvmlDevice_t* device) {
  Context& context = Context::get();
  std::lock_guard<std::recursive_mutex> guard(context.mutex());
  if (!context.initialized()) return NVML_ERROR_UNINITIALIZED;
  if (!device || index >= context.model().gpu_count()) return NVML_ERROR_INVALID_ARGUMENT;
  return find_handle(device, [&](const gpuclk::sim::GpuConfig& g) { return g.index == index; });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  if (!uuid) return NVML_ERROR_INVALID_ARGUMENT;
  return find_handle(device, [&](const gpuclk::sim::GpuConfig& g) { return g.uuid == uuid; });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetHandleBySerial(const char* serial,
                                                           nvmlDevice_t* device) {
  if (!serial) return NVML_ERROR_INVALID_ARGUMENT;
  return find_handle(device, [&](const gpuclk::sim::GpuConfig& g) { return g.serial == serial; });
}

GPUCLK_SIM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id,
                                                                nvmlDevice_t* device) {
  unsigned domain = 0, bus = 0, dev = 0, function = 0;
  if (!bus_id) return NVML_ERROR_INVALID_ARGUMENT;
  if (!parse_bus_id(bus_id, domain, bus, dev, function)) {
    Context& context = Context::get();
    std::lock_guard<std::recursive_mutex> guard(context.mutex());
    return context.initialized() ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_UNINITIALIZED;
  }
  return find_handle(device, [&](const gpuclk::sim::GpuConfig& g) {
    return g.pci_domain == domain && g.pci_bus == bus && g.pci_device == dev && function == 0;
  });
}
