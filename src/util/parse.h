// One checked parser for every number gpuclk reads from a person or a file: the CLI, profiles,
// simulator scenarios, batch CSV, the journal, and the output of external tools (cuobjdump,
// ptxas). Each checks syntax, sign, overflow, NaN/inf and range BEFORE any conversion, so no
// value wraps, saturates or turns into a different one on the way in. Text is plain decimal:
// no leading '+', no spaces, no hex, no exponent (a typo must not become a valid number).
//
// The try_ forms return nullopt when the text is not a number of that kind or is out of range;
// the others throw Error (exit 2) naming `what`, the bad value (quoted, at most ~80 chars) and
// the valid range.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace gpuclk::parse {

// `text` for an error message: at most `max` characters (a longer one is cut, "…(N chars)"),
// control characters shown as '?', so a hostile value cannot flood or rewrite a terminal.
std::string quote(std::string_view text, std::size_t max = 80);

// Decimal digits only, in [min, max].
std::optional<std::uint64_t> try_unsigned(
    std::string_view text, std::uint64_t min = 0,
    std::uint64_t max = std::numeric_limits<std::uint64_t>::max());
std::uint64_t unsigned_integer(std::string_view text, std::string_view what, std::uint64_t min = 0,
                               std::uint64_t max = std::numeric_limits<std::uint64_t>::max());

// Optional '-' then digits, in [min, max].
std::optional<std::int64_t> try_integer(std::string_view text, std::int64_t min, std::int64_t max);

// Decimal real: [-]digits[.digits] or [-].digits; finite; in [min, max].
std::optional<double> try_real(std::string_view text, double min, double max);
double real(std::string_view text, std::string_view what, double min, double max);

// A decimal with at most `decimals` fractional digits, as an exact integer count of
// 10^-decimals units ("612.5" with 3 decimals → 612500). No floating point on the way: for
// watts → milliwatts. nullopt on syntax, more fractional digits, or a result above `max`.
std::optional<std::uint64_t> try_fixed(std::string_view text, unsigned decimals, std::uint64_t max);

// A byte size: digits with an optional suffix K/KB/KiB (1024), M/MB/MiB, G/GB/GiB
// (case-insensitive), in [0, max].
std::optional<std::uint64_t> try_size(std::string_view text, std::uint64_t max);

// A duration: a real with a unit s, ms, us, m, h (a bare number is seconds), in (0, max_seconds].
// The one duration syntax of every option (-d, --interval, --duration, --history, …), so a
// suffix that works for one works for all of them.
std::optional<double> try_duration_seconds(std::string_view text, double max_seconds);

// try_duration_seconds in [min_seconds, max_seconds], or Error (exit 2) naming `option`, the bad
// value and the valid range: "bad --duration '2d'" / "give a duration from 1s to 1h, e.g. …".
// `examples` are the option's own ("30s, 2m, 1h or 90 (seconds)").
double duration_seconds(std::string_view text, std::string_view option, double min_seconds,
                        double max_seconds, std::string_view examples);

// A duration as the options take it, in its largest whole unit: 0.01 → "10ms", 90 → "90s",
// 3600 → "1h", 604800 → "168h".
std::string duration_text(double seconds);

// A percentage "0".."100" with an optional '%': the fraction 0..1.
std::optional<double> try_percent(std::string_view text);

}  // namespace gpuclk::parse
