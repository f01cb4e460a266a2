// The calculator against NVIDIA's reference, cuda_occupancy.h from the CUDA toolkit, on random
// kernels for every architecture in the table. Skipped, with the reason, where the toolkit is
// not installed at /usr/local/cuda (the CI image has it).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <iostream>
#include <random>

#include "occupancy/arch_limits.h"
#include "occupancy/calculator.h"
#include "occupancy/sweep.h"
#include "occupancy_cuda_reference.h"

namespace gpuclk::occupancy {
namespace {

#if GPUCLK_HAVE_CUDA_OCCUPANCY_H

constexpr int kRandomKernels = 200'000;  // ≥ 100 000 of them valid launches (see the test)
constexpr int kRandomSweeps = 20'000;
constexpr int kSmCount = 132;  // any count: only min grid size depends on it

cudaOccDeviceProp reference_device(const ArchLimits& arch) {
  cudaOccDeviceProp device;
  device.computeMajor = arch.major;
  device.computeMinor = arch.minor;
  device.maxThreadsPerBlock = arch.max_threads_per_block;
  device.maxThreadsPerMultiprocessor = arch.max_resident_threads();
  device.regsPerBlock = arch.max_registers_per_block;
  device.regsPerMultiprocessor = arch.registers_per_sm;
  device.warpSize = arch.warp_size;
  device.sharedMemPerBlock = std::size_t(arch.shared_memory_per_block);
  device.sharedMemPerMultiprocessor = std::size_t(arch.shared_memory_per_sm);
  device.numSms = kSmCount;
  device.sharedMemPerBlockOptin = std::size_t(arch.shared_memory_per_block_optin);
  device.reservedSharedMemPerBlock = std::size_t(arch.reserved_shared_memory_per_block);
  return device;
}

// What cudaFuncGetAttributes gives for such a kernel, after the program opted into the dynamic
// shared memory it launches with (the calculator's assumption).
cudaOccFuncAttributes reference_function(const KernelConfig& kernel) {
  cudaOccFuncAttributes function;
  function.maxThreadsPerBlock = kernel.launch_bounds_max_threads.value_or(1024);
  function.numRegs = kernel.registers_per_thread;
  function.sharedSizeBytes = std::size_t(kernel.static_shared_bytes);
  function.partitionedGCConfig = PARTITIONED_GC_OFF;
  function.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  function.maxDynamicSharedSizeBytes = std::size_t(kernel.dynamic_shared_bytes);
  function.numBlockBarriers = 1;
  return function;
}

cudaOccDeviceState reference_state(const KernelConfig& kernel) {
  cudaOccDeviceState state;
  state.carveoutConfig = kernel.carveout_percent.value_or(SHAREDMEM_CARVEOUT_DEFAULT);
  return state;
}

unsigned limiter_bits(const Occupancy& ours) {
  unsigned bits = 0;
  if (ours.limited_by(Limiter::warps)) bits |= OCC_LIMIT_WARPS;
  if (ours.limited_by(Limiter::registers)) bits |= OCC_LIMIT_REGISTERS;
  if (ours.limited_by(Limiter::shared_memory)) bits |= OCC_LIMIT_SHARED_MEMORY;
  if (ours.limited_by(Limiter::blocks)) bits |= OCC_LIMIT_BLOCKS;
  return bits;
}

// Skewed towards the edges: multiples of a warp and odd sizes, no registers and the maximum,
// no shared memory and more than a block may have, every carveout.
KernelConfig random_kernel(std::mt19937_64& rng, const ArchLimits& arch) {
  const auto uniform = [&](std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(rng);
  };
  KernelConfig kernel;
  const auto threads_kind = uniform(0, 9);
  kernel.threads_per_block = int(threads_kind < 6   ? 32 * uniform(1, 32)
                                 : threads_kind < 9 ? uniform(1, 1024)
                                                    : uniform(1025, 2048));
  // Mostly register counts the block can launch with, some anywhere up to 255.
  const int warps = (std::min(kernel.threads_per_block, 1024) + 31) / 32;
  const int fitting = std::min(255, arch.max_registers_per_block / (warps * 32));
  const auto registers_kind = uniform(0, 9);
  kernel.registers_per_thread = int(registers_kind == 0  ? uniform(0, 1) * 255
                                    : registers_kind < 4 ? uniform(0, 255)
                                                         : uniform(0, fitting));
  kernel.static_shared_bytes = uniform(0, 2) == 0 ? 0 : uniform(0, 48 * 1024);
  const auto dynamic_kind = uniform(0, 4);
  kernel.dynamic_shared_bytes = dynamic_kind < 2 ? 0
                                : dynamic_kind < 4
                                    ? uniform(0, 48 * 1024)
                                    : uniform(0, arch.shared_memory_per_block_optin + 4096);
  if (uniform(0, 2) == 0) kernel.carveout_percent = int(uniform(0, 100));
  if (uniform(0, 4) == 0) kernel.launch_bounds_max_threads = int(uniform(1, 1024));
  return kernel;
}

std::string describe(const ArchLimits& arch, const KernelConfig& kernel) {
  return std::string(arch.name) + " threads=" + std::to_string(kernel.threads_per_block) +
         " regs=" + std::to_string(kernel.registers_per_thread) +
         " static=" + std::to_string(kernel.static_shared_bytes) +
         " dynamic=" + std::to_string(kernel.dynamic_shared_bytes) +
         " carveout=" + std::to_string(kernel.carveout_percent.value_or(-1)) +
         " bounds=" + std::to_string(kernel.launch_bounds_max_threads.value_or(0));
}

TEST(occupancy_oracle_test, table_constants_agree_with_cuda_occupancy_h) {
  for (const ArchLimits& arch : all_architectures()) {
    SCOPED_TRACE(std::string(arch.name));
    const cudaOccDeviceProp device = reference_device(arch);
    int value = 0;
    ASSERT_EQ(cudaOccMaxBlocksPerMultiprocessor(&value, &device), CUDA_OCC_SUCCESS);
    EXPECT_EQ(value, arch.max_blocks_per_sm);
    ASSERT_EQ(cudaOccSMemAllocationGranularity(&value, &device), CUDA_OCC_SUCCESS);
    EXPECT_EQ(value, arch.shared_memory_allocation_unit);
    ASSERT_EQ(cudaOccRegAllocationGranularity(&value, &device), CUDA_OCC_SUCCESS);
    EXPECT_EQ(value, arch.register_allocation_unit);
    ASSERT_EQ(cudaOccSubPartitionsPerMultiprocessor(&value, &device), CUDA_OCC_SUCCESS);
    EXPECT_EQ(value, arch.register_sub_partitions);
    if (!arch.has_carveout()) continue;
    // Every size the hardware offers is a fixed point of the reference's rounding, and every
    // size in between rounds up to the next one.
    for (std::size_t kib = 0; kib * 1024 <= std::size_t(arch.shared_memory_per_sm); ++kib) {
      std::size_t size = kib * 1024;
      ASSERT_EQ(cudaOccAlignUpShmemSizeVoltaPlus(&size, &device), CUDA_OCC_SUCCESS);
      int expected = -1;
      for (int carveout : arch.carveout_kib) {
        if (std::size_t(carveout) >= kib) {
          expected = carveout;
          break;
        }
      }
      EXPECT_EQ(size, std::size_t(expected) * 1024) << kib << " KiB";
    }
  }
}

TEST(occupancy_oracle_test, active_blocks_limits_and_limiters_equal_cuda_occupancy_h) {
  std::mt19937_64 rng(20250611);
  const auto archs = all_architectures();
  const auto start = std::chrono::steady_clock::now();
  int compared = 0, mismatches = 0, valid = 0;
  for (int i = 0; i < kRandomKernels; ++i) {
    const ArchLimits& arch = archs[std::size_t(i) % archs.size()];
    const KernelConfig kernel = random_kernel(rng, arch);
    const Occupancy ours = calculate(arch, kernel);
    // The reference computes occupancy for blocks above __launch_bounds__ (the launch fails);
    // those are checked by calculator tests instead.
    if (kernel.launch_bounds_max_threads &&
        kernel.threads_per_block > *kernel.launch_bounds_max_threads) {
      continue;
    }
    const cudaOccDeviceProp device = reference_device(arch);
    const cudaOccFuncAttributes function = reference_function(kernel);
    const cudaOccDeviceState state = reference_state(kernel);
    cudaOccResult reference{};
    ASSERT_EQ(cudaOccMaxActiveBlocksPerMultiprocessor(&reference, &device, &function, &state,
                                                      kernel.threads_per_block,
                                                      std::size_t(kernel.dynamic_shared_bytes)),
              CUDA_OCC_SUCCESS)
        << describe(arch, kernel);
    ++compared;
    bool same = reference.activeBlocksPerMultiprocessor == ours.active_blocks;
    if (ours.valid()) {
      ++valid;
      same = same && reference.blockLimitWarps == ours.blocks_by_warps &&
             reference.blockLimitBlocks == ours.blocks_by_blocks &&
             reference.blockLimitRegs == ours.blocks_by_registers.value_or(INT_MAX) &&
             reference.blockLimitSharedMem == ours.blocks_by_shared_memory.value_or(INT_MAX) &&
             (reference.limitingFactors & 0x0Fu) == limiter_bits(ours) &&
             reference.allocatedRegistersPerBlock == ours.allocated_registers_per_block &&
             reference.allocatedSharedMemPerBlock ==
                 std::size_t(ours.allocated_shared_bytes_per_block);
    }
    if (!same && ++mismatches <= 10) {
      ADD_FAILURE() << describe(arch, kernel) << ": reference "
                    << reference.activeBlocksPerMultiprocessor << " blocks (warps "
                    << reference.blockLimitWarps << ", regs " << reference.blockLimitRegs
                    << ", smem " << reference.blockLimitSharedMem << ", factors "
                    << reference.limitingFactors << "), ours " << ours.active_blocks << " ("
                    << ours.invalid_detail << ")";
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ oracle   ] " << compared << " configurations compared (" << valid
            << " valid launches, " << compared - valid << " invalid), " << mismatches
            << " mismatches, " << seconds << " s\n";
  RecordProperty("compared", compared);
  RecordProperty("mismatches", mismatches);
  EXPECT_GE(valid, 100'000);
  EXPECT_EQ(mismatches, 0);
}

TEST(occupancy_oracle_test, best_block_size_equals_max_potential_block_size) {
  std::mt19937_64 rng(42);
  const auto archs = all_architectures();
  int mismatches = 0;
  for (int i = 0; i < kRandomSweeps; ++i) {
    const ArchLimits& arch = archs[std::size_t(i) % archs.size()];
    const KernelConfig kernel = random_kernel(rng, arch);
    const Sweep ours = sweep(arch, kernel);
    const cudaOccDeviceProp device = reference_device(arch);
    const cudaOccFuncAttributes function = reference_function(kernel);
    const cudaOccDeviceState state = reference_state(kernel);
    int min_grid = 0, block = 0;
    ASSERT_EQ(cudaOccMaxPotentialOccupancyBlockSize(&min_grid, &block, &device, &function, &state,
                                                    std::size_t(kernel.dynamic_shared_bytes)),
              CUDA_OCC_SUCCESS);
    const bool same =
        block == ours.best_threads_per_block && min_grid == ours.best_active_blocks * kSmCount;
    if (!same && ++mismatches <= 10) {
      ADD_FAILURE() << describe(arch, kernel) << ": reference block " << block << " grid "
                    << min_grid << ", ours " << ours.best_threads_per_block << " × "
                    << ours.best_active_blocks;
    }
  }
  std::cout << "[ oracle   ] " << kRandomSweeps << " block-size sweeps compared, " << mismatches
            << " mismatches\n";
  EXPECT_EQ(mismatches, 0);
}

#else

TEST(occupancy_oracle_test, skipped_without_cuda_toolkit) {
  GTEST_SKIP() << "/usr/local/cuda/include/cuda_occupancy.h not found at build time: install the "
                  "CUDA toolkit there to compare the calculator with NVIDIA's";
}

#endif

}  // namespace
}  // namespace gpuclk::occupancy
