// NVML GPUs to CUDA ordinals: by PCI bus id, else UUID, never by position.
#include <gtest/gtest.h>

#include "bench/device_map.h"
#include "util/error.h"

namespace gpuclk::bench {
namespace {

DeviceInfo cuda_device(int ordinal, std::string uuid, std::string bus) {
  DeviceInfo d;
  d.ordinal = ordinal;
  d.uuid = std::move(uuid);
  d.pci_bus_id = std::move(bus);
  return d;
}

TEST(bench_device_map_test, matches_by_bus_id_when_cuda_orders_gpus_differently) {
  // CUDA's default order (fastest first) differs from NVML's PCI order.
  const std::vector<DeviceInfo> cuda = {cuda_device(0, "GPU-bbbb", "00000000:3B:00.0"),
                                        cuda_device(1, "GPU-aaaa", "00000000:1A:00.0")};
  const std::vector<NvmlGpu> nvml = {{0, "H100", "GPU-aaaa", "00000000:1A:00.0"},
                                     {1, "H100", "GPU-bbbb", "00000000:3B:00.0"}};
  EXPECT_EQ(cuda_ordinals(nvml, cuda), (std::vector<int>{1, 0}));
}

TEST(bench_device_map_test, bus_ids_match_in_any_spelling) {
  const std::vector<DeviceInfo> cuda = {cuda_device(0, "GPU-x", "00000000:1A:00.0")};
  const std::vector<NvmlGpu> nvml = {{3, "H100", "GPU-other", "0000:1a:00.0"}};
  EXPECT_EQ(cuda_ordinals(nvml, cuda), (std::vector<int>{0}));
}

TEST(bench_device_map_test, falls_back_to_the_uuid_without_a_bus_id) {
  const std::vector<DeviceInfo> cuda = {cuda_device(0, "GPU-1111", "00000000:1A:00.0"),
                                        cuda_device(1, "GPU-2222", "00000000:3B:00.0")};
  const std::vector<NvmlGpu> nvml = {{0, "H100", "GPU-2222", ""}};
  EXPECT_EQ(cuda_ordinals(nvml, cuda), (std::vector<int>{1}));
}

TEST(bench_device_map_test, a_gpu_cuda_cannot_see_is_not_found_with_a_hint) {
  // CUDA_VISIBLE_DEVICES=1: CUDA sees only the second GPU, as its ordinal 0.
  const std::vector<DeviceInfo> cuda = {cuda_device(0, "GPU-bbbb", "00000000:3B:00.0")};
  const std::vector<NvmlGpu> nvml = {{0, "H100", "GPU-aaaa", "00000000:1A:00.0"}};
  try {
    cuda_ordinals(nvml, cuda);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::gpu_not_found);
    EXPECT_NE(std::string(e.what()).find("GPU 0 (H100, 00000000:1A:00.0) is not visible to CUDA"),
              std::string::npos);
    EXPECT_NE(e.hint().find("CUDA_VISIBLE_DEVICES"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpuclk::bench
