// bench p2p between two GPUs: copy-engine and SM-kernel bandwidth one way and both ways at once,
// and the latency of a dependent load from one GPU into the other's memory.
//
// Which GPU issues what follows nvbandwidth's tests, so each figure pairs with one of them:
// a read is queued on the destination's stream (its PREFER_DST_CONTEXT), a write on the
// source's; the bidirectional figure is two reads at once, one queued on each GPU, each timed by
// its own events, summed.
#include "bench/detail/cuda_resources.h"
#include "bench/detail/p2p_timing.h"
#include "bench/p2p.h"
#include "bench/p2p_kernels.h"

namespace gpuclk::bench::p2p {

namespace {

using detail::DeviceBuffer;
using detail::DeviceGuard;
using detail::Lane;

// Peer access from `device` to `peer`, enabled for the object's life (a process-local mapping,
// no GPU setting); left alone when something else had already enabled it.
class PeerAccess {
 public:
  PeerAccess(int device, int peer) : device_(device), peer_(peer) {
    DeviceGuard guard(device);
    const cudaError_t rc = cudaDeviceEnablePeerAccess(peer, 0);
    if (rc == cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError();  // clears the sticky-looking status of the call above
      return;
    }
    GPUCLK_CUDA_CHECK(rc);
    enabled_here_ = true;
  }
  ~PeerAccess() {
    if (!enabled_here_) return;
    DeviceGuard guard(device_);
    (void)cudaDeviceDisablePeerAccess(peer_);
  }
  PeerAccess(const PeerAccess&) = delete;
  PeerAccess& operator=(const PeerAccess&) = delete;

 private:
  int device_, peer_;
  bool enabled_here_ = false;
};

DeviceBuffer allocate_on(int device, std::size_t bytes) {
  DeviceGuard guard(device);
  return DeviceBuffer(bytes);
}

int sm_count(int device) {
  int sms = 0;
  GPUCLK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

// `count` copies of src (on src_device) to dst (on dst_device), queued on `stream`. With peer
// access the copy is direct; without it the driver stages it through host memory.
std::function<void(cudaStream_t, int)> ce_copies(void* dst, int dst_device, const void* src,
                                                 int src_device, std::size_t bytes) {
  return [=](cudaStream_t stream, int count) {
    for (int i = 0; i < count; ++i) {
      GPUCLK_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, stream));
    }
  };
}

std::function<void(cudaStream_t, int)> sm_copies(void* dst, const void* src, std::size_t bytes,
                                                 int sms) {
  return [=](cudaStream_t stream, int count) {
    detail::launch_sm_copy(dst, src, bytes, count, sms, stream);
  };
}

// The four buffers of a pair: one to read from and one to write to on each GPU.
struct PairBuffers {
  DeviceBuffer device_1, device_2, peer_1, peer_2;
};

void check(Measured& m, const Options& options, int device, const void* dst, const void* src) {
  if (!options.verify) return;
  m.verified = detail::count_mismatches(device, dst, src, m.bytes_per_copy) == 0;
}

Measured latency(int device, int peer, const Options& options) {
  DeviceBuffer chain = allocate_on(peer, options.latency_bytes);
  {
    DeviceGuard guard(peer);
    detail::Stream stream;
    // 128 bytes apart, nvbandwidth's stride: one L2 line per load.
    detail::launch_build_chain(chain.get(), chain.bytes(), 128, stream.get());
    stream.synchronize();
  }
  DeviceGuard guard(device);
  detail::Stream stream;
  DeviceBuffer sink(sizeof(void*));
  detail::Event start, end;
  // One untimed pass over the whole chain: maps the pages and warms the peer's L2, as
  // nvbandwidth's timed launches (about 1 MiB of chain each, from the head) find it.
  detail::launch_chase(chain.get(), (long long)(options.latency_bytes / 128), sink.as<void*>(),
                       stream.get());
  Measured m;
  m.figure = Figure::latency;
  for (int s = 0; s < options.samples; ++s) {
    if (options.on_sample) options.on_sample(Figure::latency, device, peer, s, options.samples);
    start.record(stream.get());
    detail::launch_chase(chain.get(), options.latency_accesses, sink.as<void*>(), stream.get());
    end.record(stream.get());
    end.synchronize();
    m.samples.push_back(end.seconds_since(start) / options.latency_accesses);
  }
  m.summary = summarize(m.samples);
  return m;
}

}  // namespace

