#include "sweep/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "gpu/clock_list.h"
#include "util/error.h"

namespace gpuclk::sweep {
namespace {

constexpr std::size_t kMaxPoints = 1000;

double parse_number(std::string_view text, std::string_view option, std::string_view whole) {
  double v = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(v) || v < 0) {
    throw bad_argument(fmt::format("{} {}: '{}' is not a number", option, whole, text),
                       fmt::format("give A:B:STEP (e.g. {}) or a list (e.g. {})",
                                   option == "--power-limits" ? "200:700:50" : "810:1980:90",
                                   option == "--power-limits" ? "300,500,700" : "990,1410,1980"));
  }
  return v;
}

// "1980 MHz" / "612.5 W".
std::string show(double v, std::string_view unit) {
  return std::fabs(v - std::round(v)) < 1e-9 ? fmt::format("{:.0f} {}", v, unit)
                                             : fmt::format("{} {}", v, unit);
}

}  // namespace

std::string_view key_of(Axis axis) {
  return axis == Axis::sm_clock ? "requested_sm_mhz" : "requested_power_limit_w";
}
std::string_view unit_of(Axis axis) { return axis == Axis::sm_clock ? "MHz" : "W"; }

std::vector<double> parse_points(std::string_view text, std::string_view option) {
  std::vector<double> out;
  if (text.find(':') != std::string_view::npos) {
    std::vector<std::string_view> parts;
    std::size_t from = 0;
    for (std::size_t colon; (colon = text.find(':', from)) != std::string_view::npos;) {
      parts.push_back(text.substr(from, colon - from));
      from = colon + 1;
    }
    parts.push_back(text.substr(from));
    if (parts.size() != 3) {
      throw bad_argument(fmt::format("{} {}: a range is A:B:STEP (three numbers)", option, text));
    }
    const double a = parse_number(parts[0], option, text);
    const double b = parse_number(parts[1], option, text);
    const double step = parse_number(parts[2], option, text);
    if (step <= 0) throw bad_argument(fmt::format("{} {}: STEP must be above 0", option, text));
    const double n = std::floor(std::fabs(b - a) / step + 1e-9);
    if (n + 1 > kMaxPoints) {
      throw bad_argument(
          fmt::format("{} {}: {} points; at most {}", option, text, n + 1, kMaxPoints));
    }
    const double dir = b >= a ? 1 : -1;
    for (int k = 0; k <= static_cast<int>(n); ++k) out.push_back(a + dir * step * k);
  } else {
    std::size_t from = 0;
    while (from <= text.size()) {
      const auto comma = std::min(text.find(',', from), text.size());
      out.push_back(parse_number(text.substr(from, comma - from), option, text));
      from = comma + 1;
    }
    if (out.size() > kMaxPoints) {
      throw bad_argument(fmt::format("{}: {} points; at most {}", option, out.size(), kMaxPoints));
    }
  }
  return out;
}

CheckedPoints check_sm_clocks(const std::vector<double>& values,
                              const std::vector<units::Megahertz>& supported, bool snap,
                              unsigned gpu) {
  if (supported.empty()) {
    throw Error(ExitCode::not_supported,
                fmt::format("GPU {} does not report its supported SM clocks", gpu),
                "sweep --power-limits instead");
  }
  std::vector<double> mhz;
  mhz.reserve(supported.size());
  for (auto c : supported) mhz.push_back(c.value());
  std::sort(mhz.begin(), mhz.end());
  mhz.erase(std::unique(mhz.begin(), mhz.end()), mhz.end());
  const double lo = mhz.front(), hi = mhz.back();
  // The grid as `gpuclk clocks` writes it (a V100's 7.5 MHz steps are 7 and 8 MHz gaps).
  const auto range_text = gpu::describe_clocks(supported);
  CheckedPoints out;
  std::set<double> seen;
  for (double v : values) {
    const auto above = std::lower_bound(mhz.begin(), mhz.end(), v - 1e-9);
    double chosen = v;
    if (above == mhz.end() || std::fabs(*above - v) > 1e-9) {
      const bool outside = v < lo || v > hi;
      if (!snap) {
        std::string nearest;
        if (above != mhz.begin() && !outside) nearest += show(*(above - 1), "MHz");
        if (above != mhz.end() && !outside) {
          nearest += (nearest.empty() ? "" : " or ") + show(*above, "MHz");
        }
        throw bad_argument(
            outside ? fmt::format("SM clock {} is outside GPU {}'s supported clocks ({})",
                                  show(v, "MHz"), gpu, range_text)
                    : fmt::format("SM clock {} is not a supported clock of GPU {} (nearest: {}; "
                                  "supported: {})",
                                  show(v, "MHz"), gpu, nearest, range_text),
            "give clocks on that grid, or --snap to round each to the nearest supported clock");
      }
      if (above == mhz.end()) {
        chosen = hi;
      } else if (above == mhz.begin()) {
        chosen = lo;
      } else {
        chosen = (v - *(above - 1) <= *above - v) ? *(above - 1) : *above;
      }
      out.notes.push_back(
          fmt::format("GPU {}: snapped {} → {}", gpu, show(v, "MHz"), show(chosen, "MHz")));
    }
    if (seen.insert(chosen).second) out.values.push_back(chosen);
  }
  return out;
}

CheckedPoints check_power_limits(const std::vector<double>& values, units::Watts min,
                                 units::Watts max, bool snap, unsigned gpu) {
  CheckedPoints out;
  std::set<double> seen;
  for (double v : values) {
    double chosen = v;
    if (v < min.value() - 1e-9 || v > max.value() + 1e-9) {
      if (!snap) {
        throw bad_argument(
            fmt::format("power limit {} is outside GPU {}'s range ({}–{})", show(v, "W"), gpu,
                        show(min.value(), "W"), show(max.value(), "W")),
            "give limits inside that range, or --snap to clamp them into it");
      }
      chosen = std::clamp(v, min.value(), max.value());
      out.notes.push_back(
          fmt::format("GPU {}: clamped {} → {}", gpu, show(v, "W"), show(chosen, "W")));
    }
    if (seen.insert(chosen).second) out.values.push_back(chosen);
  }
  return out;
}

CheckedPoints check_points(Axis axis, const std::vector<double>& raw,
                           const std::vector<gpu::Device*>& gpus, bool snap) {
  CheckedPoints out;
  for (auto* g : gpus) {
    CheckedPoints checked;
    if (axis == Axis::sm_clock) {
      std::vector<units::Megahertz> clocks;
      if (const auto& supported = g->clock_limits().supported_clocks;
          supported && !supported->empty()) {
        // The highest memory clock (NVML lists it first): the one the GPU runs at.
        clocks = supported->front().graphics;
      }
      checked = check_sm_clocks(raw, clocks, snap, g->index());
    } else {
      const auto& range = g->ratings().power_constraints;
      if (!range) {
        throw Error(ExitCode::not_supported,
                    fmt::format("GPU {} does not report its power limit range", g->index()),
                    "sweep --sm-clocks instead");
      }
      checked = check_power_limits(raw, range->min, range->max, snap, g->index());
    }
    if (out.values.empty()) out.values = checked.values;
    out.notes.insert(out.notes.end(), checked.notes.begin(), checked.notes.end());
  }
  return out;
}

}  // namespace gpuclk::sweep
