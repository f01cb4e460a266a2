#include "nvml/api.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <chrono>
#include <cstdlib>
#include <limits>

#include "nvml/trace.h"

namespace gpuclk::nvml {
namespace {

std::string loaded_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) {
    return map->l_name;
  }
  return fallback;
}

// The CUDA toolkit ships a stub libnvidia-ml.so for linking only; every call in it fails.
// Catching it here turns a confusing "Unknown Error" later into a clear message now.
bool is_toolkit_stub(const std::string& path) { return path.find("/stubs/") != std::string::npos; }

}  // namespace

std::unique_ptr<Api> Api::open(const std::string& requested) {
  std::string path = requested;
  if (path.empty()) {
    if (const char* env = std::getenv("GPUCLK_NVML_LIB"); env && *env) path = env;
  }
  const bool explicit_path = !path.empty();
  if (!explicit_path) path = "libnvidia-ml.so.1";

  const auto open_start = std::chrono::steady_clock::now();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    if (explicit_path) {
      throw Error(ExitCode::nvml_not_found,
                  fmt::format("cannot load NVML library '{}': {}", path, why ? why : "unknown"),
                  "check the path given with --nvml-lib or GPUCLK_NVML_LIB");
    }
    throw Error(ExitCode::nvml_not_found, "no NVIDIA driver found (libnvidia-ml.so.1 not loadable)",
                "`gpuclk --sim` runs on a simulated node");
  }

  std::unique_ptr<Api> api(new Api());
  api->handle_ = handle;
  api->path_ = loaded_path(handle, path);
  if (is_toolkit_stub(api->path_)) {
    throw Error(
        ExitCode::nvml_not_found,
        fmt::format("'{}' is the CUDA toolkit's link-time stub, not the driver's NVML", api->path_),
        "install the NVIDIA driver, or point --nvml-lib at the driver's libnvidia-ml.so.1");
  }

  std::vector<std::string> missing_required;
#define GPUCLK_NVML_RESOLVE_REQUIRED(name, params, args)                   \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(handle, #name)); \
  if (!api->name) missing_required.emplace_back(#name);
#define GPUCLK_NVML_RESOLVE_OPTIONAL(name, params, args)                   \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(handle, #name)); \
  if (!api->name) api->missing_.emplace_back(#name);
  GPUCLK_NVML_REQUIRED(GPUCLK_NVML_RESOLVE_REQUIRED)
  GPUCLK_NVML_OPTIONAL(GPUCLK_NVML_RESOLVE_OPTIONAL)
#undef GPUCLK_NVML_RESOLVE_REQUIRED
#undef GPUCLK_NVML_RESOLVE_OPTIONAL
  api->nvmlErrorString =
      reinterpret_cast<decltype(api->nvmlErrorString)>(dlsym(handle, "nvmlErrorString"));
  api->time_scale_fn_ = reinterpret_cast<double (*)()>(dlsym(handle, "gpuclk_sim_time_scale"));
  api->state_path_fn_ = reinterpret_cast<const char* (*)()>(dlsym(handle, "gpuclk_sim_state_path"));
  api->energy_joules_fn_ =
      reinterpret_cast<double (*)(unsigned)>(dlsym(handle, "gpuclk_sim_energy_joules"));

  // Without even nvmlInit_v2 it is no NVML library at all (libc.so.6 was told its "driver is
  // too old"); an NVML library lacking some entry points is an old driver.
  if (!api->nvmlInit_v2) {
    throw Error(ExitCode::nvml_not_found,
                fmt::format("'{}' is not an NVML library (it has no nvmlInit_v2)", api->path_),
                "point --nvml-lib (or GPUCLK_NVML_LIB) at the driver's libnvidia-ml.so.1, or leave "
                "it out to load that one");
  }
  if (!missing_required.empty()) {
    throw Error(ExitCode::nvml_not_found,
                fmt::format("'{}' lacks {} NVML entry points gpuclk needs (first: {})", api->path_,
                            missing_required.size(), missing_required.front()),
                "the driver is too old: gpuclk needs driver R450 or newer");
  }

  trace::install(*api, std::chrono::steady_clock::now() - open_start);
  nvmlReturn_t rc = api->nvmlInit_v2();
  if (rc != NVML_SUCCESS) {
    // The simulator refuses a scenario it cannot load (a bad file, a key it does not know, a
    // node too large): that is a bad argument (--sim, GPUCLK_SIM_*), not a driver failure.
    using LastError = const char* (*)();
    if (auto last = reinterpret_cast<LastError>(dlsym(handle, "gpuclk_sim_last_error"))) {
      if (const char* why = last(); why && *why) {
        throw Error(ExitCode::bad_argument, fmt::format("simulator: {}", why),
                    "docs/simulator.md describes the scenario format");
      }
    }
    // A simulated node without a driver is the scenario's point (no-driver): "use gpuclk --sim"
    // is no advice to someone already on it.
    if (api->simulated() && rc == NVML_ERROR_DRIVER_NOT_LOADED) {
      throw Error(ExitCode::driver_not_loaded,
                  fmt::format("{}: nvmlInit_v2: Driver Not Loaded (NVML error 9)", api->path_),
                  "this simulated node has no driver loaded, as its scenario says; --sim=default "
                  "(or another scenario) has one");
    }
    throw NvmlError(rc, "nvmlInit_v2", api->path_);
  }
  api->initialized_ = true;
  return api;
}

Api::~Api() {
  if (initialized_ && nvmlShutdown && !skip_shutdown_) nvmlShutdown();
  trace::write();
  // The real driver library is never unloaded by its users (nvidia-smi, DCGM): it may keep
  // threads. Leaving it mapped until exit is the safe choice; the handle is reference-counted.
  if (handle_ && simulated()) dlclose(handle_);
}

void Api::skip_shutdown_at_exit() {
  // The simulator saves its state file in nvmlShutdown: it always gets the call.
  if (!simulated()) skip_shutdown_ = true;
}

double Api::time_scale() const { return time_scale_fn_ ? time_scale_fn_() : 1.0; }

void* Api::simulator_symbol(const char* name) const {
  return handle_ && simulated() ? dlsym(handle_, name) : nullptr;
}

std::string Api::simulator_state_path() const {
  const char* path = state_path_fn_ ? state_path_fn_() : nullptr;
  return path ? path : "";
}

double Api::simulator_energy_joules(unsigned index) const {
  return energy_joules_fn_ ? energy_joules_fn_(index) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace gpuclk::nvml
