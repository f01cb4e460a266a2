// libFuzzer target: simulator scenario TOML (sim::load_scenario), models from sim/scenarios.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The loader reads a path (and fingerprints the file): one file per process, rewritten.
  static const std::string path = (std::filesystem::temp_directory_path() /
                                   ("gpuclk-fuzz-" + std::to_string(::getpid()) + ".toml"))
                                      .string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const auto s = gpuclk::sim::load_scenario(path, {GPUCLK_SCENARIO_DIR});
    if (s.gpus.size() > 1024) __builtin_trap();  // the GPU count cap holds
  } catch (const gpuclk::sim::ScenarioError&) {
  }
  return 0;
}
