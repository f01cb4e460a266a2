// The timed core of bench p2p, shared by the peer and host measurements (p2p_peer.cpp,
// p2p_host.cpp). Internal to src/bench.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <vector>

#include "bench/detail/cuda_resources.h"
#include "bench/p2p.h"

namespace gpuclk::bench::detail {

// One stream of copies, on one device, timed by its own pair of events.
class Lane {
 public:
  // `enqueue(stream, count)` queues `count` copies of `bytes` each on `stream`.
  Lane(int device, std::size_t bytes, std::function<void(cudaStream_t, int)> enqueue);
  int device() const { return device_; }
  cudaStream_t stream() const { return stream_->get(); }
  std::size_t bytes() const { return bytes_; }

 private:
  friend class SpinTimer;
  int device_;
  std::size_t bytes_;
  std::function<void(cudaStream_t, int)> enqueue_;
  // Created with device_ current; held by pointer because they must be made under a guard.
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<Event> start_, end_;
};

// Times lanes the way nvbandwidth does: each stream is held by a spin kernel while its warm-up
// copies, start event, timed copies and end event are queued; the other lanes' starts wait on
// the first lane's; then the host releases them all at once.
class SpinTimer {
 public:
  SpinTimer();  // a pinned, device-mapped flag
  ~SpinTimer();
  SpinTimer(const SpinTimer&) = delete;
  SpinTimer& operator=(const SpinTimer&) = delete;

  // One sample: each lane's bytes × copies / its own elapsed time (B/s), in lane order.
  // `while_busy` (may be empty) runs after the release, while the copies run.
  std::vector<double> sample(std::vector<Lane>& lanes, int warmup_copies, int copies,
                             const std::function<void()>& while_busy);

 private:
  volatile int* flag_ = nullptr;
  int* device_flag_ = nullptr;
};

// Runs `options.samples` samples of all lanes at once; a sample's value is the sum of the lanes'
// rates (one lane: its rate; two: the bidirectional total). Reports each sample through
// options.on_sample as (figure, device, peer). `*while_busy`, when set, is called during the
// first sample and then cleared.
p2p::Measured measure_lanes(p2p::Figure figure, std::vector<Lane>& lanes,
                            const p2p::Options& options, int device, int peer,
                            std::function<void()>* while_busy);

// Counts 32-bit words where x and y differ (both readable from `device`); synchronizes.
unsigned long long count_mismatches(int device, const void* x, const void* y, std::size_t bytes);

// Fills `bytes` at `data` (readable and writable from `device`) with random words.
void fill_random(int device, void* data, std::size_t bytes, std::uint64_t seed);

}  // namespace gpuclk::bench::detail
