// Result checks of the workloads. GEMM: a sample of output elements against a reference computed
// in double from the stored inputs; copy, triad and FMA: exact comparison.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bench/dtype.h"

namespace gpuclk::bench {

struct Verification {
  bool checked = false;  // false: skipped (RunOptions::verify off)
  bool passed = false;
  std::uint64_t samples = 0;   // elements compared
  std::uint64_t failures = 0;  // elements outside their bound
  double max_error = 0;  // GEMM: max |computed − reference| / ‖a∘b‖₂; exact checks: 0 or 1
  double bound = 0;      // GEMM: the accumulation part of the bound (same unit); exact: 0
  // GEMM: the largest share of its own allowed error an element used (|error| / allowed, ≤ 1
  // passes): the one figure that says how close the check came, whatever the output rounding
  // (which `bound` leaves out) allowed each element. Exact checks: 0.
  double worst_of_allowed = 0;
  std::string method;  // one line saying how it was checked
};

// One sampled GEMM output element C(i,j): the value the GPU wrote, the double-precision
// reference Σ_l a_il·b_lj over the stored inputs, and scale = sqrt(Σ_l (a_il·b_lj)²), the size
// of the terms, to which rounding errors of a k-term sum are proportional.
struct GemmSample {
  double computed = 0;
  double reference = 0;
  double scale = 0;
};

// Allowed |computed − reference| for one element:
//   input_rounding·scale      TF32 only: tensor cores drop 13 mantissa bits of each FP32 input
// + accumulation(k)·scale     FP32 accumulation (2^-19·√k), FP8 tensor-core accumulation (2^-12·√k)
// + 2·u_out·|reference|       rounding to the output type
// With random inputs in [-1, 1] a wrong result is off by about 1.4·scale, far above the bound.
struct GemmTolerance {
  double input_rounding = 0;   // relative to scale
  double accumulation = 0;     // relative to scale
  double output_rounding = 0;  // relative to |reference|
  double allowed(const GemmSample& s) const;
};
GemmTolerance gemm_tolerance(GemmDtype dtype, std::int64_t k);

Verification verify_gemm(GemmDtype dtype, std::int64_t k, std::span<const GemmSample> samples);

// Exact checks: `mismatches` elements of `compared` differed.
Verification verify_exact(std::uint64_t compared, std::uint64_t mismatches, std::string method);

struct MatrixPosition {
  std::int64_t row = 0;
  std::int64_t col = 0;
  bool operator==(const MatrixPosition&) const = default;
};
// `count` deterministic positions in an m×n matrix: the four corners first, then pseudo-random
// ones from `seed`. Requires m, n ≥ 1.
std::vector<MatrixPosition> gemm_sample_positions(std::int64_t m, std::int64_t n, int count,
                                                  std::uint64_t seed);

}  // namespace gpuclk::bench
