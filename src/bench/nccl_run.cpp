// bench nccl on the GPUs: one thread, one communicator per GPU from ncclCommInitAll, every
// operation of every rank inside one ncclGroupStart/End, timed as nccl-tests' BenchTime.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "bench/detail/cuda_check.h"
#include "bench/detail/cuda_resources.h"
#include "bench/nccl.h"
#include "bench/nccl_kernels.h"

namespace gpuclk::bench::nccl {
namespace {

using detail::CheckSpec;
using detail::DeviceBuffer;
using detail::DeviceGuard;
using detail::NcclCheck;
using detail::Stream;
using Clock = std::chrono::steady_clock;

ncclStream_t nccl_stream(cudaStream_t s) { return reinterpret_cast<ncclStream_t>(s); }

// A buffer NCCL moves data from or to, on the current device: from ncclMemAlloc where the
// library has it (NCCL 2.19+, what nccl-tests allocates with: memory NCCL can map for NVLink
// SHARP and registration), else cudaMalloc.
class NcclBuffer {
 public:
  NcclBuffer() = default;
  NcclBuffer(const Library& nccl, std::size_t bytes) : nccl_(&nccl) {
    if (nccl.ncclMemAlloc && nccl.ncclMemFree) {
      NCCL_CHECK(nccl, ncclMemAlloc, &data_, bytes);
      from_nccl_ = true;
    } else {
      GPUCLK_CUDA_CHECK(cudaMalloc(&data_, bytes));
    }
  }
  ~NcclBuffer() { release(); }
  NcclBuffer(NcclBuffer&& o) noexcept { *this = std::move(o); }
  NcclBuffer& operator=(NcclBuffer&& o) noexcept {
    if (this != &o) {
      release();
      nccl_ = o.nccl_;
      data_ = std::exchange(o.data_, nullptr);
      from_nccl_ = o.from_nccl_;
    }
    return *this;
  }
  float* data() const { return static_cast<float*>(data_); }

