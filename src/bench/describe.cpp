// Names, descriptions and argument checks of the workload specs: no CUDA, built everywhere.
#include <string>

#include "bench/workload.h"
#include "util/error.h"

namespace gpuclk::bench {

namespace {
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

constexpr std::int64_t kMaxDimension = std::int64_t(1) << 31;
}  // namespace

std::string_view to_string(MemKind kind) {
  switch (kind) {
    case MemKind::copy:
      return "copy";
    case MemKind::copy_kernel:
      return "copy_kernel";
    case MemKind::triad:
      return "triad";
  }
  return "?";
}

std::optional<MemKind> parse_mem_kind(std::string_view name) {
  for (MemKind k : {MemKind::copy, MemKind::copy_kernel, MemKind::triad}) {
    if (name == to_string(k)) return k;
  }
  return std::nullopt;
}

std::string_view to_string(InputKind kind) {
  switch (kind) {
    case InputKind::random:
      return "random";
    case InputKind::zeros:
      return "zeros";
    case InputKind::constant:
      return "constant";
  }
  return "?";
}

std::optional<InputKind> parse_input_kind(std::string_view name) {
  for (InputKind k : {InputKind::random, InputKind::zeros, InputKind::constant}) {
    if (name == to_string(k)) return k;
  }
  return std::nullopt;
}

std::string_view to_string(RateUnit unit) {
  return unit == RateUnit::flop_per_second ? "FLOP/s" : "B/s";
}

std::string workload_name(const WorkloadSpec& spec) {
  return std::visit(Overloaded{[](const GemmSpec&) { return std::string("gemm"); },
                               [](const MemSpec&) { return std::string("mem"); },
                               [](const FmaSpec&) { return std::string("fma"); }},
                    spec);
}

std::string describe(const WorkloadSpec& spec) {
  const auto inputs = [](InputKind input) {
    return input == InputKind::random ? std::string() : ", " + std::string(to_string(input));
  };
  return std::visit(Overloaded{[&](const GemmSpec& g) {
                                 return std::string(to_string(g.dtype)) + " " +
                                        std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
                                        std::to_string(g.k) + inputs(g.input);
                               },
                               [&](const MemSpec& m) {
                                 return std::string(to_string(m.kind)) + " " +
                                        std::to_string(m.bytes) + " B" + inputs(m.input);
                               },
                               [](const FmaSpec& f) {
                                 return "fp32 " + std::to_string(f.iterations) + " iterations";
                               }},
                    spec);
}

std::string describe_input(const WorkloadSpec& spec) {
  const auto words = [](InputKind input, bool bits, bool gemm) -> std::string {
    switch (input) {
      case InputKind::random:
        return bits ? "random bits" : "random uniform in [-1, 1)";
      case InputKind::zeros:
        return "zeros";
      case InputKind::constant:
        return gemm ? "constant 0.75" : "constant byte 0x55";  // kConstantInput, kConstantByte
    }
    return "?";
  };
  return std::visit(
      Overloaded{[&](const GemmSpec& g) { return words(g.input, false, true); },
                 [&](const MemSpec& m) { return words(m.input, m.kind != MemKind::triad, false); },
                 [](const FmaSpec&) { return std::string("none (registers)"); }},
      spec);
}

void validate(const WorkloadSpec& spec) {
  std::visit(Overloaded{[](const GemmSpec& g) {
                          for (auto [name, value] :
                               {std::pair{"m", g.m}, std::pair{"n", g.n}, std::pair{"k", g.k}}) {
                            if (value < 1 || value > kMaxDimension) {
                              throw bad_argument(std::string("gemm: ") + name + " = " +
                                                 std::to_string(value) + " is outside 1.." +
                                                 std::to_string(kMaxDimension));
                            }
                            // cuBLASLt's FP8 kernels need 16-byte aligned leading dimensions.
                            if (g.dtype == GemmDtype::fp8 && value % 16 != 0) {
                              throw bad_argument(
                                  std::string("gemm fp8: ") + name + " = " + std::to_string(value) +
                                      " is not a multiple of 16",
                                  "cuBLASLt's FP8 kernels need 16-byte aligned dimensions");
                            }
                          }
                          if (g.autotune_candidates < 1 || g.autotune_candidates > 32) {
                            throw bad_argument("gemm: autotune candidates must be 1..32");
                          }
                        },
                        [](const MemSpec& m) {
                          if (m.bytes < 16 || m.bytes % 16 != 0) {
                            throw bad_argument("mem: bytes = " + std::to_string(m.bytes) +
                                               " must be a positive multiple of 16");
                          }
                        },
                        [](const FmaSpec& f) {
                          if (f.iterations < 1 || f.iterations > 0x7fffffff) {
                            throw bad_argument("fma: iterations must be 1..2147483647");
                          }
                        }},
             spec);
}

}  // namespace gpuclk::bench
