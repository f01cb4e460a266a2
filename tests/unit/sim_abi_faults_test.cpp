// libnvml-sim.so faults: driver not loaded, bad scenario, GPU lost, scheduled and random read
// errors.
#include <unistd.h>

#include <cmath>
#include <cstring>

#include "sim_abi_fixture.h"

namespace gpuclk::sim::testing {
namespace {

TEST_F(sim_abi_test, driver_not_loaded_fails_init) {
  EXPECT_EQ(in_child(frozen("no-driver", "0"),
                     [](Nvml& n) {
                       EXPECT_EQ(n.nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
                       unsigned count = 0;
                       EXPECT_EQ(n.nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
                     }),
            0);
}

TEST_F(sim_abi_test, unknown_scenario_fails_init_with_a_message) {
  EXPECT_EQ(in_child(frozen("no-such-scenario", "0"),
                     [](Nvml& n) {
                       EXPECT_EQ(n.nvmlInit_v2(), NVML_ERROR_UNKNOWN);
                       EXPECT_TRUE(std::isnan(n.time()));
                     }),
            0);
}

TEST_F(sim_abi_test, gpu_lost_at_its_time) {
  EXPECT_EQ(in_child(frozen("faults", "59.5"),
                     [](Nvml& n) {
                       ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
                       nvmlDevice_t lost = n.handle(2);
                       unsigned v = 0;
                       EXPECT_EQ(n.nvmlDeviceGetPowerUsage(lost, &v), NVML_SUCCESS);
                       ASSERT_EQ(n.advance(1.0), 0);
                       EXPECT_EQ(n.nvmlDeviceGetPowerUsage(lost, &v), NVML_ERROR_GPU_IS_LOST);
                       EXPECT_EQ(n.nvmlDeviceGetName(lost, nullptr, 0), NVML_ERROR_GPU_IS_LOST);
                       EXPECT_EQ(n.nvmlDeviceSetGpuLockedClocks(lost, 1200, 1200),
                                 NVML_ERROR_GPU_IS_LOST);
                       nvmlDevice_t again = nullptr;
                       EXPECT_EQ(n.nvmlDeviceGetHandleByIndex_v2(2, &again),
                                 NVML_ERROR_GPU_IS_LOST);
                       unsigned count = 0;
                       EXPECT_EQ(n.nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
                       EXPECT_EQ(count, 4u);
                       EXPECT_EQ(n.nvmlDeviceGetPowerUsage(n.handle(0), &v),
                                 NVML_SUCCESS);  // the others carry on
                       n.nvmlShutdown();
                     }),
            0);
}

TEST_F(sim_abi_test, scheduled_and_transient_read_errors) {
  EXPECT_EQ(
      in_child(
          frozen("faults", "35"),
          [](Nvml& n) {
            ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
            unsigned v = 0;
            EXPECT_EQ(n.nvmlDeviceGetPowerUsage(n.handle(3), &v), NVML_ERROR_TIMEOUT);
            EXPECT_EQ(n.nvmlDeviceGetTemperature(n.handle(3), NVML_TEMPERATURE_GPU, &v),
                      NVML_SUCCESS);
            unsigned long long corrected = 0;
            EXPECT_EQ(n.nvmlDeviceGetTotalEccErrors(n.handle(3), NVML_MEMORY_ERROR_TYPE_CORRECTED,
                                                    NVML_AGGREGATE_ECC, &corrected),
                      NVML_SUCCESS);
            EXPECT_EQ(corrected, 7ull + 1ull);  // 7 + 120/h × 35 s
            int failures = 0;
            for (int i = 0; i < 4000; ++i) {
              const nvmlReturn_t rc = n.nvmlDeviceGetPowerUsage(n.handle(1), &v);
              EXPECT_TRUE(rc == NVML_SUCCESS || rc == NVML_ERROR_UNKNOWN);
              failures += rc != NVML_SUCCESS;
            }
            EXPECT_NEAR(failures / 4000.0, 0.05, 0.015);
            // Identity reads are not hit: tools must be able to name the GPU that fails.
            char name[96];
            for (int i = 0; i < 200; ++i)
              EXPECT_EQ(n.nvmlDeviceGetName(n.handle(1), name, sizeof name), NVML_SUCCESS);
            ASSERT_EQ(n.advance(11.0), 0);
            EXPECT_EQ(n.nvmlDeviceGetPowerUsage(n.handle(3), &v), NVML_SUCCESS);  // window over
            n.nvmlShutdown();
          }),
      0);
}

}  // namespace
}  // namespace gpuclk::sim::testing
