#include "gpu/clock_list.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/text.h"

namespace gpuclk::gpu {

ClockListSummary summarize_clocks(const std::vector<units::Megahertz>& clocks) {
  ClockListSummary s;
  if (clocks.empty()) return s;
  auto sorted = clocks;
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.count = sorted.size();
  if (sorted.size() >= 3) {
    double step = sorted[1].value() - sorted[0].value();
    bool uniform = step > 0;
    for (std::size_t i = 2; i < sorted.size() && uniform; ++i) {
      uniform = std::abs(sorted[i].value() - sorted[i - 1].value() - step) < 1e-9;
    }
    if (uniform) s.step = units::Megahertz(step);
  }
  return s;
}

std::string describe_clocks(const std::vector<units::Megahertz>& clocks) {
  if (clocks.empty()) return "none";
  auto s = summarize_clocks(clocks);
  if (s.step.value() > 0) {
    return fmt::format("{:.0f}\u2013{:.0f} MHz, step {:.0f}, {}", s.min.value(), s.max.value(),
                       s.step.value(), text::counted(s.count, "value"));
  }
  auto sorted = clocks;
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (const auto& c : sorted) out += fmt::format("{}{:.0f}", out.empty() ? "" : ", ", c.value());
  return out + " MHz";
}

units::Megahertz nearest_clock(const std::vector<units::Megahertz>& clocks,
                               units::Megahertz target) {
  auto best = clocks.front();
  for (const auto& c : clocks) {
    double d = std::abs(c.value() - target.value());
    double b = std::abs(best.value() - target.value());
    if (d < b || (d == b && c < best)) best = c;
  }
  return best;
}

}  // namespace gpuclk::gpu
