// Durations as users type them: "1" or "0.5" (seconds, as nvidia-smi's -d), "100ms", "2s", "1m",
// "1h": util/parse.h's one duration syntax, as the telemetry clock's Duration.
#pragma once

#include <optional>
#include <string_view>

#include "telemetry/sample.h"

namespace gpuclk::telemetry {

// The shortest interval the sampler accepts: a fast tick reads ~15 values per GPU in a few µs,
// but the driver refreshes most of them no faster than this.
inline constexpr Duration kMinInterval = std::chrono::milliseconds(10);

// nullopt when `text` is not a number with an optional unit (ms, s, m, h), or below kMinInterval,
// or above a day.
std::optional<Duration> parse_interval(std::string_view text);

// A sampling interval option (parse_interval), or Error (exit 2) naming it: "bad interval
// --interval 1ms" / "give seconds (0.1) or milliseconds (100ms), at least 10ms".
Duration interval_option(std::string_view text, std::string_view option);

// A duration option: parse::duration_seconds (its range, its error naming `option`), rounded to
// the nearest Duration tick.
Duration duration_option(std::string_view text, std::string_view option, double min_seconds,
                         double max_seconds, std::string_view examples);

}  // namespace gpuclk::telemetry
