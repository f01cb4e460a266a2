// The GEMM workload through cuBLASLt. Layouts follow what torch.matmul hands cuBLAS for
// row-major tensors (no transposes, "NN"), so the comparison in perf/bench_vs_torch.sh runs the
// same problem; FP8 is the exception: Hopper's FP8 kernels take A transposed only ("TN").
#include <algorithm>
#include <cstdio>
#include <limits>
#include <vector>

#include "bench/detail/cuda_resources.h"
#include "bench/detail/kernel.h"
#include "bench/gemm_kernels.h"

namespace gpuclk::bench::detail {

namespace {

constexpr int kVerifySamples = 256;
// Autotuning keeps the heuristic's first choice unless another is clearly faster: under a power
// cap a short timing can favour a kernel that is not faster once the clock settles.
constexpr double kAutotuneMargin = 0.98;
constexpr double kAutotuneSecondsPerCandidate = 0.05;
constexpr double kRefused = std::numeric_limits<double>::infinity();

struct TypeConfig {
  ElementType input;
  ElementType output;
  cudaDataType_t input_type;
  cudaDataType_t output_type;
  cublasComputeType_t compute;
  bool a_transposed;
};

TypeConfig type_config(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::fp32:
      return {ElementType::f32, ElementType::f32,   CUDA_R_32F,
              CUDA_R_32F,       CUBLAS_COMPUTE_32F, false};
    case GemmDtype::tf32:
      return {ElementType::f32,
              ElementType::f32,
              CUDA_R_32F,
              CUDA_R_32F,
              CUBLAS_COMPUTE_32F_FAST_TF32,
              false};
    case GemmDtype::fp16:
      return {ElementType::f16, ElementType::f16,   CUDA_R_16F,
              CUDA_R_16F,       CUBLAS_COMPUTE_32F, false};
    case GemmDtype::bf16:
      return {ElementType::bf16, ElementType::bf16,  CUDA_R_16BF,
              CUDA_R_16BF,       CUBLAS_COMPUTE_32F, false};
    case GemmDtype::fp8:
      return {ElementType::e4m3, ElementType::bf16,  CUDA_R_8F_E4M3,
              CUDA_R_16BF,       CUBLAS_COMPUTE_32F, true};
  }
  throw Error(ExitCode::bad_argument, "gemm: unknown dtype");
}

std::string format_double(double value, const char* format) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// One configuration attribute of a chosen algorithm, for the record; "?" if cuBLASLt will not
// say (it only describes, so it must never fail the run).
template <class T>
std::string algo_attribute(const cublasLtMatmulAlgo_t& algo,
                           cublasLtMatmulAlgoConfigAttributes_t attribute) {
  T value{};
  std::size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof value, &written) !=
      CUBLAS_STATUS_SUCCESS) {
    return "?";
  }
  return std::to_string(value);
}

