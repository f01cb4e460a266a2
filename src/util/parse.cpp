#include "util/parse.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "util/error.h"

namespace gpuclk::parse {
namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Digits to an integer, refusing anything above `max` before it can overflow.
std::optional<std::uint64_t> digits_value(std::string_view s, std::uint64_t max) {
  if (!all_digits(s)) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (d > max || v > (max - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

}  // namespace

std::string quote(std::string_view text, std::size_t max) {
  std::string out;
  const auto n = std::min(text.size(), max);
  out.reserve(n + 24);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
  }
  if (text.size() > max) out += fmt::format("\u2026({} chars)", text.size());
  return out;
}

std::optional<std::uint64_t> try_unsigned(std::string_view text, std::uint64_t min,
                                          std::uint64_t max) {
  auto v = digits_value(text, max);
  if (!v || *v < min) return std::nullopt;
  return v;
}

std::uint64_t unsigned_integer(std::string_view text, std::string_view what, std::uint64_t min,
                               std::uint64_t max) {
  if (auto v = try_unsigned(text, min, max)) return *v;
  throw bad_argument(
      fmt::format("{}: '{}' is not a whole number from {} to {}", what, quote(text), min, max),
      fmt::format("give decimal digits only, {}\u2013{}", min, max));
}

std::optional<std::int64_t> try_integer(std::string_view text, std::int64_t min, std::int64_t max) {
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  // |INT64_MIN| = INT64_MAX + 1.
  const auto limit =
      static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1u : 0u);
  auto v = digits_value(text, limit);
  if (!v) return std::nullopt;
  std::int64_t r = 0;
  if (negative) {
    r = *v == limit ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(*v);
  } else {
    r = static_cast<std::int64_t>(*v);
  }
  if (r < min || r > max) return std::nullopt;
  return r;
}

std::optional<double> try_real(std::string_view text, double min, double max) {
  std::string_view s = text;
  if (!s.empty() && s.front() == '-') s.remove_prefix(1);
  const auto dot = s.find('.');
  const auto whole = s.substr(0, dot);
  const auto frac = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  if (whole.empty() && frac.empty()) return std::nullopt;
  if (!whole.empty() && !all_digits(whole)) return std::nullopt;
  if (dot != std::string_view::npos && !frac.empty() && !all_digits(frac)) return std::nullopt;
  // Anything longer than a double can tell apart is not a typo we should accept silently, and it
  // bounds the work strtod does.
  if (text.size() > 64) return std::nullopt;
  const std::string copy(text);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(v)) return std::nullopt;
  if (v < min || v > max) return std::nullopt;
  return v;
}

double real(std::string_view text, std::string_view what, double min, double max) {
  if (auto v = try_real(text, min, max)) return *v;
  throw bad_argument(
      fmt::format("{}: '{}' is not a number from {} to {}", what, quote(text), min, max),
      "give a plain decimal number (e.g. 12.5)");
}

std::optional<std::uint64_t> try_fixed(std::string_view text, unsigned decimals,
                                       std::uint64_t max) {
  const auto dot = text.find('.');
  const auto whole = text.substr(0, dot);
  auto frac = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  if (whole.empty() && frac.empty()) return std::nullopt;
  if (!whole.empty() && !all_digits(whole)) return std::nullopt;
  if (!frac.empty() && !all_digits(frac)) return std::nullopt;
  if (frac.size() > decimals) return std::nullopt;
  std::uint64_t scale = 1;
  for (unsigned i = 0; i < decimals; ++i) scale *= 10;
  auto w = whole.empty() ? std::optional<std::uint64_t>(0) : digits_value(whole, max / scale);
  if (!w) return std::nullopt;
  std::uint64_t f = 0;
  for (unsigned i = 0; i < decimals; ++i) {
    f = f * 10 + (i < frac.size() ? static_cast<std::uint64_t>(frac[i] - '0') : 0);
  }
  const auto total = *w * scale;
  if (f > max - total) return std::nullopt;
  return total + f;
}

std::optional<std::uint64_t> try_size(std::string_view text, std::uint64_t max) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const auto suffix = text.substr(digits);
  std::uint64_t unit = 1;
  if (suffix.empty() || iequals(suffix, "b")) {
    unit = 1;
  } else if (iequals(suffix, "k") || iequals(suffix, "kb") || iequals(suffix, "kib")) {
    unit = 1ull << 10;
  } else if (iequals(suffix, "m") || iequals(suffix, "mb") || iequals(suffix, "mib")) {
    unit = 1ull << 20;
  } else if (iequals(suffix, "g") || iequals(suffix, "gb") || iequals(suffix, "gib")) {
    unit = 1ull << 30;
  } else {
    return std::nullopt;
  }
  auto v = digits_value(text.substr(0, digits), max / unit);
  if (!v) return std::nullopt;
  return *v * unit;
}

std::optional<double> try_duration_seconds(std::string_view text, double max_seconds) {
  std::size_t end = 0;
  while (end < text.size() && ((text[end] >= '0' && text[end] <= '9') || text[end] == '.')) ++end;
  const auto unit = text.substr(end);
  // Sub-second units divide (10ms is exactly 0.01 s, the same double as "0.01"): a range's
  // bound given either way compares equal.
  double scale = 1;
  double divisor = 1;
  if (unit.empty() || unit == "s") {
    scale = 1;
  } else if (unit == "ms") {
    divisor = 1e3;
  } else if (unit == "us") {
    divisor = 1e6;
  } else if (unit == "m" || unit == "min") {
    scale = 60;
  } else if (unit == "h") {
    scale = 3600;
  } else {
    return std::nullopt;
  }
  auto v = try_real(text.substr(0, end), 0, max_seconds * divisor / scale);
  if (!v || *v <= 0) return std::nullopt;
  return *v * scale / divisor;
}

double duration_seconds(std::string_view text, std::string_view option, double min_seconds,
                        double max_seconds, std::string_view examples) {
  const auto v = try_duration_seconds(text, max_seconds);
  if (v && *v >= min_seconds) return *v;
  throw bad_argument(fmt::format("bad {} '{}'", option, quote(text)),
                     fmt::format("give a duration from {} to {}, e.g. {} (units: ms, s, m, h; a "
                                 "bare number is seconds)",
                                 duration_text(min_seconds), duration_text(max_seconds), examples));
}

std::string duration_text(double seconds) {
  const auto whole = [seconds](double unit) {
    const double n = seconds / unit;
    return n >= 1 && n == std::floor(n);
  };
  if (whole(3600)) return fmt::format("{:g}h", seconds / 3600);
  if (whole(60)) return fmt::format("{:g}m", seconds / 60);
  if (seconds >= 1) return fmt::format("{:g}s", seconds);
  return fmt::format("{:g}ms", seconds * 1000);
}

std::optional<double> try_percent(std::string_view text) {
  if (!text.empty() && text.back() == '%') text.remove_suffix(1);
  auto v = try_real(text, 0, 100);
  if (!v) return std::nullopt;
  return *v / 100.0;
}

}  // namespace gpuclk::parse
