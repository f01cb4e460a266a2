// cuBLASLt, loaded on first use. gpuclk links no CUDA library dynamically: the loader would map
// libcublasLt (500+ MB) at every start of every command — measured 110 ms and 215 MB RSS for
// `gpuclk --version` on the H100, four times nvidia-smi's whole query. These definitions stand
// in for the library's entry points the workloads call; the first call dlopens the library and
// each trampoline resolves its symbol once.
#include <cublasLt.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "util/error.h"

namespace gpuclk::bench::detail {
namespace {

void* library() {
  static void* handle = nullptr;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string versioned = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
    for (const char* name : {versioned.c_str(), "libcublasLt.so"}) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle) return;
      const char* why = dlerror();
      if (failure.empty() && why) failure = why;
    }
  });
  if (!handle) {
    throw Error(ExitCode::not_supported, "cannot load cuBLASLt (" + failure + ")",
                "install the CUDA toolkit's cuBLAS (libcublasLt.so." +
                    std::to_string(CUBLAS_VER_MAJOR) + ") or add its directory to LD_LIBRARY_PATH");
  }
  return handle;
}

template <class Fn>
Fn resolve(const char* name) {
  void* symbol = dlsym(library(), name);
  if (!symbol) {
    throw Error(ExitCode::not_supported, std::string("cuBLASLt lacks ") + name,
                "the installed cuBLAS is older than the one gpuclk was built with");
  }
  return reinterpret_cast<Fn>(symbol);
}

}  // namespace
}  // namespace gpuclk::bench::detail

#define GPUCLK_LAZY_CUBLASLT(ret, name, params, args)                                \
  extern "C" ret CUBLASWINAPI name params {                                          \
    static const auto fn = gpuclk::bench::detail::resolve<decltype(&::name)>(#name); \
    return fn args;                                                                  \
  }

GPUCLK_LAZY_CUBLASLT(cublasStatus_t, cublasLtCreate, (cublasLtHandle_t * handle), (handle))
GPUCLK_LAZY_CUBLASLT(cublasStatus_t, cublasLtDestroy, (cublasLtHandle_t handle), (handle))
GPUCLK_LAZY_CUBLASLT(const char*, cublasLtGetStatusName, (cublasStatus_t status), (status))
GPUCLK_LAZY_CUBLASLT(const char*, cublasLtGetStatusString, (cublasStatus_t status), (status))
GPUCLK_LAZY_CUBLASLT(size_t, cublasLtGetVersion, (void), ())
GPUCLK_LAZY_CUBLASLT(cublasStatus_t, cublasLtMatmul,
                     (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                      const void* a, cublasLtMatrixLayout_t a_desc, const void* b,
                      cublasLtMatrixLayout_t b_desc, const void* beta, const void* c,
                      cublasLtMatrixLayout_t c_desc, void* d, cublasLtMatrixLayout_t d_desc,
                      const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_size,
                      cudaStream_t stream),
                     (handle, desc, alpha, a, a_desc, b, b_desc, beta, c, c_desc, d, d_desc, algo,
                      workspace, workspace_size, stream))
GPUCLK_LAZY_CUBLASLT(cublasStatus_t, cublasLtMatmulAlgoConfigGetAttribute,
                     (const cublasLtMatmulAlgo_t* algo, cublasLtMatmulAlgoConfigAttributes_t attr,
                      void* buf, size_t size, size_t* written),
                     (algo, attr, buf, size, written))
GPUCLK_LAZY_CUBLASLT(cublasStatus_t, cublasLtMatmulAlgoGetHeuristic,
                     (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
                      cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                      cublasLtMatmulPreference_t preference, int requested,
                      cublasLtMatmulHeuristicResult_t results[], int* returned),
                     (handle, desc, a, b, c, d, preference, requested, results, returned))
GPUCLK_LAZY_CUBLASLT(cublasStatus_t, cublasLtMatmulDescCreate,
                     (cublasLtMatmulDesc_t * desc, cublasComputeType_t compute,
                      cudaDataType_t scale),
                     (desc, compute, scale))
GPUCLK_LAZY_CUBLASLT(cublasStatus_t, cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t desc), (desc))
GPUCLK_LAZY_CUBLASLT(cublasStatus_t, cublasLtMatmulDescSetAttribute,
                     (cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                      const void* buf, size_t size),
                     (desc, attr, buf, size))
GPUCLK_LAZY_CUBLASLT(cublasStatus_t, cublasLtMatmulPreferenceCreate,
                     (cublasLtMatmulPreference_t * pref), (pref))
GPUCLK_LAZY_CUBLASLT(cublasStatus_t, cublasLtMatmulPreferenceDestroy,
                     (cublasLtMatmulPreference_t pref), (pref))
GPUCLK_LAZY_CUBLASLT(cublasStatus_t, cublasLtMatmulPreferenceSetAttribute,
                     (cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
                      const void* buf, size_t size),
                     (pref, attr, buf, size))
GPUCLK_LAZY_CUBLASLT(cublasStatus_t, cublasLtMatrixLayoutCreate,
                     (cublasLtMatrixLayout_t * layout, cudaDataType type, uint64_t rows,
                      uint64_t cols, int64_t ld),
                     (layout, type, rows, cols, ld))
GPUCLK_LAZY_CUBLASLT(cublasStatus_t, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t layout),
                     (layout))
