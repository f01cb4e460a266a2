// bench p2p between a GPU and host memory: pinned buffers placed on a chosen NUMA node (libnuma:
// numa_alloc_onnode, then cudaHostRegister pins the pages where the policy put them), copied by
// the GPU's copy engines. nvbandwidth gets the same placement by moving its thread to the GPU's
// CPUs before cudaHostAlloc (first touch); binding the pages states it outright and lets
// --numa place them on any node.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sched.h>

#include <algorithm>

#include "bench/detail/cuda_resources.h"
#include "bench/detail/p2p_timing.h"
#include "bench/p2p.h"
#include "bench/p2p_kernels.h"
#include "util/error.h"

#if GPUCLK_HAVE_NUMA
#include <numa.h>
#endif

namespace gpuclk::bench::p2p {

namespace {

using detail::DeviceGuard;

// Pinned host memory of `bytes`, mapped for every device; on `node` when given.
class PinnedHostBuffer {
 public:
  PinnedHostBuffer(std::size_t bytes, std::optional<int> node) : bytes_(bytes) {
#if GPUCLK_HAVE_NUMA
    if (node) {
      data_ = numa_alloc_onnode(bytes, *node);
      if (!data_) {
        throw Error(ExitCode::other,
                    fmt::format("cannot allocate {} MiB on NUMA node {}", bytes >> 20, *node),
                    "free memory on that node or give a smaller --mib");
      }
      numa_owned_ = true;
      const cudaError_t rc =
          cudaHostRegister(data_, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped);
      if (rc != cudaSuccess) {
        numa_free(data_, bytes_);
        GPUCLK_CUDA_CHECK(rc);
      }
      return;
    }
#else
    if (node) {
      throw Error(ExitCode::not_supported, "this gpuclk was built without libnuma: no --numa",
                  "install libnuma-dev and reconfigure");
    }
#endif
    GPUCLK_CUDA_CHECK(cudaHostAlloc(&data_, bytes, cudaHostAllocPortable | cudaHostAllocMapped));
  }
  ~PinnedHostBuffer() {
#if GPUCLK_HAVE_NUMA
    if (numa_owned_) {
      (void)cudaHostUnregister(data_);
      numa_free(data_, bytes_);
      return;
    }
#endif
    (void)cudaFreeHost(data_);
  }
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;

  void* get() const { return data_; }
  // The address kernels use (the same under unified addressing, but asked, not assumed).
  void* device_pointer() const {
    void* p = nullptr;
    GPUCLK_CUDA_CHECK(cudaHostGetDevicePointer(&p, data_, 0));
    return p;
  }

 private:
  std::size_t bytes_;
  void* data_ = nullptr;
  bool numa_owned_ = false;
};

// Runs the calling thread on `node`'s CPUs for the object's life, then restores its affinity.
class RunOnNode {
 public:
  explicit RunOnNode(std::optional<int> node) {
#if GPUCLK_HAVE_NUMA
    if (!node || sched_getaffinity(0, sizeof saved_, &saved_) != 0) return;
    active_ = numa_run_on_node(*node) == 0;
#else
    (void)node;
#endif
  }
  ~RunOnNode() {
    if (active_) (void)sched_setaffinity(0, sizeof saved_, &saved_);
  }
  RunOnNode(const RunOnNode&) = delete;
  RunOnNode& operator=(const RunOnNode&) = delete;

 private:
  cpu_set_t saved_{};
  bool active_ = false;
};

std::function<void(cudaStream_t, int)> copies(void* dst, const void* src, std::size_t bytes) {
  return [=](cudaStream_t stream, int count) {
    for (int i = 0; i < count; ++i) {
      GPUCLK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
    }
  };
}

void check_node(std::optional<int> node) {
  if (!node) return;
  const std::vector<int> nodes = numa_nodes();
  if (std::find(nodes.begin(), nodes.end(), *node) != nodes.end()) return;
  throw bad_argument(fmt::format("--numa {}: no such NUMA node here", *node),
                     nodes.empty() ? "this host (or build) has no NUMA: leave --numa out"
                                   : fmt::format("nodes: {}", fmt::join(nodes, ",")));
}

}  // namespace

std::vector<int> numa_nodes() {
  std::vector<int> nodes;
#if GPUCLK_HAVE_NUMA
  if (numa_available() < 0) return nodes;
  for (int n = 0; n <= numa_max_node(); ++n) {
    if (numa_bitmask_isbitset(numa_all_nodes_ptr, unsigned(n))) nodes.push_back(n);
  }
#endif
  return nodes;
}

HostResult measure_host(int device, std::optional<int> numa_node, bool with_local_copy,
                        const Options& options, const std::function<void()>& while_busy) {
  validate(options);
  check_node(numa_node);
  HostResult result;
  result.device = device;
  result.numa_node = numa_node;
  result.numa_bound = numa_node.has_value();
  RunOnNode placement(numa_node);
  {
    DeviceGuard guard(device);
    detail::preload_p2p_kernels();
  }
  const std::size_t bytes = options.bytes;
  PinnedHostBuffer host(bytes, numa_node);
  detail::DeviceBuffer on_device = [&] {
    DeviceGuard guard(device);
    return detail::DeviceBuffer(bytes);
  }();
  void* host_on_device = host.device_pointer();
  detail::fill_random(device, host_on_device, bytes, 5);
  detail::fill_random(device, on_device.get(), bytes, 6);
  std::function<void()> busy = while_busy;

  std::vector<detail::Lane> h2d;
  h2d.emplace_back(device, bytes, copies(on_device.get(), host.get(), bytes));
  Measured to_device =
      detail::measure_lanes(Figure::host_to_device, h2d, options, device, -1, &busy);
  if (options.verify) {
    to_device.verified =
        detail::count_mismatches(device, on_device.get(), host_on_device, bytes) == 0;
  }
  detail::fill_random(device, on_device.get(), bytes, 7);
  std::vector<detail::Lane> d2h;
  d2h.emplace_back(device, bytes, copies(host.get(), on_device.get(), bytes));
  Measured to_host = detail::measure_lanes(Figure::device_to_host, d2h, options, device, -1, &busy);
  if (options.verify) {
    to_host.verified =
        detail::count_mismatches(device, host_on_device, on_device.get(), bytes) == 0;
  }
  result.figures = {std::move(to_device), std::move(to_host)};

  if (with_local_copy) {
    detail::DeviceBuffer second = [&] {
      DeviceGuard guard(device);
      return detail::DeviceBuffer(bytes);
    }();
    std::vector<detail::Lane> local;
    local.emplace_back(device, bytes, copies(second.get(), on_device.get(), bytes));
    Measured copy = detail::measure_lanes(Figure::local_copy, local, options, device, -1, nullptr);
    if (options.verify) {
      copy.verified = detail::count_mismatches(device, second.get(), on_device.get(), bytes) == 0;
    }
    result.figures.push_back(std::move(copy));
  }
  return result;
}

}  // namespace gpuclk::bench::p2p
