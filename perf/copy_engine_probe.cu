// Does cudaMemcpyAsync device-to-device (what torch's dst.copy_(src) does, the peer of gpuclk
// bench's copy kernel) run on the SMs or on a copy engine? A kernel that holds every SM spins for
// a fixed time on one stream while the copy is issued on another: a copy that needs SMs waits for
// the spin to end, a copy engine's copy finishes at its usual speed meanwhile. Read-only: it
// changes no setting of the GPU.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 perf/copy_engine_probe.cu -o copy_engine_probe
//   ./copy_engine_probe [MiB] [spin ms]
#include <cuda_runtime.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                    \
  do {                                                                                 \
    cudaError_t e_ = (call);                                                           \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

// Holds its SM for `cycles` clock cycles.
__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

float copy_ms(void* dst, const void* src, size_t bytes, cudaStream_t s) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  CHECK(cudaEventRecord(a, s));
  CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
  CHECK(cudaEventRecord(b, s));
  CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return ms;
}

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1024;
  const double spin_ms = argc > 2 ? std::atof(argv[2]) : 300;
  const size_t bytes = mib << 20;
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spin, 1024, 0));
  void *src = nullptr, *dst = nullptr;
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaMalloc(&dst, bytes));
  CHECK(cudaMemset(src, 1, bytes));
  cudaStream_t busy, copy;
  CHECK(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));

  for (int i = 0; i < 3; ++i) copy_ms(dst, src, bytes, copy);  // warm-up
  float alone = 1e9f;
  for (int i = 0; i < 5; ++i) {
    const float t = copy_ms(dst, src, bytes, copy);
    if (t < alone) alone = t;
  }
  std::printf("%s, %d SMs; %zu MiB device-to-device copy alone: %.3f ms (%.2f TB/s read+write)\n",
              p.name, p.multiProcessorCount, mib, alone, 2.0 * bytes / (alone * 1e-3) / 1e12);

  // Every SM held: blocks of 1024 threads, as many per SM as fit, for spin_ms at the base clock
  // (longer if the clock runs higher: what matters is that it outlasts the copy many times).
  const long long cycles = static_cast<long long>(spin_ms * 1e-3 * clock_khz * 1e3);
  cudaEvent_t spin_start, spin_end;
  CHECK(cudaEventCreate(&spin_start));
  CHECK(cudaEventCreate(&spin_end));
  CHECK(cudaEventRecord(spin_start, busy));
  spin<<<p.multiProcessorCount * per_sm, 1024, 0, busy>>>(cycles);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(spin_end, busy));
  // Let the spin occupy the SMs before the copy is issued.
  const float during = [&] {
    // Host-side wait of ~20 ms: the spin kernel is resident by then.
    const float settle = 20;
    cudaEvent_t h;
    CHECK(cudaEventCreate(&h));
    CHECK(cudaEventRecord(h, copy));
    CHECK(cudaEventSynchronize(h));
    CHECK(cudaEventDestroy(h));
    struct timespec ts {
      0, static_cast<long>(settle * 1e6)
    };
    nanosleep(&ts, nullptr);
    return copy_ms(dst, src, bytes, copy);
  }();
  CHECK(cudaEventSynchronize(spin_end));
  float spin_total = 0;
  CHECK(cudaEventElapsedTime(&spin_total, spin_start, spin_end));
  std::printf(
      "the same copy while a kernel holds every SM (%d blocks of 1024 for %.0f ms): %.3f ms\n",
      p.multiProcessorCount * per_sm, spin_total, during);
  if (during < 0.2f * spin_total) {
    std::printf(
        "verdict: the copy did not wait for the SMs: a copy engine moved it (%.2fx its time "
        "alone)\n",
        during / alone);
  } else {
    std::printf("verdict: the copy waited for the SMs (%.0f ms): it runs as a kernel\n", during);
  }
  CHECK(cudaFree(src));
  CHECK(cudaFree(dst));
  return 0;
}
