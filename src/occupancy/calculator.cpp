#include "occupancy/calculator.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/error.h"

namespace gpuclk::occupancy {
namespace {

constexpr int kMaxThreadsArgument = 16384;
constexpr int kMaxRegistersArgument = 65536;

constexpr int round_up(int value, int unit) { return (value + unit - 1) / unit * unit; }
constexpr std::int64_t round_up(std::int64_t value, std::int64_t unit) {
  return (value + unit - 1) / unit * unit;
}

void check_arguments(const KernelConfig& kernel) {
  if (kernel.threads_per_block < 1) {
    throw bad_argument(fmt::format("threads per block {} is not a block size: use 1 or more",
                                   kernel.threads_per_block));
  }
  if (kernel.registers_per_thread < 0) {
    throw bad_argument(fmt::format("registers per thread {} is negative: use 0..255",
                                   kernel.registers_per_thread));
  }
  // Far beyond every architecture (1024 threads, 255 registers), so a value above an
  // architecture's limit is still answered with the limit it breaks; these caps only keep the
  // block's register arithmetic below 2^31 (16384 threads × 65536 registers = 2^30).
  if (kernel.threads_per_block > kMaxThreadsArgument) {
    throw bad_argument(fmt::format(
        "threads per block {} is not a block size any GPU launches: every architecture allows at "
        "most 1024",
        kernel.threads_per_block));
  }
  if (kernel.registers_per_thread > kMaxRegistersArgument) {
    throw bad_argument(fmt::format(
        "registers per thread {} is not a count any GPU allocates: every architecture allows at "
        "most 255",
        kernel.registers_per_thread));
  }
  if (kernel.static_shared_bytes < 0 || kernel.dynamic_shared_bytes < 0) {
    throw bad_argument(fmt::format("shared memory {} + {} bytes is negative: use 0 or more",
                                   kernel.static_shared_bytes, kernel.dynamic_shared_bytes));
  }
  if (kernel.launch_bounds_max_threads && *kernel.launch_bounds_max_threads < 1) {
    throw bad_argument(fmt::format("launch bounds {} threads is not a block size: use 1..1024",
                                   *kernel.launch_bounds_max_threads));
  }
  if (kernel.carveout_percent && (*kernel.carveout_percent < 0 || *kernel.carveout_percent > 100)) {
    throw bad_argument(fmt::format("carveout {} % is outside 0..100", *kernel.carveout_percent));
  }
}

// The smallest carveout the hardware offers that holds `bytes`; nullopt if none does.
std::optional<std::int64_t> carveout_at_least(const ArchLimits& arch, std::int64_t bytes) {
  for (int kib : arch.carveout_kib) {
    if (std::int64_t{kib} * 1024 >= bytes) return std::int64_t{kib} * 1024;
  }
  return std::nullopt;
}

// Shared memory an SM provides for this kernel's blocks. The carveout the user prefers is
// rounded up to a size the hardware has; if one block does not fit in it, the driver picks
// the smallest size that holds one block rather than failing the launch.
std::int64_t shared_bytes_per_sm(const ArchLimits& arch, const KernelConfig& kernel,
                                 std::int64_t allocated_per_block) {
  if (!arch.has_carveout()) return arch.shared_memory_per_sm;
  std::int64_t preferred = arch.shared_memory_per_sm;
  if (kernel.carveout_percent) {
    preferred = *kernel.carveout_percent * arch.shared_memory_per_sm / 100;
  }
  preferred = carveout_at_least(arch, preferred).value_or(arch.shared_memory_per_sm);
  if (preferred >= allocated_per_block) return preferred;
  return carveout_at_least(arch, allocated_per_block).value_or(arch.shared_memory_per_sm);
}

// Registers live in the SM's sub-partitions; a warp's registers come from one of them, so a
// sub-partition holds a whole number of warps and the SM holds that many times the count.
BlockLimit blocks_by_registers(const ArchLimits& arch, int registers_per_warp,
                               int warps_per_block) {
  if (registers_per_warp == 0) return std::nullopt;
  const int registers_per_sub_partition = arch.registers_per_sm / arch.register_sub_partitions;
  const int warps_per_sm =
      registers_per_sub_partition / registers_per_warp * arch.register_sub_partitions;
  return warps_per_sm / warps_per_block;
}

void check_launch(const ArchLimits& arch, const KernelConfig& kernel, Occupancy& result,
                  int registers_per_warp, std::int64_t shared_limit_per_block) {
  std::vector<std::string> details;
  const auto invalid = [&](InvalidReason reason, std::string detail) {
    result.invalid_reasons.push_back(reason);
    details.push_back(std::move(detail));
  };
  if (kernel.threads_per_block > arch.max_threads_per_block) {
    invalid(InvalidReason::block_above_device_maximum,
            fmt::format("{} threads per block exceeds the {} maximum of {}",
                        kernel.threads_per_block, arch.name, arch.max_threads_per_block));
  }
  if (kernel.launch_bounds_max_threads &&
      kernel.threads_per_block > *kernel.launch_bounds_max_threads) {
    invalid(InvalidReason::block_above_launch_bounds,
            fmt::format("{} threads per block exceeds the kernel's __launch_bounds__ of {}",
                        kernel.threads_per_block, *kernel.launch_bounds_max_threads));
  }
  if (kernel.registers_per_thread > arch.max_registers_per_thread) {
    invalid(InvalidReason::registers_per_thread_above_maximum,
            fmt::format("{} registers per thread exceeds the maximum of {}",
                        kernel.registers_per_thread, arch.max_registers_per_thread));
  } else {
    // The hardware checks the block as if its warps were spread over every sub-partition.
    const int checked = registers_per_warp *
                        round_up(result.warps_per_block, arch.register_launch_check_sub_partitions);
    const int needed = std::max(checked, result.allocated_registers_per_block);
    if (needed > arch.max_registers_per_block) {
      invalid(InvalidReason::registers_per_block_above_maximum,
              fmt::format("{} threads × {} registers needs {} registers per block; {} allows {}",
                          kernel.threads_per_block, kernel.registers_per_thread, needed, arch.name,
                          arch.max_registers_per_block));
    }
  }
  if (kernel.static_shared_bytes > arch.max_static_shared_memory_per_block) {
    invalid(InvalidReason::static_shared_above_maximum,
            fmt::format("{} bytes of static shared memory exceeds the {} bytes a __shared__ "
                        "array may have; use dynamic shared memory",
                        kernel.static_shared_bytes, arch.max_static_shared_memory_per_block));
  }
  if (result.allocated_shared_bytes_per_block > shared_limit_per_block) {
    invalid(InvalidReason::shared_per_block_above_maximum,
            fmt::format("{} bytes of shared memory per block exceeds the {} maximum of {} bytes",
                        kernel.total_shared_bytes(), arch.name,
                        arch.has_carveout() ? arch.shared_memory_per_block_optin
                                            : arch.shared_memory_per_block));
  }
  for (const std::string& detail : details) {
    if (!result.invalid_detail.empty()) result.invalid_detail += "; ";
    result.invalid_detail += detail;
  }
}

}  // namespace

std::string_view to_string(Limiter limiter) {
  switch (limiter) {
    case Limiter::warps:
      return "warps";
    case Limiter::blocks:
      return "blocks";
    case Limiter::registers:
      return "registers";
    case Limiter::shared_memory:
      return "shared_memory";
  }
  return "unknown";
}

std::string_view to_string(InvalidReason reason) {
  switch (reason) {
    case InvalidReason::block_above_device_maximum:
      return "block_above_device_maximum";
    case InvalidReason::block_above_launch_bounds:
      return "block_above_launch_bounds";
    case InvalidReason::registers_per_thread_above_maximum:
      return "registers_per_thread_above_maximum";
    case InvalidReason::registers_per_block_above_maximum:
      return "registers_per_block_above_maximum";
    case InvalidReason::static_shared_above_maximum:
      return "static_shared_above_maximum";
    case InvalidReason::shared_per_block_above_maximum:
      return "shared_per_block_above_maximum";
  }
  return "unknown";
}

bool Occupancy::limited_by(Limiter limiter) const {
  return std::find(limiters.begin(), limiters.end(), limiter) != limiters.end();
}

Occupancy calculate(const ArchLimits& arch, const KernelConfig& kernel) {
  check_arguments(kernel);
  Occupancy result;
  result.max_warps = arch.max_warps_per_sm;
  result.warps_per_block =
      round_up((kernel.threads_per_block + arch.warp_size - 1) / arch.warp_size,
               arch.warp_allocation_granularity);

  const int registers_per_warp =
      round_up(kernel.registers_per_thread * arch.warp_size, arch.register_allocation_unit);
  result.allocated_registers_per_block = registers_per_warp * result.warps_per_block;

  // The driver's 1 KiB reservation counts against the block and is rounded with it.
  const std::int64_t requested_shared =
      kernel.total_shared_bytes() + arch.reserved_shared_memory_per_block;
  result.allocated_shared_bytes_per_block =
      round_up(requested_shared, arch.shared_memory_allocation_unit);
  // Above 48 KiB a block needs the opt-in; the calculator assumes the program sets it.
  result.needs_shared_optin = kernel.total_shared_bytes() > arch.shared_memory_per_block;
  const bool uses_optin_limit =
      arch.has_carveout() && requested_shared > arch.shared_memory_per_block;
  const std::int64_t shared_limit_per_block =
      (uses_optin_limit ? arch.shared_memory_per_block_optin : arch.shared_memory_per_block) +
      arch.reserved_shared_memory_per_block;

  check_launch(arch, kernel, result, registers_per_warp, shared_limit_per_block);
  if (!result.valid()) return result;

  result.shared_bytes_per_sm =
      shared_bytes_per_sm(arch, kernel, result.allocated_shared_bytes_per_block);
  result.blocks_by_warps = arch.max_warps_per_sm / result.warps_per_block;
  result.blocks_by_blocks = arch.max_blocks_per_sm;
  result.blocks_by_registers =
      blocks_by_registers(arch, registers_per_warp, result.warps_per_block);
  if (result.allocated_shared_bytes_per_block > 0) {
    result.blocks_by_shared_memory =
        int(result.shared_bytes_per_sm / result.allocated_shared_bytes_per_block);
  }

  result.active_blocks =
      std::min({result.blocks_by_warps, result.blocks_by_blocks,
                result.blocks_by_registers.value_or(result.blocks_by_blocks),
                result.blocks_by_shared_memory.value_or(result.blocks_by_blocks)});
  result.active_warps = result.active_blocks * result.warps_per_block;
  result.active_threads = result.active_blocks * kernel.threads_per_block;

  const auto binds = [&](BlockLimit limit) { return limit && *limit == result.active_blocks; };
  if (binds(result.blocks_by_warps)) result.limiters.push_back(Limiter::warps);
  if (binds(result.blocks_by_blocks)) result.limiters.push_back(Limiter::blocks);
  if (binds(result.blocks_by_registers)) result.limiters.push_back(Limiter::registers);
  if (binds(result.blocks_by_shared_memory)) result.limiters.push_back(Limiter::shared_memory);
  return result;
}

}  // namespace gpuclk::occupancy
