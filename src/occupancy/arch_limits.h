// Per-architecture limits that decide how many blocks of a kernel fit on one SM, for every
// compute capability from sm_50 (Maxwell) to sm_121 (Blackwell GB10). Each number's source is
// cited next to it in arch_limits.cpp. All counts are per SM unless the name says otherwise;
// registers are 32-bit registers; shared memory is in bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpuclk::occupancy {

struct ArchLimits {
  std::string_view name;      // "sm_90"
  int major = 0;              // compute capability major
  int minor = 0;              // compute capability minor
  std::string_view family;    // "Hopper"
  std::string_view examples;  // GPUs with this compute capability, "H100, H200, GH200"

  int warp_size = 32;                   // threads per warp
  int max_threads_per_block = 0;        // launch limit of one block (1024 everywhere)
  int max_warps_per_sm = 0;             // resident warps (× 32 = resident threads)
  int max_blocks_per_sm = 0;            // resident blocks
  int warp_allocation_granularity = 1;  // warps a block is rounded up to (1: no rounding)

  int registers_per_sm = 0;          // register file size
  int max_registers_per_block = 0;   // all warps of one block together
  int max_registers_per_thread = 0;  // 255: R0..R254
  int register_allocation_unit = 0;  // registers; a warp's registers are rounded up to this
  int register_sub_partitions = 0;   // SM sub-partitions that each own 1/n of the register file
  // Sub-partitions the launch check rounds a block's warps up to. Equal to
  // register_sub_partitions except on sm_60, which is checked as if it had GP10x's 4 so that a
  // kernel that runs on one Pascal runs on all (cuda_occupancy.h behaves the same).
  int register_launch_check_sub_partitions = 0;

  std::int64_t shared_memory_per_sm = 0;                // bytes, largest carveout
  std::int64_t shared_memory_per_block = 0;             // bytes, without opt-in (48 KiB)
  std::int64_t shared_memory_per_block_optin = 0;       // bytes, after cudaFuncSetAttribute
  std::int64_t max_static_shared_memory_per_block = 0;  // bytes, __shared__ arrays (48 KiB)
  std::int64_t shared_memory_allocation_unit = 0;       // bytes; a block's use is rounded up to it
  std::int64_t reserved_shared_memory_per_block = 0;    // bytes the driver adds to every block
  // Shared-memory sizes (KiB) the unified L1/shared array can be configured to, ascending;
  // empty where shared memory is a fixed, separate array (Maxwell, Pascal).
  std::span<const int> carveout_kib;

  int max_resident_threads() const { return max_warps_per_sm * warp_size; }
  bool has_carveout() const { return !carveout_kib.empty(); }
};

// Every architecture in the table, oldest first.
std::span<const ArchLimits> all_architectures();

// Exact match on compute capability; nullptr if the table has no such architecture.
const ArchLimits* find_architecture(int major, int minor);

// Parses "sm_90", "sm_90a", "sm_100f", "compute_90", "90", "9.0" and the pre-CUDA-13 name of
// Thor, "sm_101" (now sm_110). nullptr if the text names no architecture in the table.
const ArchLimits* parse_architecture(std::string_view text);

// "sm_50, sm_52, …, sm_121": for error messages that list what is valid.
std::string architecture_names();

}  // namespace gpuclk::occupancy