bool can_access_peer(int device, int peer) {
  int yes = 0;
  GPUCLK_CUDA_CHECK(cudaDeviceCanAccessPeer(&yes, device, peer));
  return yes != 0;
}

PeerResult measure_peer(int device, int peer, const Options& options,
                        const std::function<void()>& while_busy) {
  validate(options);
  PeerResult result;
  result.device = device;
  result.peer = peer;
  result.peer_access = can_access_peer(device, peer) && can_access_peer(peer, device);
  std::unique_ptr<PeerAccess> forward, backward;
  if (result.peer_access) {
    forward = std::make_unique<PeerAccess>(device, peer);
    backward = std::make_unique<PeerAccess>(peer, device);
  }
  for (int d : {device, peer}) {
    DeviceGuard guard(d);
    detail::preload_p2p_kernels();
  }
  const std::size_t bytes = options.bytes;
  PairBuffers b{allocate_on(device, bytes), allocate_on(device, bytes), allocate_on(peer, bytes),
                allocate_on(peer, bytes)};
  detail::fill_random(device, b.device_1.get(), bytes, 1);
  detail::fill_random(device, b.device_2.get(), bytes, 2);
  detail::fill_random(peer, b.peer_1.get(), bytes, 3);
  detail::fill_random(peer, b.peer_2.get(), bytes, 4);
  std::function<void()> busy = while_busy;

  auto run = [&](Figure figure, std::vector<Lane> lanes) {
    return detail::measure_lanes(figure, lanes, options, device, peer, &busy);
  };
  // Read: the peer's buffer 1 into ours; write: our buffer 2 into the peer's buffer 2.
  std::vector<Lane> read;
  read.emplace_back(device, bytes,
                    ce_copies(b.device_1.get(), device, b.peer_1.get(), peer, bytes));
  Measured ce_read = run(Figure::ce_read, std::move(read));
  std::vector<Lane> write;
  write.emplace_back(device, bytes,
                     ce_copies(b.peer_2.get(), peer, b.device_2.get(), device, bytes));
  Measured ce_write = run(Figure::ce_write, std::move(write));
  if (result.peer_access) {
    check(ce_read, options, device, b.device_1.get(), b.peer_1.get());
    check(ce_write, options, device, b.peer_2.get(), b.device_2.get());
  }
  // Both reads at once: ours from the peer's buffer 1, the peer's from our buffer 2.
  std::vector<Lane> both;
  both.emplace_back(device, bytes,
                    ce_copies(b.device_1.get(), device, b.peer_1.get(), peer, bytes));
  both.emplace_back(peer, bytes, ce_copies(b.peer_2.get(), peer, b.device_2.get(), device, bytes));
  Measured ce_both = run(Figure::ce_bidirectional, std::move(both));
  result.figures = {std::move(ce_read), std::move(ce_write), std::move(ce_both)};
  if (!result.peer_access) return result;

  const int device_sms = sm_count(device), peer_sms = sm_count(peer);
  std::vector<Lane> sm_read;
  sm_read.emplace_back(device, bytes,
                       sm_copies(b.device_1.get(), b.peer_1.get(), bytes, device_sms));
  Measured read_sm = run(Figure::sm_read, std::move(sm_read));
  check(read_sm, options, device, b.device_1.get(), b.peer_1.get());
  std::vector<Lane> sm_write;
  sm_write.emplace_back(device, bytes,
                        sm_copies(b.peer_2.get(), b.device_2.get(), bytes, device_sms));
  Measured write_sm = run(Figure::sm_write, std::move(sm_write));
  check(write_sm, options, device, b.peer_2.get(), b.device_2.get());
  std::vector<Lane> sm_both;
  sm_both.emplace_back(device, bytes,
                       sm_copies(b.device_1.get(), b.peer_1.get(), bytes, device_sms));
  sm_both.emplace_back(peer, bytes, sm_copies(b.peer_2.get(), b.device_2.get(), bytes, peer_sms));
  Measured both_sm = run(Figure::sm_bidirectional, std::move(sm_both));
  result.figures.push_back(std::move(read_sm));
  result.figures.push_back(std::move(write_sm));
  result.figures.push_back(std::move(both_sm));
  result.figures.push_back(latency(device, peer, options));
  return result;
}

}  // namespace gpuclk::bench::p2p
