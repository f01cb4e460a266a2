// The one checked-call path for the CUDA runtime and cuBLAS(Lt): a failed call throws CudaError,
// which keeps the status code, the call's text and where it was made. Internal to src/bench.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string>

#include "util/error.h"

namespace gpuclk::bench {

enum class CudaLibrary { runtime, cublas };

class CudaError : public Error {
 public:
  CudaError(ExitCode code, const std::string& message, const std::string& hint, CudaLibrary library,
            int status, std::string call)
      : Error(code, message, hint), library_(library), status_(status), call_(std::move(call)) {}

  CudaLibrary library() const noexcept { return library_; }
  int status() const noexcept { return status_; }             // cudaError_t or cublasStatus_t
  const std::string& call() const noexcept { return call_; }  // source text of the call

 private:
  CudaLibrary library_;
  int status_;
  std::string call_;
};

namespace detail {
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                   int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, call, file, line);
}
inline void check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) throw_cublas_error(status, call, file, line);
}
}  // namespace detail

}  // namespace gpuclk::bench

// Checks a cudaError_t or cublasStatus_t expression; throws CudaError on failure.
#define GPUCLK_CUDA_CHECK(call) ::gpuclk::bench::detail::check((call), #call, __FILE__, __LINE__)

// Checks the launch just made (launch configuration errors are reported only here).
#define GPUCLK_CUDA_CHECK_LAUNCH() GPUCLK_CUDA_CHECK(cudaGetLastError())
