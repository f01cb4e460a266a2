// Device kernels of bench p2p (p2p_kernels.cu). All launches are async on `stream`, on the
// current device. Internal to src/bench.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpuclk::bench::detail {

// Loads every p2p kernel on the current device now. With lazy module loading (CUDA's default), a
// kernel's first launch loads its module, which waits for the device: behind a spinning kernel
// that would deadlock until the spin times out. Call on every device before its first spin.
void preload_p2p_kernels();

// One thread that spins until *flag != 0 (host memory mapped for the device) or `timeout_ns` of
// the GPU's global timer pass, holding back everything queued behind it on `stream`.
void launch_spin(const volatile int* flag, unsigned long long timeout_ns, cudaStream_t stream);

// dst = src, `bytes` a multiple of 16, `loops` times over, by a kernel on the current device
// (either pointer may be a peer's memory or mapped host memory). One resident block of
// kSmCopyThreads per SM (`sms` blocks), each thread keeping several 16-byte loads in flight.
void launch_sm_copy(void* dst, const void* src, std::size_t bytes, int loops, int sms,
                    cudaStream_t stream);

// Writes a cyclic pointer chain into `bytes` of device memory at `base` (its device current):
// the 8-byte word at offset i points at offset (i + stride_bytes) mod bytes. `stride_bytes` a
// multiple of 8 that divides `bytes`.
void launch_build_chain(void* base, std::size_t bytes, std::size_t stride_bytes,
                        cudaStream_t stream);

// One thread follows the chain from `head` for `accesses` dependent loads and stores where it
// ended in *sink (device memory of the current device), so the loads cannot be dropped.
void launch_chase(const void* head, long long accesses, void** sink, cudaStream_t stream);

}  // namespace gpuclk::bench::detail
