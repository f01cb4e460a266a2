#include "bench/dtype.h"

#include <cmath>

namespace gpuclk::bench {

std::string_view to_string(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::fp32:
      return "fp32";
    case GemmDtype::tf32:
      return "tf32";
    case GemmDtype::fp16:
      return "fp16";
    case GemmDtype::bf16:
      return "bf16";
    case GemmDtype::fp8:
      return "fp8";
  }
  return "?";
}

std::optional<GemmDtype> parse_gemm_dtype(std::string_view name) {
  for (GemmDtype d : kAllGemmDtypes) {
    if (name == to_string(d)) return d;
  }
  if (name == "e4m3") return GemmDtype::fp8;
  return std::nullopt;
}

int input_element_bytes(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::fp32:
    case GemmDtype::tf32:
      return 4;
    case GemmDtype::fp16:
    case GemmDtype::bf16:
      return 2;
    case GemmDtype::fp8:
      return 1;
  }
  return 0;
}

int output_element_bytes(GemmDtype dtype) {
  // FP8 writes BF16: an FP8 output would round away most of what the check could see.
  return dtype == GemmDtype::fp32 || dtype == GemmDtype::tf32 ? 4 : 2;
}

double output_unit_roundoff(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::fp32:
    case GemmDtype::tf32:
      return std::ldexp(1.0, -24);
    case GemmDtype::fp16:
      return std::ldexp(1.0, -11);
    case GemmDtype::bf16:
    case GemmDtype::fp8:
      return std::ldexp(1.0, -8);
  }
  return 0;
}

}  // namespace gpuclk::bench
