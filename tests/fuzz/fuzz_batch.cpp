// libFuzzer target: `occupancy --batch` CSV (occupancy::parse_batch_csv and the calculator).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "occupancy/batch.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    gpuclk::occupancy::parse_batch_csv(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const gpuclk::Error&) {
  }
  return 0;
}
