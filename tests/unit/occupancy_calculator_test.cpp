#include <gtest/gtest.h>

#include "occupancy/calculator.h"
#include "util/error.h"

namespace gpuclk::occupancy {
namespace {

const ArchLimits& arch(const char* name) { return *parse_architecture(name); }

KernelConfig kernel(int threads, int registers, std::int64_t static_shared = 0,
                    std::int64_t dynamic_shared = 0) {
  KernelConfig config;
  config.threads_per_block = threads;
  config.registers_per_thread = registers;
  config.static_shared_bytes = static_shared;
  config.dynamic_shared_bytes = dynamic_shared;
  return config;
}

using Limiters = std::vector<Limiter>;

TEST(occupancy_calculator_test, worked_example_256_threads_32_registers_fills_an_a100_sm) {
  const Occupancy a100 = calculate(arch("sm_80"), kernel(256, 32));
  EXPECT_EQ(a100.active_blocks, 8);
  EXPECT_EQ(a100.active_warps, 64);
  EXPECT_DOUBLE_EQ(a100.occupancy(), 1.0);
  EXPECT_EQ(a100.blocks_by_warps, 8);
  EXPECT_EQ(a100.blocks_by_registers, 8);
  EXPECT_EQ(a100.blocks_by_blocks, 32);
  EXPECT_EQ(a100.blocks_by_shared_memory, 164);  // only the driver's reserved 1 KiB per block
  EXPECT_EQ(a100.limiters, (Limiters{Limiter::warps, Limiter::registers}));
}

TEST(occupancy_calculator_test, worked_example_256_threads_32_registers_fills_an_h100_sm) {
  const Occupancy h100 = calculate(arch("sm_90"), kernel(256, 32));
  EXPECT_EQ(h100.active_blocks, 8);
  EXPECT_EQ(h100.active_warps, 64);
  EXPECT_EQ(h100.active_threads, 2048);
  EXPECT_EQ(h100.allocated_registers_per_block, 8192);
  EXPECT_EQ(h100.blocks_by_shared_memory, 228);
  EXPECT_EQ(h100.limiters, (Limiters{Limiter::warps, Limiter::registers}));
}

TEST(occupancy_calculator_test, ga10x_sm_holds_48_warps_so_warps_bind_first) {
  const Occupancy rtx3090 = calculate(arch("sm_86"), kernel(256, 32));
  EXPECT_EQ(rtx3090.active_blocks, 6);
  EXPECT_DOUBLE_EQ(rtx3090.occupancy(), 1.0);
  EXPECT_EQ(rtx3090.limiters, Limiters{Limiter::warps});
}

TEST(occupancy_calculator_test, registers_round_up_per_warp_and_per_sub_partition) {
  // 40 registers × 32 lanes = 1280 per warp; 16384 per sub-partition hold 12 warps, 48 per SM.
  const Occupancy result = calculate(arch("sm_90"), kernel(256, 40));
  EXPECT_EQ(result.blocks_by_registers, 6);
  EXPECT_EQ(result.active_blocks, 6);
  EXPECT_DOUBLE_EQ(result.occupancy(), 0.75);
  EXPECT_EQ(result.limiters, Limiters{Limiter::registers});
  // 33 registers allocate like 40 (256-register units per warp).
  EXPECT_EQ(calculate(arch("sm_90"), kernel(256, 33)).active_blocks, 6);
}

TEST(occupancy_calculator_test, small_blocks_hit_the_block_limit) {
  const Occupancy result = calculate(arch("sm_90"), kernel(32, 16));
  EXPECT_EQ(result.active_blocks, 32);
  EXPECT_DOUBLE_EQ(result.occupancy(), 0.5);
  EXPECT_EQ(result.limiters, Limiters{Limiter::blocks});
}

TEST(occupancy_calculator_test, shared_memory_counts_reserved_kib_and_rounds_to_128_bytes) {
  const Occupancy result = calculate(arch("sm_90"), kernel(256, 32, 0, 100 * 1024));
  EXPECT_EQ(result.allocated_shared_bytes_per_block, 101 * 1024);
  EXPECT_EQ(result.active_blocks, 2);
  EXPECT_EQ(result.limiters, Limiters{Limiter::shared_memory});
  EXPECT_TRUE(result.needs_shared_optin);
  EXPECT_EQ(calculate(arch("sm_90"), kernel(256, 32, 1, 0)).allocated_shared_bytes_per_block,
            1024 + 128);
}

TEST(occupancy_calculator_test, maxwell_has_no_reserved_shared_memory_and_256_byte_units) {
  const Occupancy result = calculate(arch("sm_52"), kernel(128, 32, 1, 0));
  EXPECT_EQ(result.allocated_shared_bytes_per_block, 256);
  EXPECT_FALSE(calculate(arch("sm_52"), kernel(128, 32)).blocks_by_shared_memory.has_value());
}

TEST(occupancy_calculator_test, no_registers_means_registers_never_limit) {
  const Occupancy result = calculate(arch("sm_75"), kernel(64, 0));
  EXPECT_FALSE(result.blocks_by_registers.has_value());
  EXPECT_EQ(result.active_blocks, 16);
}

TEST(occupancy_calculator_test, carveout_preference_below_one_block_is_raised_by_the_driver) {
  KernelConfig config = kernel(256, 32, 0, 32 * 1024);
  config.carveout_percent = 25;  // 57 KiB, rounded up to the 64 KiB carveout
  const Occupancy small = calculate(arch("sm_90"), config);
  EXPECT_EQ(small.shared_bytes_per_sm, 64 * 1024);
  EXPECT_EQ(small.active_blocks, 1);
  config.carveout_percent = 0;  // no block fits in 0 KiB: the smallest size holding one, 64 KiB
  EXPECT_EQ(calculate(arch("sm_90"), config).shared_bytes_per_sm, 64 * 1024);
  config.carveout_percent.reset();
  EXPECT_EQ(calculate(arch("sm_90"), config).active_blocks, 6);
}

TEST(occupancy_calculator_test, block_above_1024_threads_is_invalid_not_zero_percent) {
  const Occupancy result = calculate(arch("sm_90"), kernel(1025, 16));
  EXPECT_FALSE(result.valid());
  EXPECT_EQ(result.invalid_reasons,
            std::vector<InvalidReason>{InvalidReason::block_above_device_maximum});
  EXPECT_EQ(result.invalid_detail, "1025 threads per block exceeds the sm_90 maximum of 1024");
  EXPECT_EQ(result.active_blocks, 0);
  EXPECT_TRUE(result.limiters.empty());
}

TEST(occupancy_calculator_test, block_above_launch_bounds_is_invalid) {
  KernelConfig config = kernel(256, 32);
  config.launch_bounds_max_threads = 128;
  const Occupancy result = calculate(arch("sm_80"), config);
  EXPECT_EQ(result.invalid_reasons,
            std::vector<InvalidReason>{InvalidReason::block_above_launch_bounds});
  EXPECT_EQ(result.invalid_detail,
            "256 threads per block exceeds the kernel's __launch_bounds__ of 128");
}

TEST(occupancy_calculator_test, too_many_registers_per_block_is_invalid) {
  const Occupancy result = calculate(arch("sm_90"), kernel(1024, 255));
  EXPECT_EQ(result.invalid_reasons,
            std::vector<InvalidReason>{InvalidReason::registers_per_block_above_maximum});
  EXPECT_EQ(result.invalid_detail,
            "1024 threads × 255 registers needs 262144 registers per block; sm_90 allows 65536");
  EXPECT_EQ(calculate(arch("sm_90"), kernel(64, 256)).invalid_reasons,
            std::vector<InvalidReason>{InvalidReason::registers_per_thread_above_maximum});
}

TEST(occupancy_calculator_test, jetson_tx2_allows_half_the_registers_per_block) {
  EXPECT_TRUE(calculate(arch("sm_61"), kernel(1024, 64)).valid());
  EXPECT_FALSE(calculate(arch("sm_62"), kernel(1024, 64)).valid());
}

TEST(occupancy_calculator_test, gp100_refuses_launches_that_other_pascals_cannot_run) {
  // 13 warps × 4352 registers fit GP100's two sub-partitions (14 × 4352 ≤ 65536) but not four
  // (16 × 4352 > 65536); the launch is refused on every Pascal alike.
  EXPECT_FALSE(calculate(arch("sm_60"), kernel(416, 136)).valid());
  EXPECT_FALSE(calculate(arch("sm_61"), kernel(416, 136)).valid());
}

TEST(occupancy_calculator_test, shared_memory_above_the_opt_in_maximum_is_invalid) {
  const Occupancy result = calculate(arch("sm_90"), kernel(128, 32, 0, 228 * 1024));
  EXPECT_EQ(result.invalid_reasons,
            std::vector<InvalidReason>{InvalidReason::shared_per_block_above_maximum});
  EXPECT_EQ(result.invalid_detail,
            "233472 bytes of shared memory per block exceeds the sm_90 maximum of 232448 bytes");
  EXPECT_TRUE(calculate(arch("sm_90"), kernel(128, 32, 0, 227 * 1024)).valid());
  EXPECT_FALSE(calculate(arch("sm_61"), kernel(128, 32, 0, 48 * 1024 + 1)).valid());
}

TEST(occupancy_calculator_test, static_shared_memory_above_48_kib_is_invalid) {
  const Occupancy result = calculate(arch("sm_90"), kernel(128, 32, 48 * 1024 + 4, 0));
  EXPECT_EQ(result.invalid_reasons,
            std::vector<InvalidReason>{InvalidReason::static_shared_above_maximum});
}

TEST(occupancy_calculator_test, every_reason_is_reported_at_once) {
  const Occupancy result = calculate(arch("sm_80"), kernel(2048, 255, 0, 200 * 1024));
  EXPECT_EQ(result.invalid_reasons.size(), 3u);
}

TEST(occupancy_calculator_test, malformed_inputs_are_bad_arguments) {
  const auto code_of = [](KernelConfig config) {
    try {
      calculate(arch("sm_90"), config);
    } catch (const Error& error) {
      return error.code();
    }
    return ExitCode::ok;
  };
  EXPECT_EQ(code_of(kernel(0, 32)), ExitCode::bad_argument);
  EXPECT_EQ(code_of(kernel(128, -1)), ExitCode::bad_argument);
  EXPECT_EQ(code_of(kernel(128, 32, -5)), ExitCode::bad_argument);
  KernelConfig carveout = kernel(128, 32);
  carveout.carveout_percent = 101;
  EXPECT_EQ(code_of(carveout), ExitCode::bad_argument);
  KernelConfig bounds = kernel(128, 32);
  bounds.launch_bounds_max_threads = 0;
  EXPECT_EQ(code_of(bounds), ExitCode::bad_argument);
  // Values whose block arithmetic would pass 2^31 (the argv fuzzer's overflow): refused, while a
  // value above the architecture's limit but within reach is still answered as invalid.
  EXPECT_EQ(code_of(kernel(2147483647, 32)), ExitCode::bad_argument);
  EXPECT_EQ(code_of(kernel(128, 2147483647)), ExitCode::bad_argument);
  EXPECT_EQ(code_of(kernel(16385, 32)), ExitCode::bad_argument);
  EXPECT_EQ(code_of(kernel(2048, 32)), ExitCode::ok);
  EXPECT_FALSE(calculate(arch("sm_90"), kernel(2048, 300)).valid());
}

}  // namespace
}  // namespace gpuclk::occupancy
