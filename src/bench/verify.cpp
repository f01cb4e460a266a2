#include "bench/verify.h"

#include <algorithm>
#include <cmath>

#include "bench/random.h"

namespace gpuclk::bench {

double GemmTolerance::allowed(const GemmSample& s) const {
  // The floor only matters if every sampled term was zero, which random inputs never give.
  return (input_rounding + accumulation) * s.scale + output_rounding * std::abs(s.reference) +
         1e-30;
}

GemmTolerance gemm_tolerance(GemmDtype dtype, std::int64_t k) {
  GemmTolerance t;
  const double sqrt_k = std::sqrt(double(std::max<std::int64_t>(k, 1)));
  // Input rounding errors of random sign add up like a random walk: std ≈ 0.82·2^-10·scale for
  // TF32 truncation of both operands; 5e-3 is six standard deviations.
  if (dtype == GemmDtype::tf32) t.input_rounding = 5e-3;
  // FP32 accumulate: tensor cores truncate rather than round inside an MMA, so the error grows
  // faster than u·√k; 2^-19·√k (1.7e-4 at k = 8192) leaves room for that and for split-K orders.
  // Hopper's FP8 MMA keeps about 14 mantissa bits between cuBLAS's FP32 promotions.
  t.accumulation = sqrt_k * std::ldexp(1.0, dtype == GemmDtype::fp8 ? -12 : -19);
  t.output_rounding = 2 * output_unit_roundoff(dtype);
  return t;
}

Verification verify_gemm(GemmDtype dtype, std::int64_t k, std::span<const GemmSample> samples) {
  const GemmTolerance tolerance = gemm_tolerance(dtype, k);
  Verification v;
  v.checked = true;
  v.samples = samples.size();
  v.bound = tolerance.input_rounding + tolerance.accumulation;
  v.method = "sampled elements vs fp64 reference; error in units of sqrt(sum (a*b)^2)";
  for (const GemmSample& s : samples) {
    const double error = std::abs(s.computed - s.reference);
    const double allowed = tolerance.allowed(s);
    // NaN or Inf output is a failure whatever the bound.
    if (!std::isfinite(s.computed) || !(error <= allowed)) ++v.failures;
    const double share = std::isfinite(s.computed) ? error / allowed : HUGE_VAL;
    v.worst_of_allowed = std::max(v.worst_of_allowed, share);
    const double normalized = s.scale > 0 ? error / s.scale : error;
    if (!std::isfinite(normalized)) {
      v.max_error = normalized;
    } else if (std::isfinite(v.max_error)) {
      v.max_error = std::max(v.max_error, normalized);
    }
  }
  v.passed = v.samples > 0 && v.failures == 0;
  return v;
}

Verification verify_exact(std::uint64_t compared, std::uint64_t mismatches, std::string method) {
  Verification v;
  v.checked = true;
  v.samples = compared;
  v.failures = mismatches;
  v.max_error = mismatches > 0 ? 1 : 0;
  v.passed = compared > 0 && mismatches == 0;
  v.method = std::move(method);
  return v;
}

std::vector<MatrixPosition> gemm_sample_positions(std::int64_t m, std::int64_t n, int count,
                                                  std::uint64_t seed) {
  std::vector<MatrixPosition> positions;
  if (m < 1 || n < 1 || count < 1) return positions;
  positions.reserve(count);
  // Corners catch leading-dimension and transpose mistakes that interior points can miss.
  const MatrixPosition corners[] = {{0, 0}, {m - 1, 0}, {0, n - 1}, {m - 1, n - 1}};
  for (const MatrixPosition& c : corners) {
    if (int(positions.size()) < count) positions.push_back(c);
  }
  std::uint64_t state = seed;
  while (int(positions.size()) < count) {
    const std::uint64_t r = splitmix64(state);
    positions.push_back(
        {std::int64_t(r % std::uint64_t(m)), std::int64_t((r >> 32) % std::uint64_t(n))});
  }
  return positions;
}

}  // namespace gpuclk::bench
