#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "occupancy/resource_usage.h"

namespace gpuclk::occupancy {
namespace {

std::string sample(const std::string& name) {
  std::ifstream file(std::string(GPUCLK_SOURCE_DIR) + "/tests/unit/occupancy_samples/" + name);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

TEST(occupancy_resource_usage_test, cuobjdump_lists_every_kernel_of_every_sass_arch) {
  const auto kernels = parse_cuobjdump_resource_usage(sample("cuobjdump_two_archs.txt"));
  ASSERT_EQ(kernels.size(), 6u);  // 3 kernels × sm_80, sm_90; the PTX section has none
  EXPECT_EQ(kernels[0].name, "_Z5spillILi300EEvPf");
  EXPECT_EQ(kernels[0].arch, "sm_80");
  EXPECT_EQ(kernels[0].registers, 34);
  EXPECT_EQ(kernels[0].stack_bytes, 1200);
  EXPECT_EQ(kernels[0].constant0_bytes, 360);
  EXPECT_EQ(kernels[0].barriers, -1);
  EXPECT_EQ(kernels[4].name, "_Z5tiledPfPKfi");
  EXPECT_EQ(kernels[4].arch, "sm_90");
  EXPECT_EQ(kernels[4].registers, 78);
  EXPECT_EQ(kernels[4].static_shared_bytes, 4096);
  EXPECT_EQ(kernels[3].other_constant_bytes,
            8);  // CONSTANT[2]; Common's CONSTANT[3] is not a kernel's
}

TEST(occupancy_resource_usage_test, lone_cubin_dump_has_no_arch) {
  const auto kernels = parse_cuobjdump_resource_usage(sample("cuobjdump_cubin.txt"));
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].arch, "");
  EXPECT_EQ(kernels[1].name, "_Z3addPfPKfi");
  EXPECT_EQ(kernels[1].registers, 10);
}

TEST(occupancy_resource_usage_test, unknown_fields_and_lines_are_skipped) {
  const auto kernels = parse_cuobjdump_resource_usage(
      "Resource usage:\n Function k:\n  REG:46 STACK:0 SHARED:512 LOCAL:16 NEWTHING:3 "
      "CONSTANT[0]:1008\r\nsomething else\n");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].registers, 46);
  EXPECT_EQ(kernels[0].static_shared_bytes, 512);
  EXPECT_EQ(kernels[0].local_bytes, 16);
  EXPECT_EQ(kernels[0].constant0_bytes, 1008);
  EXPECT_TRUE(parse_cuobjdump_resource_usage("not a dump").empty());
}

TEST(occupancy_resource_usage_test, ptxas_log_gives_entry_functions_per_arch) {
  const auto kernels = parse_ptxas_log(sample("ptxas_sm80_sm90.log"));
  ASSERT_EQ(kernels.size(), 6u);  // the device function scaled() is not a kernel
  EXPECT_EQ(kernels[0].name, "_Z5spillILi300EEvPf");
  EXPECT_EQ(kernels[0].arch, "sm_80");
  EXPECT_EQ(kernels[0].registers, 34);
  EXPECT_EQ(kernels[0].stack_bytes, 1200);
  EXPECT_EQ(kernels[0].barriers, 0);
  EXPECT_EQ(kernels[0].constant0_bytes, 360);
  EXPECT_EQ(kernels[1].name, "_Z5tiledPfPKfi");
  EXPECT_EQ(kernels[1].registers, 76);
  EXPECT_EQ(kernels[1].static_shared_bytes, 4096);
  EXPECT_EQ(kernels[1].barriers, 1);
  EXPECT_EQ(kernels[4].arch, "sm_90");
  EXPECT_EQ(kernels[4].registers, 78);
  EXPECT_EQ(kernels[4].constant0_bytes, -1);  // ptxas for sm_90 does not print cmem[0]
  EXPECT_EQ(kernels[5].name, "_Z3addPfPKfi");
  EXPECT_EQ(kernels[5].registers, 10);
}

