#include "govern/sensitivity.h"

#include <algorithm>
#include <cmath>

namespace gpuclk::govern {
namespace {

// An elasticity outside this range is noise (a phase change inside the pair, a GPM window that
// straddles the clock change); learning ignores it.
constexpr double kMaxElasticity = 1.5;
constexpr double kMinElasticity = -0.2;

}  // namespace

ClockSensitivity::ClockSensitivity(double prior, Megahertz band)
    : prior_(prior), band_mhz_(band.value()) {}

int ClockSensitivity::band_of(double mhz) const {
  return static_cast<int>(std::floor(mhz / band_mhz_));
}

void ClockSensitivity::observe(std::uint64_t run, Megahertz clock, double throughput) {
  if (!(throughput > 0) || clock.value() <= 0) return;
  if (lowest_.value() == 0 || clock < lowest_) lowest_ = clock;
  const double f = clock.value();
  if (run == run_ && std::abs(f - clock_) < 0.5) {
    throughput_sum_ += throughput;
    throughput_count_ += 1;
    return;
  }
  if (run == run_ && throughput_count_ > 0) {
    learn(clock_, throughput_sum_ / throughput_count_, f, throughput);
  }
  run_ = run;
  clock_ = f;
  throughput_sum_ = throughput;
  throughput_count_ = 1;
}

void ClockSensitivity::learn(double f1, double t1, double f2, double t2) {
  const double e = std::log(t2 / t1) / std::log(f2 / f1);
  if (!std::isfinite(e) || e > kMaxElasticity || e < kMinElasticity) return;
  ++pairs_;
  // Every band the pair spans learns it.
  for (int b = band_of(std::min(f1, f2)); b <= band_of(std::max(f1, f2) - 1e-6); ++b) {
    bands_[b].sum += std::max(0.0, e);
    bands_[b].count += 1;
  }
}

double ClockSensitivity::elasticity_at(Megahertz f) const {
  if (bands_.empty()) return prior_;
  const int b = band_of(f.value());
  if (auto it = bands_.find(b); it != bands_.end()) return it->second.sum / it->second.count;
  const auto& [lowest_band, lowest] = *bands_.begin();
  if (b < lowest_band) return std::max(prior_, lowest.sum / lowest.count);
  // The nearest learned band (above or below).
  auto above = bands_.lower_bound(b);
  auto pick = above;
  if (above == bands_.end() ||
      (above != bands_.begin() && b - std::prev(above)->first < above->first - b)) {
    pick = std::prev(above);
  }
  return pick->second.sum / pick->second.count;
}

double ClockSensitivity::slowdown(Megahertz f, Megahertz f_max) const {
  if (f >= f_max) return 0;
  // ln(time(f) / time(f_max)) = ∫ e(φ) d ln φ from f to f_max, band by band.
  double log_ratio = 0;
  double lo = f.value();
  while (lo < f_max.value() - 1e-9) {
    const double band_top = (band_of(lo) + 1) * band_mhz_;
    const double hi = std::min(band_top, f_max.value());
    log_ratio += elasticity_at(Megahertz(lo)) * std::log(hi / lo);
    lo = hi;
  }
  return std::exp(log_ratio) - 1;
}

}  // namespace gpuclk::govern
