#include "gpu/clock_list.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/text.h"

namespace gpuclk::gpu {

namespace {

std::vector<double> sorted_values(const std::vector<units::Megahertz>& clocks) {
  std::vector<double> v;
  v.reserve(clocks.size());
  for (const auto& c : clocks) v.push_back(c.value());
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::string mhz_text(double v) { return fmt::format("{:g}", v); }

}  // namespace

ClockListSummary summarize_clocks(const std::vector<units::Megahertz>& clocks) {
  ClockListSummary s;
  if (clocks.empty()) return s;
  const auto sorted = sorted_values(clocks);
  s.min = units::Megahertz(sorted.front());
  s.max = units::Megahertz(sorted.back());
  s.count = sorted.size();
  if (sorted.size() < 3) return s;
  const double step = sorted[1] - sorted[0];
  bool uniform = step > 0;
  for (std::size_t i = 2; i < sorted.size() && uniform; ++i) {
    uniform = std::abs(sorted[i] - sorted[i - 1] - step) < 1e-9;
  }
  if (uniform) {
    s.step = units::Megahertz(step);
    return s;
  }
  // A grid in fractional steps listed in whole MHz (V100: 135, 142, 150, 157, …): every gap is
  // the mean step rounded down or up.
  const double mean = (sorted.back() - sorted.front()) / static_cast<double>(sorted.size() - 1);
  bool rounded = mean >= 2;
  for (std::size_t i = 1; i < sorted.size() && rounded; ++i) {
    const double gap = sorted[i] - sorted[i - 1];
    rounded = gap >= std::floor(mean) - 1e-9 && gap <= std::ceil(mean) + 1e-9;
  }
  if (rounded) {
    s.step = units::Megahertz(std::round(mean * 100) / 100);
    s.step_rounded = true;
  }
  return s;
}

std::string describe_clocks(const std::vector<units::Megahertz>& clocks) {
  if (clocks.empty()) return "none";
  const auto s = summarize_clocks(clocks);
  if (s.step.value() > 0 && !s.step_rounded) {
    return fmt::format("{:.0f}\u2013{:.0f} MHz, step {:.0f}, {}", s.min.value(), s.max.value(),
                       s.step.value(), text::counted(s.count, "value"));
  }
  if (s.step_rounded) {
    return fmt::format("{:.0f}\u2013{:.0f} MHz in {:.0f}\u2013{:.0f} MHz steps ({} on average), {}",
                       s.min.value(), s.max.value(), std::floor(s.step.value()),
                       std::ceil(s.step.value()), mhz_text(s.step.value()),
                       text::counted(s.count, "value"));
  }
  // Irregular: runs of at least 4 values in equal steps as ranges, the others one by one.
  const auto v = sorted_values(clocks);
  std::string out;
  const auto append = [&out](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  std::size_t i = 0;
  while (i < v.size()) {
    std::size_t j = i + 1;
    if (j < v.size()) {
      const double step = v[j] - v[i];
      while (j + 1 < v.size() && std::abs(v[j + 1] - v[j] - step) < 1e-9) ++j;
      if (j - i + 1 >= 4) {
        append(fmt::format("{}\u2013{} step {}", mhz_text(v[i]), mhz_text(v[j]), mhz_text(step)));
        i = j + 1;
        continue;
      }
    }
    append(mhz_text(v[i]));
    ++i;
  }
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
