#include "sweep/repeat.h"

#include <algorithm>

namespace gpuclk::sweep {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

std::optional<double> relative_spread(const std::vector<double>& rates, double reference) {
  if (rates.size() < 2 || !(reference > 0)) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(rates.begin(), rates.end());
  return (*hi - *lo) / reference;
}

std::vector<double> window_rates(const std::vector<TimedWork>& pieces, unsigned windows,
                                 double window_seconds) {
  if (windows == 0 || !(window_seconds > 0)) return {};
  struct Sum {
    double work = 0, seconds = 0;
  };
  std::vector<Sum> sums(windows);
  for (const auto& p : pieces) {
    const double at = std::max(0.0, p.start_seconds / window_seconds);
    const auto k = std::min<std::size_t>(static_cast<std::size_t>(at), windows - 1);
    sums[k].work += p.work;
    sums[k].seconds += p.seconds;
  }
  std::vector<double> rates;
  for (const auto& s : sums) {
    if (s.seconds > 0) rates.push_back(s.work / s.seconds);
  }
  return rates;
}

}  // namespace gpuclk::sweep
