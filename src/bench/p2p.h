// Peer-to-peer and host<->device transfer measurements (`gpuclk bench p2p`), timed the way NVIDIA's
// nvbandwidth v0.8 times them so the figures can be set beside its own: a spin kernel holds each
// stream while warm-up and timed copies are queued behind it, so launch overhead is never timed;
// the timed copies run between two events; a figure is the median over samples.
//
// Built without CUDA (GPUCLK_HAVE_CUDA undefined), the measuring functions throw
// gpuclk::Error(not_supported) saying how to enable CUDA. CUDA failures are gpuclk::Error too.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "bench/stats.h"

namespace gpuclk::bench::p2p {

// Every figure `bench p2p` measures. Peer figures belong to an ordered GPU pair (a, b): "read" is
// GPU a pulling from b's memory into its own, "write" GPU a pushing its memory into b's.
enum class Figure {
  ce_read,           // cudaMemcpyAsync b -> a on a's stream (a copy engine)
  ce_write,          // cudaMemcpyAsync a -> b on a's stream
  ce_bidirectional,  // ce_read of a and of b at once: the sum of both directions
  sm_read,           // a kernel on a reads b's memory and writes a's
  sm_write,          // a kernel on a reads a's memory and writes b's
  sm_bidirectional,  // sm_read on a and on b at once: the sum
  latency,           // pointer chase by one thread of a over b's memory, ns per access
  host_to_device,    // pinned host memory -> device, copy engine
  device_to_host,    // device -> pinned host memory, copy engine
  local_copy,        // device -> the same device, copy engine (a reference, not a link)
};

struct FigureInfo {
  Figure figure;
  std::string_view key;               // "ce_read": JSON and CSV
  std::string_view label;             // "CE read": tables
  std::string_view nvbandwidth_test;  // the nvbandwidth v0.8 test (-t) measuring the same thing
  bool peer = true;                   // false: a per-GPU figure
  bool latency = false;               // seconds per access (lower is better), not bytes/s
  bool bidirectional = false;         // both directions summed: the peak is twice the link's
};
const FigureInfo& info(Figure figure);
const std::vector<FigureInfo>& all_figures();  // in Figure's order

// What to move and how often. Defaults are nvbandwidth's except samples (its default is 3).
struct Options {
  std::size_t bytes = std::size_t(512) << 20;  // per copy (nvbandwidth -b 512), ≥ 1 MiB
  int copies_per_sample = 16;                  // timed copies per sample (its --loopCount)
  int warmup_copies = 4;                       // queued before the start event (its WARMUP_COUNT)
  int samples = 5;                             // the figure is their median (its -i, default 3)
  std::size_t latency_bytes = std::size_t(2) << 20;  // the pointer chain's buffer (its 2 MiB)
  int latency_accesses = 100000;                     // dependent loads per latency sample
  bool verify = true;  // compare each copy's destination with its source after measuring
  // Called before each figure on each pair or GPU, and after each sample; keep it short.
  std::function<void(Figure, int device, int peer, int sample, int samples)> on_sample;
};

// Throws gpuclk::Error(bad_argument) naming the option out of range.
void validate(const Options& options);

// --numa's argument: "all", or node numbers separated by commas ("1", "0,2"). Throws
// gpuclk::Error(bad_argument) for anything else (negative, empty, not a number).
struct NumaRequest {
  bool all = false;
  std::vector<int> nodes;  // ascending, without repeats
};
NumaRequest parse_numa_request(std::string_view text);

// One figure: its samples (B/s, or s per access for latency) and their median.
struct Measured {
  Figure figure = Figure::ce_read;
  RateSummary summary;  // summary.median is the figure
  std::vector<double> samples;
  std::size_t bytes_per_copy = 0;  // what the timed copies moved (0 for latency)
  std::optional<bool> verified;    // nullopt: not checked
};

// The figures of one ordered pair: a is the GPU that issues the copies or runs the kernels.
struct PeerResult {
  int device = -1, peer = -1;  // CUDA ordinals (a, b)
  bool peer_access = false;    // cudaDeviceCanAccessPeer(a, b) and (b, a)
  // Copy-engine figures always; SM figures and latency only with peer access (a kernel cannot
  // reach the other's memory without it; copies are then staged through host memory).
  std::vector<Measured> figures;
};

// Host<->device figures of one GPU with host memory on one NUMA node.
struct HostResult {
  int device = -1;
  std::optional<int> numa_node;   // where the pinned buffer lives; nullopt: wherever the OS put it
  bool numa_bound = false;        // the buffer was allocated on numa_node (libnuma)
  std::vector<Measured> figures;  // host_to_device, device_to_host, then local_copy if asked
};

// Whether a kernel on `device` can read `peer`'s memory (cudaDeviceCanAccessPeer).
bool can_access_peer(int device, int peer);

// Measures every peer figure for (device, peer). `while_busy` (may be empty) is called once,
// from this thread, while the first timed copies run (to read the links' state under load).
PeerResult measure_peer(int device, int peer, const Options& options,
                        const std::function<void()>& while_busy = {});

// Measures host_to_device and device_to_host with the pinned buffer on `numa_node` (nullopt: the
// OS's choice, without libnuma or on a single-node host), and local_copy when `with_local_copy`.
// The measuring thread runs on that node's CPUs for the duration. Throws Error(bad_argument) for
// a node that does not exist.
HostResult measure_host(int device, std::optional<int> numa_node, bool with_local_copy,
                        const Options& options, const std::function<void()>& while_busy = {});

// NUMA nodes of this host (libnuma), ascending; empty when the build or the kernel has no NUMA.
std::vector<int> numa_nodes();

}  // namespace gpuclk::bench::p2p
