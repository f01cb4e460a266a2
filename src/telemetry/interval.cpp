#include "telemetry/interval.h"

#include "util/parse.h"

namespace gpuclk::telemetry {

std::optional<Duration> parse_interval(std::string_view text) {
  // The one duration syntax (util/parse.h): ms, s, m, h or bare seconds.
  const auto seconds = parse::try_duration_seconds(text, 86400);
  if (!seconds) return std::nullopt;
  const auto d = std::chrono::round<Duration>(std::chrono::duration<double>(*seconds));
  if (d < kMinInterval) return std::nullopt;
  return d;
}

}  // namespace gpuclk::telemetry
