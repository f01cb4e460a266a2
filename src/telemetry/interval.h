// Sampling intervals as users type them: "1" or "0.5" (seconds, as nvidia-smi's -d), "100ms", "2s",
// "1m": util/parse.h's one duration syntax.
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

}  // namespace gpuclk::telemetry
