// The arithmetic of `bench nccl`, as nccl-tests 2.19 does it so the figures line up: message
// sizes (-b/-e/-f), each operation's element counts for a size (its getCollByteCount), and
// algorithm and bus bandwidth (its getBw and doc/PERFORMANCE.md). Pure; float32 elements.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/nccl.h"

namespace gpuclk::bench::nccl {

using telemetry::nccl::Operation;

inline constexpr std::size_t kElementBytes = 4;  // float32, nccl-tests' default type

// The six operations bench nccl measures, in its order: all-reduce, all-gather, reduce-scatter,
// broadcast, all-to-all, send/recv.
const std::vector<Operation>& benchmark_operations();

// --ops: keys separated by commas ("all_reduce,send_recv") or "all". Throws gpuclk::Error
// (exit 2) naming an unknown key and listing the valid ones.
std::vector<Operation> parse_operations(std::string_view text);

// A size as nccl-tests reads one: a number with an optional K, M or G (binary: 1K = 1024).
// Throws gpuclk::Error (exit 2, naming `option`) for anything else, zero, or above 1 TiB.
std::size_t parse_size(std::string_view text, std::string_view option);

struct SizeRange {
  std::size_t min = 8;
  std::size_t max = std::size_t(8) << 30;  // 8 GiB, as the nccl-tests README's examples
  int factor = 2;
};

// --sizes: "MIN:MAX" or one size ("1G": that size only). Throws exit 2 for a bad size or
// MIN > MAX.
SizeRange parse_sizes(std::string_view text);

// min, min × factor, … up to max (nccl-tests' -b/-e/-f). Throws exit 2 unless 2 ≤ factor ≤ 1024.
std::vector<std::size_t> size_steps(const SizeRange& range);

// One operation's buffers at one size (elements), nccl-tests' getCollByteCount: `param` is the
// count passed to NCCL, `send`/`recv` the buffers' lengths, the offsets where in-place data sits
// (× rank). All-gather, reduce-scatter and all-to-all round each rank's part down to 16 bytes.
struct Counts {
  std::size_t param = 0, send = 0, recv = 0;
  std::size_t send_in_place_offset = 0, recv_in_place_offset = 0;
  std::size_t bytes = 0;  // what nccl-tests prints as "size": max(send, recv) × element bytes
};
Counts counts(Operation operation, std::size_t bytes, int ranks);

// B/s for one operation of `counts` taking `seconds` on `ranks` ranks (nccl-tests' getBw):
// algorithm = S / t with S = param × element bytes, × ranks for all-gather, reduce-scatter and
// all-to-all; bus = algorithm × telemetry::nccl::bus_factor.
struct Bandwidth {
  double algorithm = 0, bus = 0;
};
Bandwidth bandwidth(Operation operation, const Counts& counts, double seconds, int ranks);

// Whether in-place is measured: nccl-tests defines it for all but all-to-all (NCCL refuses
// in-place all-to-all) and send/recv (it times in-place send/recv but cannot check it).
bool has_in_place(Operation operation);

// Bytes of device memory per GPU the run needs: a send and a receive buffer of the largest
// size (nccl-tests' two buffers, without its third for expected values: gpuclk checks on the
// GPU against the formula).
std::size_t buffer_bytes(const std::vector<std::size_t>& sizes, std::size_t pair_bytes);

// A GPU's memory, bytes (cudaMemGetInfo).
struct DeviceMemory {
  std::size_t free = 0, total = 0;
};

// The largest size whose two buffers fit on every GPU, as nccl-tests sizes its -e: of the free
// memory, 1 GiB per 16 GiB installed (at most 4 GiB) and 1 GiB more stay for NCCL and the
// driver; half the rest for each buffer, rounded down to a power of two (0: none fits).
std::size_t largest_fitting_size(const std::vector<DeviceMemory>& gpus);

// "8 B", "64 KiB", "8 GiB": a size as tables show it.
std::string size_text(std::size_t bytes);

}  // namespace gpuclk::bench::nccl
