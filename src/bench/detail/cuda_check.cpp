#include "bench/detail/cuda_check.h"

#include <cstring>

namespace gpuclk::bench::detail {

namespace {

std::string where(const char* file, int line) {
  // Keep the path from src/ on: enough to find the line, free of the build machine's layout.
  const char* src = std::strstr(file, "src/");
  return std::string(src ? src : file) + ":" + std::to_string(line);
}

struct Advice {
  ExitCode code = ExitCode::other;
  const char* hint = "";
};

Advice advise(cudaError_t status) {
  switch (status) {
    case cudaErrorNoDevice:
      return {ExitCode::gpu_not_found,
              "no CUDA device is visible: check the driver (nvidia-smi) and CUDA_VISIBLE_DEVICES"};
    case cudaErrorInvalidDevice:
      return {ExitCode::gpu_not_found, "use a device index below the count CUDA reports"};
    case cudaErrorInsufficientDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorSystemNotReady:
      return {ExitCode::driver_not_loaded,
              "install or load an NVIDIA driver that supports CUDA 13 (580 or newer)"};
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
      return {ExitCode::not_supported,
              "rebuild with CMAKE_CUDA_ARCHITECTURES including this GPU's compute capability"};
    case cudaErrorMemoryAllocation:
      return {ExitCode::other,
              "not enough free GPU memory: use smaller sizes or stop other jobs on this GPU"};
    case cudaErrorDevicesUnavailable:
      return {ExitCode::other,
              "the GPU is busy in exclusive compute mode or prohibited: ask the administrator"};
    default:
      return {};
  }
}

Advice advise(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return {ExitCode::not_supported,
              "this GPU or cuBLAS version lacks that GEMM; try another dtype"};
    case CUBLAS_STATUS_ALLOC_FAILED:
      return {ExitCode::other, "not enough free GPU memory for cuBLAS: use smaller sizes"};
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return {ExitCode::driver_not_loaded, "cuBLAS could not start: check the driver and CUDA"};
    default:
      return {};
  }
}

}  // namespace

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  const Advice advice = advise(status);
  // The runtime keeps a failed call's error as the thread's last error until it is read: left
  // there, the next GPUCLK_CUDA_CHECK_LAUNCH (cudaGetLastError) would report it for a launch that
  // worked. Seen on an H100: after a run on a device ordinal that does not exist (exit 6, as it
  // should), the next run's first fill kernel "failed" with cudaErrorInvalidDevice. Reported here,
  // it is cleared (a sticky error, which corrupts the context, stays: every later call reports it).
  (void)cudaGetLastError();
  throw CudaError(advice.code,
                  std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                      cudaGetErrorString(status) + ") at " + where(file, line),
                  advice.hint, CudaLibrary::runtime, int(status), call);
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  const Advice advice = advise(status);
  throw CudaError(advice.code,
                  std::string(call) + " failed: " + cublasLtGetStatusName(status) + " (" +
                      cublasLtGetStatusString(status) + ") at " + where(file, line),
                  advice.hint, CudaLibrary::cublas, int(status), call);
}

}  // namespace gpuclk::bench::detail
