// gpuclk's error type: a message for the user, the exit code (nvidia-smi's numbering, see
// docs/architecture.md) and, where there is one, a hint saying what to do next.
#pragma once

#include <stdexcept>
#include <string>

namespace gpuclk {

enum class ExitCode : int {
  ok = 0,
  bad_argument = 2,
  not_supported = 3,
  no_permission = 4,  // also read-only mode
  gpu_not_found = 6,
  driver_not_loaded = 9,
  nvml_not_found = 12,
  gpu_lost = 15,
  partial = 16,  // a multi-GPU change that left GPUs in different states; the message says which
  other = 255,
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message, std::string hint = {})
      : std::runtime_error(message), code_(code), hint_(std::move(hint)) {}

  ExitCode code() const noexcept { return code_; }
  const std::string& hint() const noexcept { return hint_; }

 private:
  ExitCode code_;
  std::string hint_;
};

// Shorthand for the most common kind: the user gave a value we cannot use.
inline Error bad_argument(const std::string& message, std::string hint = {}) {
  return Error(ExitCode::bad_argument, message, std::move(hint));
}

}  // namespace gpuclk
