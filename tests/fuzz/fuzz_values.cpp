// libFuzzer target: every value parser the CLI hands a user's text to (-i selections, set's
// values, sizes, formats, intervals, kernel patterns). The first byte picks the parser.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "control/request.h"
#include "gpu/selection.h"
#include "occupancy/arch_limits.h"
#include "occupancy/batch.h"
#include "output/format.h"
#include "telemetry/interval.h"
#include "util/error.h"
#include "util/glob.h"
#include "util/parse.h"

using namespace gpuclk;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  static const std::vector<gpu::DeviceKey> keys = {
      {0, "GPU-cba78776-3017-caf5-5d64-a73aee97faac", "00000000:00:06.0"},
      {1, "GPU-1b2c9d11-0000-0000-0000-000000000001", "00000000:00:07.0"},
      {3, "GPU-1b2c0000-0000-0000-0000-000000000002", "00000000:1A:00.0"}};
  try {
    switch (data[0] % 12) {
      case 0: {
        const auto chosen = gpu::select_devices(text, keys);
        for (auto p : chosen) {
          if (p >= keys.size()) __builtin_trap();  // a position that names no GPU
        }
        break;
      }
      case 1: {
        const auto p = control::parse_power_limit(text, "--power-limit");
        (void)p;
        break;
      }
      case 2:
        control::parse_clock_lock(text, "--lock-gpu-clocks");
        break;
      case 3:
        control::parse_application_clocks(text, "--app-clocks");
        break;
      case 4:
        control::parse_on_off(text, "--persistence");
        break;
      case 5:
        output::parse_format(text);
        break;
      case 6:
        telemetry::parse_interval(text);
        break;
      case 7:
        occupancy::parse_bytes(text);
        occupancy::parse_architecture(text);
        break;
      case 8: {
        glob::check(text, "--kernel");
        const auto half = text.size() / 2;
        glob::search(text.substr(0, half), text.substr(half));
        break;
      }
      case 9:
        parse::try_real(text, -1e300, 1e300);
        parse::try_fixed(text, 3, UINT64_MAX);
        break;
      case 10:
        parse::try_size(text, UINT64_MAX);
        parse::try_duration_seconds(text, 1e9);
        parse::try_percent(text);
        break;
      default:
        parse::try_integer(text, INT64_MIN, INT64_MAX);
        parse::try_unsigned(text);
        gpu::normalize_bus_id(text);
        break;
    }
  } catch (const Error& e) {
    // A bad value is an Error with a message of bounded length, never anything else.
    if (std::string(e.what()).size() > 2000) __builtin_trap();
  }
  return 0;
}