class GemmKernel final : public Kernel {
 public:
  GemmKernel(const GemmSpec& spec, const DeviceInfo& device, const RunOptions& options,
             cudaStream_t stream)
      : spec_(spec), config_(type_config(spec.dtype)), seed_(options.seed) {
    if (spec.dtype == GemmDtype::fp8 && device.cc_major * 10 + device.cc_minor < 89) {
      throw Error(ExitCode::not_supported,
                  "gemm fp8 needs FP8 tensor cores (compute capability 8.9 or newer: Ada, "
                  "Hopper); " +
                      device.name + " is " + std::to_string(device.cc_major) + "." +
                      std::to_string(device.cc_minor),
                  "use --dtype bf16 or fp16 on this GPU");
    }
    const auto m = std::size_t(spec.m), n = std::size_t(spec.n), k = std::size_t(spec.k);
    const auto in_bytes = std::size_t(input_element_bytes(spec.dtype));
    a_ = DeviceBuffer(m * k * in_bytes);
    b_ = DeviceBuffer(k * n * in_bytes);
    d_ = DeviceBuffer(m * n * std::size_t(output_element_bytes(spec.dtype)));
    workspace_ = DeviceBuffer(std::max<std::size_t>(spec.workspace_bytes, 256));
    fill_input(a_.get(), m * k, seed_, stream);
    fill_input(b_.get(), k * n, seed_ + 1, stream);
    // On zeros or a constant a GEMM that never ran could match its reference from a zeroed D:
    // D starts as NaN (all bits set) there, which the check fails.
    GPUCLK_CUDA_CHECK(
        cudaMemsetAsync(d_.get(), spec.input == InputKind::random ? 0 : 0xff, d_.bytes(), stream));

    handle_ = make_lt_handle();
    describe_problem();
    choose_algorithm(stream);
    GPUCLK_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void launch(cudaStream_t stream) override { GPUCLK_CUDA_CHECK(matmul(algo_, stream)); }

 private:
  void fill_input(void* data, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
    switch (spec_.input) {
      case InputKind::random:
        return fill_random(config_.input, data, count, seed, stream);
      case InputKind::zeros:
        GPUCLK_CUDA_CHECK(cudaMemsetAsync(
            data, 0, count * std::size_t(input_element_bytes(spec_.dtype)), stream));
        return;
      case InputKind::constant:
        return fill_constant(config_.input, data, count, kConstantInput, stream);
    }
  }

 public:
  double work_per_launch() const override {
    return 2.0 * double(spec_.m) * double(spec_.n) * double(spec_.k);
  }
  RateUnit unit() const override { return RateUnit::flop_per_second; }

  Verification verify(cudaStream_t stream) override {
    const std::vector<MatrixPosition> positions =
        gemm_sample_positions(spec_.m, spec_.n, kVerifySamples, seed_ ^ 0x5eed);
    const int count = int(positions.size());
    std::vector<std::int64_t> rows(count), cols(count);
    for (int i = 0; i < count; ++i) {
      rows[i] = positions[i].row;
      cols[i] = positions[i].col;
    }
    DeviceBuffer device_rows(count * sizeof(std::int64_t));
    DeviceBuffer device_cols(count * sizeof(std::int64_t));
    DeviceBuffer device_out(3 * static_cast<std::size_t>(count) * sizeof(double));
    GPUCLK_CUDA_CHECK(cudaMemcpyAsync(device_rows.get(), rows.data(), device_rows.bytes(),
                                      cudaMemcpyHostToDevice, stream));
    GPUCLK_CUDA_CHECK(cudaMemcpyAsync(device_cols.get(), cols.data(), device_cols.bytes(),
                                      cudaMemcpyHostToDevice, stream));
    ReferenceProblem problem;
    problem.input_type = config_.input;
    problem.output_type = config_.output;
    problem.a = a_.get();
    problem.b = b_.get();
    problem.d = d_.get();
    problem.m = spec_.m;
    problem.n = spec_.n;
    problem.k = spec_.k;
    problem.a_transposed = config_.a_transposed;
    launch_reference(problem, device_rows.as<std::int64_t>(), device_cols.as<std::int64_t>(), count,
                     device_out.as<double>(), stream);
    std::vector<double> out(3 * std::size_t(count));
    GPUCLK_CUDA_CHECK(cudaMemcpyAsync(out.data(), device_out.get(), device_out.bytes(),
                                      cudaMemcpyDeviceToHost, stream));
    GPUCLK_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<GemmSample> samples(count);
    for (int i = 0; i < count; ++i) {
      const auto j = 3 * static_cast<std::size_t>(i);
      samples[i] = {out[j + 2], out[j], out[j + 1]};
    }
    return verify_gemm(spec_.dtype, spec_.k, samples);
  }

  std::vector<std::pair<std::string, std::string>> details() const override { return details_; }

 private:
  cublasStatus_t matmul(const cublasLtMatmulAlgo_t& algo, cudaStream_t stream) const {
    return cublasLtMatmul(handle_.get(), desc_.get(), &alpha_, a_.get(), a_layout_.get(), b_.get(),
                          b_layout_.get(), &beta_, d_.get(), d_layout_.get(), d_.get(),
                          d_layout_.get(), &algo, workspace_.get(), workspace_.bytes(), stream);
  }

  void describe_problem() {
    desc_ = make_matmul_desc(config_.compute, CUDA_R_32F);
    const std::int32_t transa = config_.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    const std::int32_t transb = CUBLAS_OP_N;
    GPUCLK_CUDA_CHECK(cublasLtMatmulDescSetAttribute(desc_.get(), CUBLASLT_MATMUL_DESC_TRANSA,
                                                     &transa, sizeof transa));
    GPUCLK_CUDA_CHECK(cublasLtMatmulDescSetAttribute(desc_.get(), CUBLASLT_MATMUL_DESC_TRANSB,
                                                     &transb, sizeof transb));
    const auto m = std::uint64_t(spec_.m), n = std::uint64_t(spec_.n), k = std::uint64_t(spec_.k);
    a_layout_ = config_.a_transposed ? make_matrix_layout(config_.input_type, k, m, spec_.k)
                                     : make_matrix_layout(config_.input_type, m, k, spec_.m);
    b_layout_ = make_matrix_layout(config_.input_type, k, n, spec_.k);
    d_layout_ = make_matrix_layout(config_.output_type, m, n, spec_.m);
  }

  void choose_algorithm(cudaStream_t stream) {
    LtPreference preference = make_preference();
    const std::uint64_t workspace = workspace_.bytes();
    GPUCLK_CUDA_CHECK(cublasLtMatmulPreferenceSetAttribute(
        preference.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace));
    std::vector<cublasLtMatmulHeuristicResult_t> results(std::size_t(spec_.autotune_candidates));
    int returned = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
        handle_.get(), desc_.get(), a_layout_.get(), b_layout_.get(), d_layout_.get(),
        d_layout_.get(), preference.get(), int(results.size()), results.data(), &returned);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED ||
        (status == CUBLAS_STATUS_SUCCESS && returned == 0)) {
      throw Error(ExitCode::not_supported,
                  "cuBLASLt has no algorithm for gemm " + std::string(to_string(spec_.dtype)) +
                      " " + std::to_string(spec_.m) + "x" + std::to_string(spec_.n) + "x" +
                      std::to_string(spec_.k) + " on this GPU",
                  "try another dtype or size, or a larger workspace");
    }
    GPUCLK_CUDA_CHECK(status);
    results.resize(std::size_t(returned));

