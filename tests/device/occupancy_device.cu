// Ground truth for the occupancy calculator on a real GPU. Compiles kernels that use from ~10
// to ~255 registers and from 0 to 48 KiB of static shared memory, and asks the CUDA runtime
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor) how many blocks of each fit on an SM for
// block sizes 1..1024, dynamic shared memory up to the opt-in maximum and several carveout
// preferences. Prints one CSV row per case in the input format of `gpuclk occupancy --batch`
// plus the runtime's answer (runtime_blocks); occupancy_device.sh feeds the rows to gpuclk and
// compares. A second table (--kernels) lists what cudaFuncGetAttributes reports per kernel, to
// check gpuclk's reading of the same binary with cuobjdump.
//
// Build: nvcc -arch=sm_90 -O3 -o occupancy_device occupancy_device.cu
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                      \
  do {                                                                   \
    cudaError_t status_ = (call);                                        \
    if (status_ != cudaSuccess) {                                        \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorString(status_));                         \
      std::exit(1);                                                      \
    }                                                                    \
  } while (0)

// LIVE values stay live across the loop, so the kernel needs about LIVE registers (plus a few
// for addresses). STATIC_BYTES of static shared memory; 0 gives a 4-byte array (the attribute
// read back says what the compiler really allocated).
template <int LIVE, int STATIC_BYTES>
__global__ void pressure(float* out, const float* in) {
  __shared__ float tile[STATIC_BYTES >= 4 ? STATIC_BYTES / 4 : 1];
  extern __shared__ float dynamic_tile[];
  float live[LIVE > 0 ? LIVE : 1];
#pragma unroll
  for (int i = 0; i < LIVE; ++i) live[i] = in[threadIdx.x + i * 1024];
  tile[threadIdx.x % (STATIC_BYTES >= 4 ? STATIC_BYTES / 4 : 1)] = in[threadIdx.x];
  dynamic_tile[0] = in[1];
  __syncthreads();
  float sum =
      tile[(threadIdx.x + 1) % (STATIC_BYTES >= 4 ? STATIC_BYTES / 4 : 1)] + dynamic_tile[0];
  for (int round = 0; round < 4; ++round) {
#pragma unroll
    for (int i = 0; i < LIVE; ++i) {
      live[i] = live[i] * live[(i + round + 1) % (LIVE > 0 ? LIVE : 1)] + sum;
      sum += live[i];
    }
  }
#pragma unroll
  for (int i = 0; i < LIVE; ++i) sum += live[i] * float(i + 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

struct Kernel {
  const void* function;
  int live, static_bytes;
};

#define KERNEL(LIVE, STATIC) \
  { reinterpret_cast<const void*>(&pressure<LIVE, STATIC>), LIVE, STATIC }

// Register pressure from ~10 to ~255 without shared memory, then static shared memory up to
// the 48 KiB a __shared__ array may have at a low and a high register count.
const Kernel kKernels[] = {
    KERNEL(0, 0),      KERNEL(4, 0),       KERNEL(12, 0),      KERNEL(20, 0),     KERNEL(28, 0),
    KERNEL(36, 0),     KERNEL(48, 0),      KERNEL(60, 0),      KERNEL(72, 0),     KERNEL(88, 0),
    KERNEL(104, 0),    KERNEL(120, 0),     KERNEL(152, 0),     KERNEL(184, 0),    KERNEL(216, 0),
    KERNEL(240, 0),    KERNEL(20, 1024),   KERNEL(20, 12288),  KERNEL(20, 40960), KERNEL(20, 49152),
    KERNEL(120, 4096), KERNEL(120, 24576), KERNEL(120, 49152),
};

int main(int argc, char** argv) {
  const bool list_kernels = argc > 1 && std::strcmp(argv[1], "--kernels") == 0;
  int device = 0;
  CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, device));
  const int optin = int(prop.sharedMemPerBlockOptin);
  char arch[16];
  std::snprintf(arch, sizeof arch, "sm_%d%d", prop.major, prop.minor);

  if (list_kernels) {
    std::printf("live,static_request,regs,smem_static,local\n");
    for (const Kernel& k : kKernels) {
      cudaFuncAttributes attributes{};
      CHECK(cudaFuncGetAttributes(&attributes, k.function));
      std::printf("%d,%d,%d,%zu,%zu\n", k.live, k.static_bytes, attributes.numRegs,
                  attributes.sharedSizeBytes, attributes.localSizeBytes);
    }
    return 0;
  }

  std::fprintf(stderr,
               "%s: %s, %d SMs, %d threads/SM, %zu B shared/SM, opt-in %d B, reserved %zu B\n",
               arch, prop.name, prop.multiProcessorCount, prop.maxThreadsPerMultiProcessor,
               prop.sharedMemPerMultiprocessor, optin, prop.reservedSharedMemPerBlock);
  std::printf("kernel,arch,threads,regs,smem_static,smem_dynamic,carveout,runtime_blocks\n");
  std::vector<int> block_sizes = {1, 33, 100, 1000};
  for (int threads = 32; threads <= 1024; threads += 32) block_sizes.push_back(threads);
  const int carveouts[] = {-1, 0, 25, 50, 100};
  for (const Kernel& k : kKernels) {
    cudaFuncAttributes attributes{};
    CHECK(cudaFuncGetAttributes(&attributes, k.function));
    const int static_bytes = int(attributes.sharedSizeBytes);
    const int max_dynamic = optin - static_bytes;
    std::vector<int> dynamic_sizes = {0,
                                      1000,
                                      8192,
                                      33 * 1024,
                                      48 * 1024 - static_bytes,
                                      64 * 1024,
                                      100 * 1024,
                                      max_dynamic - 4096,
                                      max_dynamic};
    for (int dynamic : dynamic_sizes) {
      if (dynamic < 0 || dynamic > max_dynamic) continue;
      CHECK(cudaFuncSetAttribute(k.function, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic));
      for (int carveout : carveouts) {
        CHECK(cudaFuncSetAttribute(k.function, cudaFuncAttributePreferredSharedMemoryCarveout,
                                   carveout));
        for (int threads : block_sizes) {
          int blocks = 0;
          const cudaError_t status = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
              &blocks, k.function, threads, size_t(dynamic));
          if (status != cudaSuccess) {
            (void)cudaGetLastError();  // a refused size (too many registers): 0 blocks
            blocks = 0;
          }
          std::printf("pressure<%d;%d>,%s,%d,%d,%d,%d,%s,%d\n", k.live, k.static_bytes, arch,
                      threads, attributes.numRegs, static_bytes, dynamic,
                      carveout < 0 ? "" : std::to_string(carveout).c_str(), blocks);
        }
      }
    }
  }
  return 0;
}