TEST(occupancy_resource_usage_test, ptxas_log_reports_spills) {
  const auto kernels = parse_ptxas_log(sample("ptxas_sm90_maxrregcount24.log"));
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(kernels[0].registers, 24);
  EXPECT_EQ(kernels[0].stack_bytes, 1232);
  EXPECT_EQ(kernels[0].spill_store_bytes, 48);
  EXPECT_EQ(kernels[0].spill_load_bytes, 48);
  EXPECT_EQ(kernels[1].spill_store_bytes, 0);
}

TEST(occupancy_resource_usage_test, old_ptxas_format_with_lmem_parses) {
  const auto kernels = parse_ptxas_log(
      "ptxas info    : Compiling entry function '_Z1kv' for 'sm_52'\n"
      "ptxas info    : Used 12 registers, 48 bytes lmem, 8 bytes smem, 344 bytes cmem[0], "
      "4 bytes cmem[2]\n");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].arch, "sm_52");
  EXPECT_EQ(kernels[0].registers, 12);
  EXPECT_EQ(kernels[0].local_bytes, 48);
  EXPECT_EQ(kernels[0].static_shared_bytes, 8);
  EXPECT_EQ(kernels[0].other_constant_bytes, 4);
}

TEST(occupancy_resource_usage_test, stack_frame_line_after_the_registers_line_is_ignored) {
  // "Function properties" opened for the kernel, then its "Used" line closed it: the stack frame
  // line that follows belongs to no kernel (this order once dereferenced a null kernel).
  const auto kernels = parse_ptxas_log(
      "ptxas info    : Compiling entry function '_Z1kv' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z1kv\n"
      "ptxas info    : Used 12 registers, 8 bytes smem\n"
      "    16 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].registers, 12);
  EXPECT_EQ(kernels[0].stack_bytes, 0);
}

TEST(occupancy_resource_usage_test, demangles_cxx_names_and_keeps_c_names) {
  EXPECT_EQ(demangle("_Z3addPfPKfi"), "add(float*, float const*, int)");
  EXPECT_EQ(demangle("_Z5spillILi300EEvPf"), "void spill<300>(float*)");
  EXPECT_EQ(demangle("calculate"), "calculate");
}

// Real output of cuobjdump 13.0 on the H100 (tests/device/occupancy_device.sh saved it), with
// cudaFuncGetAttributes' figures from the same run: SHARED includes the 1 KiB per-block
// reservation of sm_80+, which the parser removes so the calculator does not count it twice.
TEST(occupancy_resource_usage_test, real_h100_dump_matches_cuda_func_get_attributes) {
  const auto kernels = parse_cuobjdump_resource_usage(sample("cuobjdump_h100_real.txt"));
  ASSERT_EQ(kernels.size(), 23u);
  auto find = [&](const std::string& name) -> const KernelResources& {
    for (const auto& k : kernels) {
      if (k.name == name) return k;
    }
    throw std::runtime_error("no kernel " + name);
  };
  // pressure<live, smem>: runtime registers / static shared bytes.
  EXPECT_EQ(find("_Z8pressureILi0ELi0EEvPfPKf").registers, 12);
  EXPECT_EQ(find("_Z8pressureILi0ELi0EEvPfPKf").static_shared_bytes, 16);  // dump: SHARED:1040
  EXPECT_EQ(find("_Z8pressureILi20ELi49152EEvPfPKf").registers, 31);
  EXPECT_EQ(find("_Z8pressureILi20ELi49152EEvPfPKf").static_shared_bytes, 49152);  // 50176
  EXPECT_EQ(find("_Z8pressureILi120ELi4096EEvPfPKf").registers, 136);
  EXPECT_EQ(find("_Z8pressureILi120ELi4096EEvPfPKf").static_shared_bytes, 4096);
  EXPECT_EQ(find("_Z8pressureILi120ELi4096EEvPfPKf").stack_bytes, 480);
  for (const auto& k : kernels) EXPECT_EQ(k.arch, "sm_90") << k.name;
}

}  // namespace
}  // namespace gpuclk::occupancy
