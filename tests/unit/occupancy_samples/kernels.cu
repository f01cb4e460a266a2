// Kernels behind the sample texts in this folder (see README.md): a plain kernel, one with
// static + dynamic shared memory and __launch_bounds__, one with a large local array (stack),
// and a non-inlined device function, whose ptxas lines must not count as a kernel.
__global__ void add(float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += b[i];
}

__global__ void __launch_bounds__(256, 2) tiled(float* out, const float* in, int n) {
  __shared__ float tile[1024];
  extern __shared__ float dynamic_tile[];
  int i = threadIdx.x;
  tile[i] = in[i];
  dynamic_tile[i] = in[i + n];
  __syncthreads();
  float acc[40];
  for (int k = 0; k < 40; k++) acc[k] = tile[(i + k) % 1024] * dynamic_tile[(i * k) % 256];
  float s = 0;
  for (int k = 0; k < 40; k++) s += acc[k] * acc[(k * 7) % 40];
  out[i] = s;
}

__device__ __noinline__ float scaled(const float* p, int k) { return p[k] * 1.5f; }

template <int N>
__global__ void spill(float* o) {
  float r[N];
  for (int k = 0; k < N; k++) r[k] = scaled(o, k * threadIdx.x);
  float s = 0;
  for (int k = 0; k < N; k++) s += r[(k * 13) % N] * r[k];
  o[threadIdx.x] = s;
}
template __global__ void spill<300>(float*);
