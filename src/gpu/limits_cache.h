// A GPU's clock limits kept on disk between processes.
//
// On an H100 NVML answers each max, boost and default-applications clock read in ~1 ms, every
// time it is asked (it keeps none of them; perf/nvml_concurrency.cpp): ~12 ms of every direct
// `clocks`, `status` and `info`, a quarter of nvidia-smi's whole `-q -d CLOCK`. They are facts of
// the board and its driver, so gpuclk keeps them per GPU UUID and driver version in a runtime
// directory (a tmpfs emptied at boot): $XDG_RUNTIME_DIR/gpuclk, or /run/gpuclk/limits as root.
//
// A cache file is an input like any other (docs/hardening.md): it is used only when it is a
// regular file of at most 256 KiB owned by this user in a directory only this user may write,
// when it parses, names this GPU and driver, and every value is a plausible clock. Anything
// else is ignored and the limits are read from NVML, then written again.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "gpu/device.h"

namespace gpuclk::gpu {

class LimitsCache {
 public:
  // `dir`: where the files live (created 0700 on first store); `driver_version`: what the
  // limits belong to (a file of another driver is ignored).
  LimitsCache(std::filesystem::path dir, std::string driver_version);

  std::optional<ClockLimits> load(const std::string& uuid) const;
  // Best effort and atomic (written beside, then renamed): never throws. Stores only limits whose
  // every reading is a value or "not supported" (an error may be passing).
  void store(const std::string& uuid, const ClockLimits& limits) const;

  // $GPUCLK_LIMITS_CACHE if set ("off" or "" turns the cache off), else $XDG_RUNTIME_DIR/gpuclk,
  // else /run/gpuclk/limits as root; empty when there is none. On the simulator only the variable
  // turns it on: a simulated GPU's limits change with the scenario, its UUID does not.
  static std::filesystem::path default_dir(bool simulated);

  // The file of GPU `uuid` (for tests and docs).
  std::filesystem::path path_of(const std::string& uuid) const;

 private:
  std::filesystem::path dir_;
  std::string driver_version_;
};

}  // namespace gpuclk::gpu
