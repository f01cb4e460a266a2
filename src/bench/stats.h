// Summary of per-repetition rates (any unit: FLOP/s or B/s).
#pragma once

#include <span>

namespace gpuclk::bench {

struct RateSummary {
  double median = 0;  // the headline figure
  double mean = 0;
  double min = 0;
  double max = 0;
  double stddev = 0;  // sample standard deviation (n − 1); 0 for one value
  double spread = 0;  // (max − min) / median, a unitless ratio; 0 when the median is 0
  int count = 0;
};

// Summary of `rates`; all zero for an empty span. Median of an even count: mean of the middle two.
RateSummary summarize(std::span<const double> rates);

}  // namespace gpuclk::bench
