#include <gtest/gtest.h>

#include <set>

#include "occupancy/arch_limits.h"

namespace gpuclk::occupancy {
namespace {

TEST(occupancy_arch_limits_test, covers_sm_50_to_sm_121_oldest_first) {
  const auto archs = all_architectures();
  ASSERT_FALSE(archs.empty());
  EXPECT_EQ(archs.front().name, "sm_50");
  EXPECT_EQ(archs.back().name, "sm_121");
  std::set<std::string_view> names;
  for (std::size_t i = 1; i < archs.size(); ++i) {
    EXPECT_LT(archs[i - 1].major * 10 + archs[i - 1].minor, archs[i].major * 10 + archs[i].minor);
    EXPECT_TRUE(names.insert(archs[i].name).second) << archs[i].name;
  }
  for (const char* name : {"sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_103",
                           "sm_110", "sm_120"}) {
    EXPECT_NE(parse_architecture(name), nullptr) << name;
  }
}

TEST(occupancy_arch_limits_test, every_row_is_self_consistent) {
  for (const ArchLimits& arch : all_architectures()) {
    SCOPED_TRACE(std::string(arch.name));
    EXPECT_GE(arch.max_resident_threads(), arch.max_threads_per_block);  // one block fits
    EXPECT_LE(arch.shared_memory_per_block_optin + arch.reserved_shared_memory_per_block,
              arch.shared_memory_per_sm);
    EXPECT_GE(arch.shared_memory_per_block_optin, arch.shared_memory_per_block);
    EXPECT_LE(arch.max_registers_per_block, arch.registers_per_sm);
    EXPECT_EQ(arch.name, "sm_" + std::to_string(arch.major * 10 + arch.minor));
    if (arch.has_carveout()) {
      EXPECT_EQ(std::int64_t{arch.carveout_kib.back()} * 1024, arch.shared_memory_per_sm);
    }
    EXPECT_EQ(arch.has_carveout(), arch.major >= 7);
  }
}

TEST(occupancy_arch_limits_test, a100_and_h100_sms_hold_64_warps) {
  // The article's A100 figure of 32 warps is wrong: both hold 64 warps (2048 threads).
  EXPECT_EQ(parse_architecture("sm_80")->max_warps_per_sm, 64);
  EXPECT_EQ(parse_architecture("sm_90")->max_warps_per_sm, 64);
  EXPECT_EQ(parse_architecture("sm_80")->max_resident_threads(), 2048);
  EXPECT_EQ(parse_architecture("sm_86")->max_warps_per_sm, 48);
  EXPECT_EQ(parse_architecture("sm_75")->max_warps_per_sm, 32);
}

TEST(occupancy_arch_limits_test, h100_shared_memory_figures) {
  const ArchLimits& h100 = *parse_architecture("sm_90");
  EXPECT_EQ(h100.shared_memory_per_sm, 228 * 1024);
  EXPECT_EQ(h100.shared_memory_per_block, 48 * 1024);
  EXPECT_EQ(h100.shared_memory_per_block_optin, 227 * 1024);
  EXPECT_EQ(h100.reserved_shared_memory_per_block, 1024);
  EXPECT_EQ(h100.shared_memory_allocation_unit, 128);
}

TEST(occupancy_arch_limits_test, parses_every_common_spelling) {
  EXPECT_EQ(parse_architecture("sm_90")->name, "sm_90");
  EXPECT_EQ(parse_architecture("sm_90a")->name, "sm_90");
  EXPECT_EQ(parse_architecture("sm_100f")->name, "sm_100");
  EXPECT_EQ(parse_architecture("compute_80")->name, "sm_80");
  EXPECT_EQ(parse_architecture("86")->name, "sm_86");
  EXPECT_EQ(parse_architecture("8.9")->name, "sm_89");
  EXPECT_EQ(parse_architecture("12.0")->name, "sm_120");
  EXPECT_EQ(parse_architecture("sm_101")->name, "sm_110");  // Thor before CUDA 13
}

TEST(occupancy_arch_limits_test, rejects_what_names_no_architecture) {
  for (const char* text : {"", "sm_", "sm_95", "sm_30", "9.x", "hopper", "sm_90b", "1000", "9."}) {
    EXPECT_EQ(parse_architecture(text), nullptr) << text;
  }
  EXPECT_EQ(find_architecture(3, 5), nullptr);
}

TEST(occupancy_arch_limits_test, names_list_for_error_messages) {
  const std::string names = architecture_names();
  EXPECT_TRUE(names.starts_with("sm_50, sm_52, "));
  EXPECT_TRUE(names.ends_with("sm_120, sm_121"));
}

}  // namespace
}  // namespace gpuclk::occupancy
