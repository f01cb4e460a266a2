#include "telemetry/interval.h"

#include <fmt/format.h>

#include "util/error.h"
#include "util/parse.h"

namespace gpuclk::telemetry {
namespace {

Duration rounded(double seconds) {
  return std::chrono::round<Duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

std::optional<Duration> parse_interval(std::string_view text) {
  // The one duration syntax (util/parse.h): ms, s, m, h or bare seconds.
  const auto seconds = parse::try_duration_seconds(text, 86400);
  if (!seconds) return std::nullopt;
  const auto d = rounded(*seconds);
  if (d < kMinInterval) return std::nullopt;
  return d;
}

Duration interval_option(std::string_view text, std::string_view option) {
  if (auto d = parse_interval(text)) return *d;
  throw bad_argument(fmt::format("bad interval {} {}", option, text),
                     "give seconds (0.1) or milliseconds (100ms), at least 10ms");
}

Duration duration_option(std::string_view text, std::string_view option, double min_seconds,
                         double max_seconds, std::string_view examples) {
  return rounded(parse::duration_seconds(text, option, min_seconds, max_seconds, examples));
}

}  // namespace gpuclk::telemetry
