// The memory workload. Bytes are counted as DRAM traffic the program asks for (read + written),
// the convention of STREAM and of PyTorch bandwidth scripts; a 1 GiB copy therefore moves 2 GiB.
#include <algorithm>

#include "bench/detail/cuda_resources.h"
#include "bench/detail/kernel.h"
#include "bench/mem_kernels.h"

namespace gpuclk::bench::detail {

namespace {

constexpr float kTriadScalar = 1.75f;

class MemKernel final : public Kernel {
 public:
  MemKernel(const MemSpec& spec, const DeviceInfo& device, const RunOptions& options,
            cudaStream_t stream)
      : spec_(spec) {
    const std::size_t bytes = spec.bytes;
    if (spec.kind == MemKind::triad) {
      a_ = DeviceBuffer(bytes);
      b_ = DeviceBuffer(bytes);
      c_ = DeviceBuffer(bytes);
      if (spec.input == InputKind::random) {
        fill_random_floats(b_.as<float>(), bytes / 4, options.seed, stream);
        fill_random_floats(c_.as<float>(), bytes / 4, options.seed + 1, stream);
      } else {
        fill_bytes(b_, stream);
        fill_bytes(c_, stream);
      }
      clear_destination(stream);
      blocks_ = std::max(1, triad_blocks_per_sm()) * std::max(1, device.sm_count);
    } else {
      // a_ = destination, b_ = source.
      a_ = DeviceBuffer(bytes);
      b_ = DeviceBuffer(bytes);
      if (spec.input == InputKind::random)
        fill_random_words(b_.as<std::uint32_t>(), bytes / 4, options.seed, stream);
      else
        fill_bytes(b_, stream);
      clear_destination(stream);
      if (spec.kind == MemKind::copy_kernel) copy_plan_ = plan_copy(spec.bytes);
    }
    GPUCLK_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void launch(cudaStream_t stream) override {
    switch (spec_.kind) {
      case MemKind::copy:
        GPUCLK_CUDA_CHECK(
            cudaMemcpyAsync(a_.get(), b_.get(), spec_.bytes, cudaMemcpyDeviceToDevice, stream));
        break;
      case MemKind::copy_kernel:
        launch_copy(a_.get(), b_.get(), spec_.bytes, copy_plan_, stream);
        break;
      case MemKind::triad:
        launch_triad(a_.as<float>(), b_.as<float>(), c_.as<float>(), kTriadScalar, spec_.bytes / 4,
                     blocks_, stream);
        break;
    }
  }

  double work_per_launch() const override {
    return double(spec_.bytes) * (spec_.kind == MemKind::triad ? 3.0 : 2.0);
  }
  RateUnit unit() const override { return RateUnit::byte_per_second; }

  Verification verify(cudaStream_t stream) override {
    DeviceBuffer counter(sizeof(unsigned long long));
    GPUCLK_CUDA_CHECK(cudaMemsetAsync(counter.get(), 0, counter.bytes(), stream));
    const std::size_t words = spec_.bytes / 4;
    if (spec_.kind == MemKind::triad) {
      count_triad_mismatches(a_.as<float>(), b_.as<float>(), c_.as<float>(), kTriadScalar, words,
                             counter.as<unsigned long long>(), stream);
    } else {
      count_copy_mismatches(a_.as<std::uint32_t>(), b_.as<std::uint32_t>(), words,
                            counter.as<unsigned long long>(), stream);
    }
    unsigned long long mismatches = 0;
    GPUCLK_CUDA_CHECK(cudaMemcpyAsync(&mismatches, counter.get(), sizeof mismatches,
                                      cudaMemcpyDeviceToHost, stream));
    GPUCLK_CUDA_CHECK(cudaStreamSynchronize(stream));
    return verify_exact(words, mismatches,
                        spec_.kind == MemKind::triad
                            ? "every element equals fma(s, c, b) bit for bit"
                            : "every 32-bit word of the destination equals the source");
  }

  std::vector<std::pair<std::string, std::string>> details() const override {
    std::vector<std::pair<std::string, std::string>> d = {
        {"bytes_per_array", std::to_string(spec_.bytes)},
        {"arrays", spec_.kind == MemKind::triad ? "3" : "2"},
    };
    if (spec_.kind == MemKind::copy) {
      d.emplace_back("method", "cudaMemcpyAsync device to device");
    } else if (spec_.kind == MemKind::triad) {
      d.emplace_back("method", "triad kernel, float4");
      d.emplace_back("grid", std::to_string(blocks_) + " x " + std::to_string(kMemThreads));
    } else {
      d.emplace_back("method", "copy kernel, a 16-byte vector per thread");
      d.emplace_back(
          "grid", std::to_string(copy_plan_.blocks) + " x " + std::to_string(copy_plan_.threads));
    }
    return d;
  }

 private:
  // Zeros or the constant byte in every byte of `buffer`.
  void fill_bytes(DeviceBuffer& buffer, cudaStream_t stream) {
    const int byte = spec_.input == InputKind::zeros ? 0 : kConstantByte;
    GPUCLK_CUDA_CHECK(cudaMemsetAsync(buffer.get(), byte, buffer.bytes(), stream));
  }
  // The destination starts unlike any result: on zeros or a constant a copy that never ran
  // could match its source from a zeroed destination, so it starts as all bits set there.
  void clear_destination(cudaStream_t stream) {
    GPUCLK_CUDA_CHECK(
        cudaMemsetAsync(a_.get(), spec_.input == InputKind::random ? 0 : 0xff, a_.bytes(), stream));
  }

  MemSpec spec_;
  DeviceBuffer a_, b_, c_;
  int blocks_ = 0;  // triad
  CopyPlan copy_plan_;
};

}  // namespace

std::unique_ptr<Kernel> make_mem(const MemSpec& spec, const DeviceInfo& device,
                                 const RunOptions& options, cudaStream_t stream) {
  return std::make_unique<MemKernel>(spec, device, options, stream);
}

}  // namespace gpuclk::bench::detail
