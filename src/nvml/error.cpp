#include "nvml/error.h"

#include <fmt/format.h>

#include "nvml/error_text.h"

namespace gpuclk::nvml {

const char* describe(nvmlReturn_t code) { return error_text(code); }

ExitCode exit_code_for(nvmlReturn_t code) {
  switch (code) {
    case NVML_SUCCESS:
      return ExitCode::ok;
    case NVML_ERROR_INVALID_ARGUMENT:
    case NVML_ERROR_FREQ_NOT_SUPPORTED:
      return ExitCode::bad_argument;
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return ExitCode::not_supported;
    case NVML_ERROR_NO_PERMISSION:
      return ExitCode::no_permission;
    case NVML_ERROR_NOT_FOUND:
    case NVML_ERROR_GPU_NOT_FOUND:
      return ExitCode::gpu_not_found;
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return ExitCode::driver_not_loaded;
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return ExitCode::nvml_not_found;
    case NVML_ERROR_GPU_IS_LOST:
      return ExitCode::gpu_lost;
    default:
      return ExitCode::other;
  }
}

std::string hint_for(nvmlReturn_t code) {
  switch (code) {
    case NVML_ERROR_NO_PERMISSION:
      return "run as root or grant CAP_SYS_ADMIN; clock and power settings need the host, not a "
             "container";
    case NVML_ERROR_NOT_SUPPORTED:
      return "this GPU or driver does not offer it; `gpuclk clocks` shows what it supports";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "load the NVIDIA kernel driver (nvidia-smi should work), or use `gpuclk --sim` for a "
             "simulated node";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "no NVIDIA driver found; `gpuclk --sim` runs on a simulated node";
    case NVML_ERROR_GPU_IS_LOST:
      return "the GPU fell off the bus: check `dmesg` for Xid errors; it needs a reset or reboot";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "the driver was upgraded without a reboot: reboot or reload the nvidia module";
    case NVML_ERROR_RESET_REQUIRED:
      return "the GPU needs a reset (nvidia-smi -r) or a reboot";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "the installed driver is older than this feature; upgrade the driver";
    default:
      return {};
  }
}

NvmlError::NvmlError(nvmlReturn_t code, std::string call, std::string context)
    : Error(exit_code_for(code),
            context.empty() ? fmt::format("{}: {} (NVML error {})", call, describe(code), int(code))
                            : fmt::format("{}: {}: {} (NVML error {})", context, call,
                                          describe(code), int(code)),
            hint_for(code)),
      code_(code),
      call_(std::move(call)) {}

}  // namespace gpuclk::nvml
