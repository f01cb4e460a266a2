// NVIDIA's occupancy calculator from the CUDA toolkit, as a test oracle only: included from the
// toolkit at build time, never copied into the repository or shipped (its licence forbids it).
// GPUCLK_HAVE_CUDA_OCCUPANCY_H is 1 when the toolkit is at /usr/local/cuda.
#pragma once

#if __has_include("/usr/local/cuda/include/cuda_occupancy.h")
#define GPUCLK_HAVE_CUDA_OCCUPANCY_H 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wpedantic"
#include "/usr/local/cuda/include/cuda_occupancy.h"
#pragma GCC diagnostic pop
#else
#define GPUCLK_HAVE_CUDA_OCCUPANCY_H 0
#endif