 private:
  void release() noexcept {
    if (!data_) return;
    if (from_nccl_)
      (void)nccl_->ncclMemFree(data_);
    else
      (void)cudaFree(data_);
    data_ = nullptr;
  }
  const Library* nccl_ = nullptr;
  void* data_ = nullptr;
  bool from_nccl_ = false;
};

struct Rank {
  int ordinal = 0;
  ncclComm_t comm = nullptr;
  std::unique_ptr<Stream> stream;
  NcclBuffer send, recv;
  DeviceBuffer wrong;
  float* send_data() const { return send.data(); }
  float* recv_data() const { return recv.data(); }
};

// The ranks, their communicators, streams and buffers; communicators destroyed at the end.
class Session {
 public:
  Session(const Library& nccl, std::span<const int> ordinals, std::size_t buffer_bytes)
      : nccl_(nccl), ranks_(ordinals.size()), buffer_elements_(buffer_bytes / 2 / kElementBytes) {
    std::vector<ncclComm_t> comms(ordinals.size(), nullptr);
    NCCL_CHECK(nccl_, ncclCommInitAll, comms.data(), int(ordinals.size()), ordinals.data());
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      ranks_[r].ordinal = ordinals[r];
      ranks_[r].comm = comms[r];
    }
    try {
      for (Rank& rank : ranks_) {
        DeviceGuard on(rank.ordinal);
        rank.stream = std::make_unique<Stream>();
        rank.send = NcclBuffer(nccl_, buffer_bytes / 2);
        rank.recv = NcclBuffer(nccl_, buffer_bytes / 2);
        rank.wrong = DeviceBuffer(sizeof(unsigned long long));
      }
    } catch (...) {
      destroy_communicators();
      throw;
    }
  }
  ~Session() { destroy_communicators(); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int size() const { return int(ranks_.size()); }
  Rank& rank(int r) { return ranks_[std::size_t(r)]; }
  const Library& nccl() const { return nccl_; }

  // Waits for every rank's stream as nccl-tests does: polls them all (cudaStreamQuery) and
  // asks NCCL for an asynchronous error meanwhile, so a failed peer ends the wait.
  void synchronize() {
    std::vector<bool> done(ranks_.size(), false);
    std::size_t remaining = ranks_.size();
    while (remaining > 0) {
      for (std::size_t i = 0; i < ranks_.size(); ++i) {
        if (done[i]) continue;
        const cudaError_t status = cudaStreamQuery(ranks_[i].stream->get());
        if (status == cudaSuccess) {
          done[i] = true;
          --remaining;
          continue;
        }
        if (status != cudaErrorNotReady) GPUCLK_CUDA_CHECK(status);
        if (nccl_.ncclCommGetAsyncError) {
          ncclResult_t async = ncclSuccess;
          NCCL_CHECK(nccl_, ncclCommGetAsyncError, ranks_[i].comm, &async);
          nccl_.check(async, "ncclCommGetAsyncError", "while waiting for the GPUs");
        }
      }
    }
  }

  // Elements each buffer holds.
  std::size_t buffer_elements() const { return buffer_elements_; }

 private:
  void destroy_communicators() {
    for (Rank& r : ranks_) {
      if (r.comm) (void)nccl_.ncclCommDestroy(r.comm);
      r.comm = nullptr;
    }
  }

  const Library& nccl_;
  std::vector<Rank> ranks_;
  std::size_t buffer_elements_ = 0;
};

// Where iteration `iteration` starts in the buffers, elements: nccl-tests moves each timed
// iteration along the buffer (its startColl's shift, "to avoid cache effects"), so small sizes
// are not timed on data already in L2.
std::size_t shift(const Counts& c, std::size_t buffer_elements, int iteration) {
  const std::size_t total = c.bytes / kElementBytes;
  if (total == 0 || buffer_elements < total) return 0;
  return total * (std::size_t(iteration) % (buffer_elements / total));
}

// Enqueues one operation on rank `r` (inside the caller's group), its buffers `offset` elements
// in.
void enqueue(Session& s, Operation op, const Counts& c, bool in_place, int r, std::size_t offset) {
  const Library& lib = s.nccl();
  Rank& rank = s.rank(r);
  const int n = s.size();
  float* base = rank.recv_data() + offset;
  const float* send =
      in_place ? base + c.send_in_place_offset * std::size_t(r) : rank.send_data() + offset;
  float* recv = in_place ? base + c.recv_in_place_offset * std::size_t(r) : base;
  const ncclStream_t stream = nccl_stream(rank.stream->get());
  switch (op) {
    case Operation::all_reduce:
      NCCL_CHECK(lib, ncclAllReduce, send, recv, c.param, ncclFloat32, ncclSum, rank.comm, stream);
      break;
    case Operation::all_gather:
      NCCL_CHECK(lib, ncclAllGather, send, recv, c.param, ncclFloat32, rank.comm, stream);
      break;
    case Operation::reduce_scatter:
      NCCL_CHECK(lib, ncclReduceScatter, send, recv, c.param, ncclFloat32, ncclSum, rank.comm,
                 stream);
      break;
    case Operation::broadcast:
      NCCL_CHECK(lib, ncclBroadcast, send, recv, c.param, ncclFloat32, 0, rank.comm, stream);
      break;
    case Operation::all_to_all:
      if (lib.ncclAlltoAll) {
        NCCL_CHECK(lib, ncclAlltoAll, send, recv, c.param, ncclFloat32, rank.comm, stream);
        break;
      }
      // nccl-tests' fallback before NCCL 2.28: a group of its own (nested in the ranks' group).
      NCCL_CHECK(lib, ncclGroupStart);
      for (int p = 0; p < n; ++p) {
        NCCL_CHECK(lib, ncclSend, send + std::size_t(p) * c.param, c.param, ncclFloat32, p,
                   rank.comm, stream);
        NCCL_CHECK(lib, ncclRecv, recv + std::size_t(p) * c.param, c.param, ncclFloat32, p,
                   rank.comm, stream);
      }
      NCCL_CHECK(lib, ncclGroupEnd);
      break;
    case Operation::send_recv:
      // A group of its own as nccl-tests' SendRecvRunColl: one rank sends to itself.
      NCCL_CHECK(lib, ncclGroupStart);
      NCCL_CHECK(lib, ncclSend, send, c.param, ncclFloat32, (r + 1) % n, rank.comm, stream);
      NCCL_CHECK(lib, ncclRecv, recv, c.param, ncclFloat32, (r + n - 1) % n, rank.comm, stream);
      NCCL_CHECK(lib, ncclGroupEnd);
      break;
    default:
      throw Error(ExitCode::other,
                  fmt::format("bench nccl has no {}", telemetry::nccl::info(op).key));
  }
}

// One operation on every rank, as one NCCL group (none for a single rank, as nccl-tests: the
// group's calls cost a microsecond or two of host time, which small sizes show); `iteration`
// places it in the buffers.
void launch(Session& s, Operation op, const Counts& c, bool in_place, int iteration = 0) {
  const std::size_t offset = shift(c, s.buffer_elements(), iteration);
  const bool group = s.size() > 1;
  if (group) NCCL_CHECK(s.nccl(), ncclGroupStart);
  for (int r = 0; r < s.size(); ++r) enqueue(s, op, c, in_place, r, offset);
  if (group) NCCL_CHECK(s.nccl(), ncclGroupEnd);
}

// Inputs for one placement: every rank's input where the operation reads it, the rest cleared.
void prepare(Session& s, Operation op, const Counts& c, bool in_place) {
  for (int r = 0; r < s.size(); ++r) {
    Rank& rank = s.rank(r);
    DeviceGuard on(rank.ordinal);
    const cudaStream_t stream = rank.stream->get();
    detail::launch_clear(rank.recv_data(), c.recv, stream);
    if (!in_place) {
      detail::launch_fill(rank.send_data(), c.send, r, stream);
    } else if (op == Operation::all_gather) {
      detail::launch_fill(rank.recv_data() + c.send_in_place_offset * std::size_t(r), c.send, r,
                          stream);
    } else {
      detail::launch_fill(rank.recv_data(), c.send, r, stream);
    }
  }
}

CheckSpec check_spec(Operation op, const Counts& c, int r, int n) {
  CheckSpec spec;
  spec.rank = r;
  spec.ranks = n;
  spec.part = c.param;
  spec.count = c.recv;
  switch (op) {
    case Operation::all_reduce:
      spec.kind = NcclCheck::all_reduce;
      break;
    case Operation::all_gather:
      spec.kind = NcclCheck::all_gather;
      break;
    case Operation::reduce_scatter:
      spec.kind = NcclCheck::reduce_scatter;
      break;
    case Operation::broadcast:
      spec.kind = NcclCheck::broadcast;
      break;
    case Operation::all_to_all:
      spec.kind = NcclCheck::all_to_all;
      break;
    default:
      spec.kind = NcclCheck::from_peer;
      spec.peer = (r + n - 1) % n;
      break;
  }
  return spec;
}

// Elements, over every rank, that differ from what `op` must have left (recv, or where an
// in-place result lands).
std::uint64_t count_wrong(Session& s, Operation op, const Counts& c, bool in_place) {
  std::uint64_t total = 0;
  for (int r = 0; r < s.size(); ++r) {
    Rank& rank = s.rank(r);
    DeviceGuard on(rank.ordinal);
    const cudaStream_t stream = rank.stream->get();
    auto* wrong = rank.wrong.as<unsigned long long>();
    GPUCLK_CUDA_CHECK(cudaMemsetAsync(wrong, 0, sizeof(unsigned long long), stream));
    const float* out = rank.recv_data();
    if (in_place) out += c.recv_in_place_offset * std::size_t(r);
    detail::launch_check(out, check_spec(op, c, r, s.size()), wrong, stream);
    unsigned long long host = 0;
    GPUCLK_CUDA_CHECK(cudaMemcpyAsync(&host, wrong, sizeof host, cudaMemcpyDeviceToHost, stream));
    rank.stream->synchronize();
    total += host;
  }
  return total;
}

// nccl-tests' BenchTime for one placement: (inputs,) one untimed operation, `iterations` timed
// back to back on the host clock, (then inputs again, one operation and the check).
Timing time_placement(Session& s, Operation op, const Counts& c, bool in_place,
                      const RunOptions& o) {
  if (o.check) prepare(s, op, c, in_place);
  launch(s, op, c, in_place);
  s.synchronize();
  const auto start = Clock::now();
  for (int i = 0; i < o.iterations; ++i) launch(s, op, c, in_place, i);
  s.synchronize();
  Timing t;
  t.seconds = std::chrono::duration<double>(Clock::now() - start).count() / o.iterations;
  t.bandwidth = bandwidth(op, c, t.seconds, s.size());
  if (o.check) {
    prepare(s, op, c, in_place);
    launch(s, op, c, in_place);
    s.synchronize();
    t.wrong = count_wrong(s, op, c, in_place);
  }
  return t;
}

OperationResult run_operation(Session& s, Operation op, const RunOptions& o) {
  OperationResult result;
  result.operation = op;
  result.start = Clock::now();
  // nccl-tests' warm-up: every size from the smallest, doubling, `warmup_iterations` times.
  const std::size_t smallest = o.sizes.front(), largest = o.sizes.back();
  for (std::size_t bytes = smallest; bytes <= largest; bytes *= 2) {
    const Counts c = counts(op, bytes, s.size());
    for (int i = 0; i < o.warmup_iterations; ++i) launch(s, op, c, false, i);
    s.synchronize();
    if (bytes > largest / 2) break;
  }
  for (std::size_t step = 0; step < o.sizes.size(); ++step) {
    SizeResult size;
    size.counts = counts(op, o.sizes[step], s.size());
    Progress p{op, size.counts.bytes, step, o.sizes.size(), false, -1, -1};
    if (o.on_progress) o.on_progress(p);
    size.out_of_place = time_placement(s, op, size.counts, false, o);
    if (has_in_place(op)) {
      p.in_place = true;
      if (o.on_progress) o.on_progress(p);
      size.in_place = time_placement(s, op, size.counts, true, o);
    }
    result.sizes.push_back(size);
  }
  result.end = Clock::now();
  return result;
}

// Rank a sends to rank b alone (a group of one send and one receive).
void launch_pair(Session& s, int a, int b, std::size_t count) {
  const Library& lib = s.nccl();
  NCCL_CHECK(lib, ncclGroupStart);
  NCCL_CHECK(lib, ncclSend, s.rank(a).send_data(), count, ncclFloat32, b, s.rank(a).comm,
             nccl_stream(s.rank(a).stream->get()));
  NCCL_CHECK(lib, ncclRecv, s.rank(b).recv_data(), count, ncclFloat32, a, s.rank(b).comm,
             nccl_stream(s.rank(b).stream->get()));
  NCCL_CHECK(lib, ncclGroupEnd);
}

PairResult run_pair(Session& s, int a, int b, const RunOptions& o) {
  PairResult p;
  p.from = a;
  p.to = b;
  const std::size_t count = o.pair_bytes / kElementBytes;
  p.bytes = count * kElementBytes;
  p.start = Clock::now();
  {
    DeviceGuard on(s.rank(a).ordinal);
    detail::launch_fill(s.rank(a).send_data(), count, a, s.rank(a).stream->get());
  }
  {
    DeviceGuard on(s.rank(b).ordinal);
    detail::launch_clear(s.rank(b).recv_data(), count, s.rank(b).stream->get());
  }
  launch_pair(s, a, b, count);
  s.synchronize();
  const auto start = Clock::now();
  for (int i = 0; i < o.iterations; ++i) launch_pair(s, a, b, count);
  s.synchronize();
  p.seconds = std::chrono::duration<double>(Clock::now() - start).count() / o.iterations;
  p.bandwidth = p.seconds > 0 ? double(p.bytes) / p.seconds : 0;
  if (o.check) {
    Rank& to = s.rank(b);
    DeviceGuard on(to.ordinal);
    const cudaStream_t stream = to.stream->get();
    auto* wrong = to.wrong.as<unsigned long long>();
    GPUCLK_CUDA_CHECK(cudaMemsetAsync(wrong, 0, sizeof(unsigned long long), stream));
    CheckSpec spec{NcclCheck::from_peer, b, s.size(), a, count, 0};
    detail::launch_check(to.recv_data(), spec, wrong, stream);
    unsigned long long host = 0;
    GPUCLK_CUDA_CHECK(cudaMemcpyAsync(&host, wrong, sizeof host, cudaMemcpyDeviceToHost, stream));
    to.stream->synchronize();
    p.wrong = host;
  }
  p.end = Clock::now();
  return p;
}

std::vector<std::vector<bool>> peer_access(std::span<const int> ordinals) {
  std::vector<std::vector<bool>> access(ordinals.size(), std::vector<bool>(ordinals.size(), true));
  for (std::size_t a = 0; a < ordinals.size(); ++a) {
    for (std::size_t b = 0; b < ordinals.size(); ++b) {
      if (a == b) continue;
      int can = 0;
      GPUCLK_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, ordinals[a], ordinals[b]));
      access[a][b] = can != 0;
    }
  }
  return access;
}

}  // namespace

