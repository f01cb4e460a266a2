// The FMA workload: one wave of resident blocks, so every SM runs the same work and the rate
// is the SM clock times the FP32 pipes' width.
#include <algorithm>
#include <cmath>
#include <vector>

#include "bench/detail/cuda_resources.h"
#include "bench/detail/kernel.h"
#include "bench/fma_kernel.h"
#include "bench/fma_math.h"

namespace gpuclk::bench::detail {

namespace {

constexpr double kMaxHostReplayFmas = double(1 << 30);

// The host replays the recurrence for a few threads; std::fma rounds exactly like __fmaf_rn.
float expected_sum(std::uint64_t thread, std::int64_t iterations) {
  float sum = 0;
  for (int j = 0; j < kFmaChains; ++j) {
    float x = fma_initial_value(thread, j);
    for (std::int64_t step = 0; step < iterations * kFmaUnroll; ++step) {
      x = std::fma(x, kFmaMultiplier, kFmaAddend);
    }
    sum += x;
  }
  return sum;
}

class FmaKernel final : public Kernel {
 public:
  FmaKernel(const FmaSpec& spec, const DeviceInfo& device, cudaStream_t stream) : spec_(spec) {
    blocks_ = std::max(1, fma_blocks_per_sm()) * std::max(1, device.sm_count);
    threads_ = std::size_t(blocks_) * kFmaThreads;
    out_ = DeviceBuffer(threads_ * sizeof(float));
    GPUCLK_CUDA_CHECK(cudaMemsetAsync(out_.get(), 0, out_.bytes(), stream));
    GPUCLK_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void launch(cudaStream_t stream) override {
    launch_fma(out_.as<float>(), spec_.iterations, kFmaMultiplier, kFmaAddend, blocks_, stream);
  }

  double work_per_launch() const override {
    return 2.0 * kFmaPerIteration * double(spec_.iterations) * double(threads_);
  }
  RateUnit unit() const override { return RateUnit::flop_per_second; }

  Verification verify(cudaStream_t stream) override {
    std::vector<float> out(threads_);
    GPUCLK_CUDA_CHECK(
        cudaMemcpyAsync(out.data(), out_.get(), out_.bytes(), cudaMemcpyDeviceToHost, stream));
    GPUCLK_CUDA_CHECK(cudaStreamSynchronize(stream));
    // A few threads spread over the grid; the replay costs iterations·256 FMAs on the host
    // each, so very long kernels get fewer checked threads, or none.
    const double replay_fmas = double(spec_.iterations) * kFmaPerIteration;
    const int threads_to_check = int(std::min(4.0, kMaxHostReplayFmas / replay_fmas));
    if (threads_to_check < 1) {
      Verification skipped;
      skipped.method = "skipped: replaying this many FMAs on the host would take too long";
      return skipped;
    }
    std::uint64_t mismatches = 0;
    for (int i = 0; i < threads_to_check; ++i) {
      const std::uint64_t thread = i == threads_to_check - 1 ? threads_ - 1 : i * threads_ / 3;
      if (out[thread] != expected_sum(thread, spec_.iterations)) ++mismatches;
    }
    return verify_exact(std::uint64_t(threads_to_check), mismatches,
                        "sampled threads' results equal a host replay bit for bit");
  }

  std::vector<std::pair<std::string, std::string>> details() const override {
    return {{"grid", std::to_string(blocks_) + " x " + std::to_string(kFmaThreads)},
            {"fma_per_thread", std::to_string(spec_.iterations * kFmaPerIteration)},
            {"chains_per_thread", std::to_string(kFmaChains)}};
  }

 private:
  FmaSpec spec_;
  int blocks_ = 0;
  std::size_t threads_ = 0;
  DeviceBuffer out_;
};

}  // namespace

std::unique_ptr<Kernel> make_fma(const FmaSpec& spec, const DeviceInfo& device, const RunOptions&,
                                 cudaStream_t stream) {
  return std::make_unique<FmaKernel>(spec, device, stream);
}

}  // namespace gpuclk::bench::detail
