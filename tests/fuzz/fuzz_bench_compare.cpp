// libFuzzer target: `gpuclk bench compare` reads two recorded runs (bench::parse_recorded_run).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "bench/compare.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto run = gpuclk::bench::parse_recorded_run(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
    gpuclk::bench::compare_runs(run, run);
  } catch (const gpuclk::Error&) {
  }
  return 0;
}
