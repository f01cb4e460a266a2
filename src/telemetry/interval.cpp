#include "telemetry/interval.h"

#include <charconv>
#include <string>

namespace gpuclk::telemetry {

std::optional<Duration> parse_interval(std::string_view text) {
  // std::from_chars for double is in libstdc++ 11+; stod would accept leading spaces and hex.
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  std::string_view unit(end, std::size_t(text.data() + text.size() - end));
  double seconds;
  if (unit.empty() || unit == "s")
    seconds = value;
  else if (unit == "ms")
    seconds = value / 1000;
  else
    return std::nullopt;
  if (!(seconds * 1e9 >= double(kMinInterval.count())) || seconds > 86400) return std::nullopt;
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
}

}  // namespace gpuclk::telemetry