    std::size_t chosen = 0;
    std::string autotune = "off (heuristic's first choice)";
    if (results.size() > 1) {
      std::vector<double> seconds(results.size(), 0);
      for (std::size_t i = 0; i < results.size(); ++i) {
        seconds[i] = time_algorithm(results[i].algo, stream);
      }
      std::size_t fastest = 0;
      for (std::size_t i = 1; i < results.size(); ++i) {
        if (seconds[i] < seconds[fastest]) fastest = i;
      }
      // The first choice stays unless another is clearly faster (or the first would not run).
      if (seconds[fastest] < kAutotuneMargin * seconds[0]) chosen = fastest;
      if (seconds[chosen] == kRefused) {
        throw Error(ExitCode::not_supported,
                    "cuBLASLt refused every algorithm it proposed for gemm " +
                        std::string(to_string(spec_.dtype)));
      }
      autotune = std::to_string(results.size()) + " candidates timed; chosen #" +
                 std::to_string(chosen) + " at " +
                 (seconds[0] == kRefused
                      ? std::string("(#0 refused)")
                      : format_double(seconds[chosen] / seconds[0], "%.3f") + "x the time of #0");
    }
    algo_ = results[chosen].algo;

    details_ = {
        {"library", "cuBLASLt " + std::to_string(cublasLtGetVersion())},
        {"layout", config_.a_transposed ? "TN (column-major)" : "NN (column-major)"},
        {"compute",
         spec_.dtype == GemmDtype::tf32 ? "CUBLAS_COMPUTE_32F_FAST_TF32" : "CUBLAS_COMPUTE_32F"},
        {"workspace_bytes", std::to_string(workspace_.bytes())},
        {"algorithm_workspace_bytes", std::to_string(results[chosen].workspaceSize)},
        {"heuristic_rank", std::to_string(chosen)},
        {"autotune", autotune},
        {"algo_id", algo_attribute<std::int32_t>(algo_, CUBLASLT_ALGO_CONFIG_ID)},
        {"tile_id", algo_attribute<std::uint32_t>(algo_, CUBLASLT_ALGO_CONFIG_TILE_ID)},
        {"stages_id", algo_attribute<std::uint32_t>(algo_, CUBLASLT_ALGO_CONFIG_STAGES_ID)},
        {"splitk", algo_attribute<std::int32_t>(algo_, CUBLASLT_ALGO_CONFIG_SPLITK_NUM)},
        {"waves", format_double(results[chosen].wavesCount, "%.2f")},
    };
  }

  // Mean seconds per launch of `algo`; infinity if cuBLASLt refuses to run it.
  double time_algorithm(const cublasLtMatmulAlgo_t& algo, cudaStream_t stream) const {
    if (matmul(algo, stream) != CUBLAS_STATUS_SUCCESS) return kRefused;
    Event start, stop;
    start.record(stream);
    if (matmul(algo, stream) != CUBLAS_STATUS_SUCCESS) return kRefused;
    stop.record(stream);
    stop.synchronize();
    const double once = stop.seconds_since(start);
    const int launches =
        std::clamp(int(kAutotuneSecondsPerCandidate / std::max(once, 1e-6)), 1, 50);
    start.record(stream);
    for (int i = 0; i < launches; ++i) {
      if (matmul(algo, stream) != CUBLAS_STATUS_SUCCESS) return kRefused;
    }
    stop.record(stream);
    stop.synchronize();
    return stop.seconds_since(start) / launches;
  }

  GemmSpec spec_;
  TypeConfig config_;
  std::uint64_t seed_;
  float alpha_ = 1.0f;
  float beta_ = 0.0f;
  DeviceBuffer a_, b_, d_, workspace_;
  LtHandle handle_;
  LtMatmulDesc desc_;
  LtMatrixLayout a_layout_, b_layout_, d_layout_;
  cublasLtMatmulAlgo_t algo_{};
  std::vector<std::pair<std::string, std::string>> details_;
};

}  // namespace

std::unique_ptr<Kernel> make_gemm(const GemmSpec& spec, const DeviceInfo& device,
                                  const RunOptions& options, cudaStream_t stream) {
  return std::make_unique<GemmKernel>(spec, device, options, stream);
}

}  // namespace gpuclk::bench::detail
