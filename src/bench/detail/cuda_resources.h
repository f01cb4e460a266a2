// Move-only owners of CUDA runtime and cuBLASLt objects. Constructors throw CudaError; destructors
// never throw (a failure to free at teardown has nowhere useful to go). Internal to src/bench.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <type_traits>

#include "bench/detail/cuda_check.h"

namespace gpuclk::bench::detail {

// unique_ptr over a CUDA handle type (which is a pointer to an opaque struct) with its destroy
// call.
template <class Handle, auto Destroy>
struct HandleDeleter {
  void operator()(Handle handle) const noexcept { (void)Destroy(handle); }
};
template <class Handle, auto Destroy>
using UniqueHandle = std::unique_ptr<std::remove_pointer_t<Handle>, HandleDeleter<Handle, Destroy>>;

// A non-blocking stream of the current device.
class Stream {
 public:
  Stream() {
    cudaStream_t s = nullptr;
    GPUCLK_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    stream_.reset(s);
  }
  cudaStream_t get() const { return stream_.get(); }
  void synchronize() const { GPUCLK_CUDA_CHECK(cudaStreamSynchronize(get())); }

 private:
  UniqueHandle<cudaStream_t, cudaStreamDestroy> stream_;
};

// A timing event of the current device.
class Event {
 public:
  Event() {
    cudaEvent_t e = nullptr;
    GPUCLK_CUDA_CHECK(cudaEventCreate(&e));
    event_.reset(e);
  }
  cudaEvent_t get() const { return event_.get(); }
  void record(cudaStream_t stream) const { GPUCLK_CUDA_CHECK(cudaEventRecord(get(), stream)); }
  void synchronize() const { GPUCLK_CUDA_CHECK(cudaEventSynchronize(get())); }
  // Seconds from `start` to this event; both recorded and complete.
  double seconds_since(const Event& start) const {
    float ms = 0;
    GPUCLK_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), get()));
    return double(ms) * 1e-3;
  }

 private:
  UniqueHandle<cudaEvent_t, cudaEventDestroy> event_;
};

// Device memory of the current device, 256-byte aligned (cudaMalloc's guarantee).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    void* p = nullptr;
    GPUCLK_CUDA_CHECK(cudaMalloc(&p, bytes));
    memory_.reset(p);
  }
  void* get() const { return memory_.get(); }
  template <class T>
  T* as() const {
    return static_cast<T*>(memory_.get());
  }
  std::size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(void* p) const noexcept { (void)cudaFree(p); }
  };
  std::unique_ptr<void, Free> memory_;
  std::size_t bytes_ = 0;
};

// Makes `device` current on this thread for the guard's lifetime.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    GPUCLK_CUDA_CHECK(cudaGetDevice(&previous_));
    GPUCLK_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceGuard() { (void)cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

using LtHandle = UniqueHandle<cublasLtHandle_t, cublasLtDestroy>;
using LtMatmulDesc = UniqueHandle<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using LtMatrixLayout = UniqueHandle<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using LtPreference = UniqueHandle<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

inline LtHandle make_lt_handle() {
  cublasLtHandle_t h = nullptr;
  GPUCLK_CUDA_CHECK(cublasLtCreate(&h));
  return LtHandle(h);
}
inline LtMatmulDesc make_matmul_desc(cublasComputeType_t compute, cudaDataType_t scale) {
  cublasLtMatmulDesc_t d = nullptr;
  GPUCLK_CUDA_CHECK(cublasLtMatmulDescCreate(&d, compute, scale));
  return LtMatmulDesc(d);
}
// Column-major rows×cols matrix with leading dimension ld.
inline LtMatrixLayout make_matrix_layout(cudaDataType_t type, std::uint64_t rows,
                                         std::uint64_t cols, std::int64_t ld) {
  cublasLtMatrixLayout_t l = nullptr;
  GPUCLK_CUDA_CHECK(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld));
  return LtMatrixLayout(l);
}
inline LtPreference make_preference() {
  cublasLtMatmulPreference_t p = nullptr;
  GPUCLK_CUDA_CHECK(cublasLtMatmulPreferenceCreate(&p));
  return LtPreference(p);
}

}  // namespace gpuclk::bench::detail