std::vector<DeviceMemory> device_memory(std::span<const int> ordinals) {
  std::vector<DeviceMemory> out;
  for (int ordinal : ordinals) {
    DeviceGuard on(ordinal);
    std::size_t free = 0, total = 0;
    GPUCLK_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    out.push_back({free, total});
  }
  return out;
}

RunResult run(const Library& nccl, std::span<const int> ordinals, const RunOptions& options) {
  if (ordinals.empty() || options.sizes.empty() || options.iterations < 1) {
    throw bad_argument("bench nccl: no GPU, no size or no iteration to run");
  }
  RunResult result;
  result.ordinals.assign(ordinals.begin(), ordinals.end());
  result.peer_access = peer_access(ordinals);
  result.native_all_to_all = nccl.ncclAlltoAll != nullptr;
  const std::size_t pair_bytes = ordinals.size() > 1 ? options.pair_bytes : 0;
  Session session(nccl, ordinals, buffer_bytes(options.sizes, pair_bytes));
  for (Operation op : options.operations) {
    result.operations.push_back(run_operation(session, op, options));
  }
  if (pair_bytes >= kElementBytes) {
    for (int a = 0; a < session.size(); ++a) {
      for (int b = 0; b < session.size(); ++b) {
        if (a == b) continue;
        if (options.on_progress)
          options.on_progress({Operation::send_recv, pair_bytes, 0, 0, false, a, b});
        result.pairs.push_back(run_pair(session, a, b, options));
      }
    }
  }
  return result;
}

}  // namespace gpuclk::bench::nccl
