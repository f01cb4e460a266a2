// NvmlError: an NVML call that failed, keeping the return code and the call's name, with a
// message that says what to do next (docs/architecture.md, "Rules of the road").
#pragma once

#include <string>

#include "nvml/nvml_abi.h"
#include "util/error.h"

namespace gpuclk::nvml {

// nvmlErrorString's text for codes, available even when the library could not be loaded.
const char* describe(nvmlReturn_t code);

// The exit code gpuclk uses for an NVML return code (nvidia-smi's numbering).
ExitCode exit_code_for(nvmlReturn_t code);

// What the user can do about `code` ("run as root…"), empty if nothing useful to say.
std::string hint_for(nvmlReturn_t code);

class NvmlError : public Error {
 public:
  NvmlError(nvmlReturn_t code, std::string call, std::string context = {});
  nvmlReturn_t nvml_code() const noexcept { return code_; }
  const std::string& call() const noexcept { return call_; }

 private:
  nvmlReturn_t code_;
  std::string call_;
};

}  // namespace gpuclk::nvml
