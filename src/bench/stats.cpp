#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace gpuclk::bench {

RateSummary summarize(std::span<const double> rates) {
  RateSummary s;
  if (rates.empty()) return s;
  std::vector<double> sorted(rates.begin(), rates.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  s.count = int(n);
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(n);
  if (n > 1) {
    double sum_squares = 0;
    for (double r : sorted) sum_squares += (r - s.mean) * (r - s.mean);
    s.stddev = std::sqrt(sum_squares / double(n - 1));
  }
  s.spread = s.median != 0 ? (s.max - s.min) / s.median : 0;
  return s;
}

}  // namespace gpuclk::bench
