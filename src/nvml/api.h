// Api: NVML loaded at run time (dlopen + dlsym), never linked. One object per process session:
// the constructor loads the library and calls nvmlInit_v2, the destructor nvmlShutdown + dlclose.
//
// Each entry point of nvml_abi.h is a function pointer member named like the C function; an
// OPTIONAL one that the library lacks (an older driver) is nullptr and only its feature is off.
// Calls go through call() (returns the code, for Reading<T>) or check() (throws NvmlError).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nvml/error.h"
#include "nvml/nvml_abi.h"

namespace gpuclk::nvml {

class Api {
 public:
  // Loads `path` (empty: GPUCLK_NVML_LIB, else "libnvidia-ml.so.1" from the loader's search path)
  // and initializes it. Throws Error: exit 12 when no library can be loaded or the CUDA toolkit's
  // stub library was found instead of the driver's, exit 9 when the driver is not loaded.
  static std::unique_ptr<Api> open(const std::string& path = {});

  ~Api();
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

// NOLINTNEXTLINE(bugprone-macro-parentheses): `params` is a parameter list, spliced as written.
#define GPUCLK_NVML_MEMBER(name, params, args) nvmlReturn_t(*name) params = nullptr;
  GPUCLK_NVML_ALL(GPUCLK_NVML_MEMBER)
#undef GPUCLK_NVML_MEMBER
  const char* (*nvmlErrorString)(nvmlReturn_t) = nullptr;

  // Calls fn if the library has it, else returns NVML_ERROR_FUNCTION_NOT_FOUND.
  template <class... Params, class... Args>
  static nvmlReturn_t call(nvmlReturn_t (*fn)(Params...), Args&&... args) {
    return fn ? fn(std::forward<Args>(args)...) : NVML_ERROR_FUNCTION_NOT_FOUND;
  }

  // The file actually loaded (resolved by the dynamic loader).
  const std::string& path() const { return path_; }
  // True when the library is gpuclk's simulator (it exports gpuclk_sim_time_scale).
  bool simulated() const { return time_scale_fn_ != nullptr; }
  // Simulated seconds per wall-clock second (1 on real hardware).
  double time_scale() const;
  // The process is about to exit: leave out nvmlShutdown (2.9 ms on an H100,
  // docs/results/cli_latency_h100.md); the driver releases the process's state when it ends,
  // as it does for any client that exits or crashes. Ignored on the simulator.
  void skip_shutdown_at_exit();
  // OPTIONAL entry points the library does not export (diagnostics: `gpuclk info -v`).
  const std::vector<std::string>& missing_symbols() const { return missing_; }

  // Simulator introspection (the extras libnvml-sim.so exports beside NVML; src/nvml/sim_abi.h).
  // On a real driver each answers "none".
  // The simulator's state file ("" on real hardware).
  std::string simulator_state_path() const;
  // The simulated GPU's exact energy since power-on, joules (NaN on real hardware or a bad index).
  double simulator_energy_joules(unsigned index) const;
  // Another simulator extra by name (nullptr on real hardware or when absent). For src/nvml only
  // (sim_jobs.cpp): layers above reach the simulator through typed wrappers, never a cast.
  void* simulator_symbol(const char* name) const;

 private:
  Api() = default;
  void* handle_ = nullptr;
  bool initialized_ = false;
  bool skip_shutdown_ = false;
  std::string path_;
  std::vector<std::string> missing_;
  double (*time_scale_fn_)() = nullptr;
  const char* (*state_path_fn_)() = nullptr;
  double (*energy_joules_fn_)(unsigned) = nullptr;
};

// Throws NvmlError unless rc is NVML_SUCCESS. `call` names the NVML function for the message.
inline void check(nvmlReturn_t rc, const char* call, const std::string& context = {}) {
  if (rc != NVML_SUCCESS) throw NvmlError(rc, call, context);
}

}  // namespace gpuclk::nvml

// NVML_CHECK(api, nvmlDeviceGetName, handle, buf, size): call and throw with the call's name.
#define NVML_CHECK(api, fn, ...) \
  ::gpuclk::nvml::check(::gpuclk::nvml::Api::call((api).fn, __VA_ARGS__), #fn)
