#include "bench/detail/p2p_timing.h"

#include <atomic>

#include "bench/mem_kernels.h"
#include "bench/p2p_kernels.h"

namespace gpuclk::bench::detail {

namespace {
// A spin that outlives this has lost its host (enqueueing blocked, or a debugger): the copies
// then start on their own and the sample includes some launch time rather than hanging.
constexpr unsigned long long kSpinTimeoutNs = 10'000'000'000ULL;
}  // namespace

Lane::Lane(int device, std::size_t bytes, std::function<void(cudaStream_t, int)> enqueue)
    : device_(device), bytes_(bytes), enqueue_(std::move(enqueue)) {
  DeviceGuard guard(device);
  stream_ = std::make_unique<Stream>();
  start_ = std::make_unique<Event>();
  end_ = std::make_unique<Event>();
}

SpinTimer::SpinTimer() {
  void* host = nullptr;
  GPUCLK_CUDA_CHECK(cudaHostAlloc(&host, sizeof(int), cudaHostAllocPortable | cudaHostAllocMapped));
  flag_ = static_cast<volatile int*>(host);
  *flag_ = 0;
  void* device = nullptr;
  GPUCLK_CUDA_CHECK(cudaHostGetDevicePointer(&device, host, 0));
  device_flag_ = static_cast<int*>(device);
}

SpinTimer::~SpinTimer() { (void)cudaFreeHost(const_cast<int*>(flag_)); }

std::vector<double> SpinTimer::sample(std::vector<Lane>& lanes, int warmup_copies, int copies,
                                      const std::function<void()>& while_busy) {
  *flag_ = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (Lane& lane : lanes) {
    DeviceGuard guard(lane.device_);
    launch_spin(device_flag_, kSpinTimeoutNs, lane.stream());
    if (warmup_copies > 0) lane.enqueue_(lane.stream(), warmup_copies);
  }
  {
    DeviceGuard guard(lanes.front().device_);
    lanes.front().start_->record(lanes.front().stream());
  }
  for (std::size_t i = 1; i < lanes.size(); ++i) {
    DeviceGuard guard(lanes[i].device_);
    GPUCLK_CUDA_CHECK(cudaStreamWaitEvent(lanes[i].stream(), lanes.front().start_->get(), 0));
    lanes[i].start_->record(lanes[i].stream());
  }
  for (Lane& lane : lanes) {
    DeviceGuard guard(lane.device_);
    lane.enqueue_(lane.stream(), copies);
    lane.end_->record(lane.stream());
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *flag_ = 1;
  if (while_busy) while_busy();
  std::vector<double> rates;
  for (Lane& lane : lanes) {
    lane.end_->synchronize();
    const double seconds = lane.end_->seconds_since(*lane.start_);
    rates.push_back(seconds > 0 ? double(lane.bytes_) * copies / seconds : 0);
  }
  return rates;
}

p2p::Measured measure_lanes(p2p::Figure figure, std::vector<Lane>& lanes,
                            const p2p::Options& options, int device, int peer,
                            std::function<void()>* while_busy) {
  SpinTimer timer;
  p2p::Measured m;
  m.figure = figure;
  m.bytes_per_copy = lanes.front().bytes();
  for (int s = 0; s < options.samples; ++s) {
    if (options.on_sample) options.on_sample(figure, device, peer, s, options.samples);
    std::function<void()> busy;
    if (while_busy && *while_busy) busy = std::exchange(*while_busy, {});
    double total = 0;
    for (double rate : timer.sample(lanes, options.warmup_copies, options.copies_per_sample, busy))
      total += rate;
    m.samples.push_back(total);
  }
  m.summary = summarize(m.samples);
  return m;
}

unsigned long long count_mismatches(int device, const void* x, const void* y, std::size_t bytes) {
  DeviceGuard guard(device);
  Stream stream;
  DeviceBuffer counter(sizeof(unsigned long long));
  GPUCLK_CUDA_CHECK(cudaMemsetAsync(counter.get(), 0, counter.bytes(), stream.get()));
  count_copy_mismatches(static_cast<const std::uint32_t*>(x), static_cast<const std::uint32_t*>(y),
                        bytes / sizeof(std::uint32_t), counter.as<unsigned long long>(),
                        stream.get());
  unsigned long long mismatches = 0;
  GPUCLK_CUDA_CHECK(cudaMemcpyAsync(&mismatches, counter.get(), sizeof mismatches,
                                    cudaMemcpyDeviceToHost, stream.get()));
  stream.synchronize();
  return mismatches;
}

void fill_random(int device, void* data, std::size_t bytes, std::uint64_t seed) {
  DeviceGuard guard(device);
  Stream stream;
  fill_random_words(static_cast<std::uint32_t*>(data), bytes / sizeof(std::uint32_t), seed,
                    stream.get());
  stream.synchronize();
}

}  // namespace gpuclk::bench::detail
