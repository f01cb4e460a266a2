// libnvml-sim.so writes: shared across processes, concurrent, refused like the driver refuses.
#include <unistd.h>

#include <cmath>
#include <cstring>

#include "sim_abi_fixture.h"

namespace gpuclk::sim::testing {
namespace {

TEST_F(sim_abi_test, a_lock_set_by_one_process_holds_for_the_next) {
  const auto env = frozen("default", "45");
  EXPECT_EQ(
      in_child(env,
               [](Nvml& n) {
                 ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
                 EXPECT_EQ(n.nvmlDeviceSetGpuLockedClocks(n.handle(1), 1200, 1200), NVML_SUCCESS);
                 EXPECT_EQ(n.nvmlDeviceSetApplicationsClocks(n.handle(2), 1593, 1500),
                           NVML_SUCCESS);
                 EXPECT_EQ(n.nvmlDeviceSetPowerManagementLimit(n.handle(3), 300000), NVML_SUCCESS);
                 EXPECT_EQ(n.nvmlDeviceSetPersistenceMode(n.handle(0), NVML_FEATURE_DISABLED),
                           NVML_SUCCESS);
                 n.nvmlShutdown();
               }),
      0);
  EXPECT_EQ(in_child(env,
                     [](Nvml& n) {
                       ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
                       ASSERT_EQ(n.advance(2.0), 0);  // the next steps run under the new settings
                       unsigned v = 0;
                       gpuclk_sim_gpu_truth_t truth{};
                       ASSERT_EQ(n.truth(1, &truth), 0);
                       if (truth.context_active) {
                         EXPECT_EQ(n.clock(n.handle(1)), 1200u);
                       }
                       EXPECT_EQ(n.nvmlDeviceGetApplicationsClock(n.handle(2), NVML_CLOCK_SM, &v),
                                 NVML_SUCCESS);
                       EXPECT_EQ(v, 1500u);
                       EXPECT_EQ(n.clock(n.handle(2), NVML_CLOCK_MEM), 1593u);
                       EXPECT_EQ(n.nvmlDeviceGetPowerManagementLimit(n.handle(3), &v),
                                 NVML_SUCCESS);
                       EXPECT_EQ(v, 300000u);
                       ASSERT_EQ(n.truth(3, &truth), 0);
                       EXPECT_LE(truth.power_w, 300.0 + 1e-6);
                       nvmlEnableState_t mode = NVML_FEATURE_ENABLED;
                       EXPECT_EQ(n.nvmlDeviceGetPersistenceMode(n.handle(0), &mode), NVML_SUCCESS);
                       EXPECT_EQ(mode, NVML_FEATURE_DISABLED);
                       // Resets undo them, for the next process too.
                       EXPECT_EQ(n.nvmlDeviceResetGpuLockedClocks(n.handle(1)), NVML_SUCCESS);
                       EXPECT_EQ(n.nvmlDeviceResetApplicationsClocks(n.handle(2)), NVML_SUCCESS);
                       n.nvmlShutdown();
                     }),
            0);
  EXPECT_EQ(in_child(env,
                     [](Nvml& n) {
                       ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
                       unsigned v = 0;
                       EXPECT_EQ(n.nvmlDeviceGetApplicationsClock(n.handle(2), NVML_CLOCK_SM, &v),
                                 NVML_SUCCESS);
                       EXPECT_EQ(v, 1980u);
                       n.nvmlShutdown();
                     }),
            0);
}

TEST_F(sim_abi_test, concurrent_writers_lose_no_update) {
  const auto env = frozen("8xh100", "10");
  auto writer = [&](unsigned first) {
    return in_child(env, [first](Nvml& n) {
      ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
      for (int round = 0; round < 20; ++round) {
        for (unsigned i = first; i < 8; i += 2) {
          EXPECT_EQ(n.nvmlDeviceSetPowerManagementLimit(n.handle(i), 300000 + 1000 * round + i),
                    NVML_SUCCESS);
        }
      }
      n.nvmlShutdown();
    });
  };
  const pid_t other = ::fork();
  if (other == 0) std::_Exit(writer(1));
  EXPECT_EQ(writer(0), 0);
  int status = 0;
  ::waitpid(other, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(in_child(env,
                     [](Nvml& n) {
                       ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
                       for (unsigned i = 0; i < 8; ++i) {
                         unsigned v = 0;
                         EXPECT_EQ(n.nvmlDeviceGetPowerManagementLimit(n.handle(i), &v),
                                   NVML_SUCCESS);
                         EXPECT_EQ(v, 300000u + 19000u + i) << "GPU " << i;
                       }
                     }),
            0);
}

TEST_F(sim_abi_test, writes_refuse_what_the_driver_refuses) {
  EXPECT_EQ(
      in_child(
          frozen("default", "0"),
          [](Nvml& n) {
            ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
            nvmlDevice_t d = n.handle(0);
            EXPECT_EQ(n.nvmlDeviceSetGpuLockedClocks(d, 1500, 1200), NVML_ERROR_INVALID_ARGUMENT);
            EXPECT_EQ(n.nvmlDeviceSetGpuLockedClocks(d, 1200, 2500), NVML_ERROR_INVALID_ARGUMENT);
            EXPECT_EQ(n.nvmlDeviceSetGpuLockedClocks(d, 1401, 1404), NVML_ERROR_INVALID_ARGUMENT);
            EXPECT_EQ(
                n.nvmlDeviceSetGpuLockedClocks(d, NVML_CLOCK_LIMIT_ID_TDP, NVML_CLOCK_LIMIT_ID_TDP),
                NVML_SUCCESS);
            EXPECT_EQ(n.nvmlDeviceSetApplicationsClocks(d, 2619, 1411),
                      NVML_ERROR_INVALID_ARGUMENT);
            EXPECT_EQ(n.nvmlDeviceSetApplicationsClocks(d, 3000, 1410),
                      NVML_ERROR_INVALID_ARGUMENT);
            EXPECT_EQ(n.nvmlDeviceSetMemoryLockedClocks(d, 1593, 2619), NVML_ERROR_NOT_SUPPORTED);
            EXPECT_EQ(n.nvmlDeviceResetMemoryLockedClocks(d), NVML_ERROR_NOT_SUPPORTED);
            EXPECT_EQ(n.nvmlDeviceSetPowerManagementLimit(d, 100000), NVML_ERROR_INVALID_ARGUMENT);
            EXPECT_EQ(n.nvmlDeviceSetPowerManagementLimit(d, 800000), NVML_ERROR_INVALID_ARGUMENT);
            nvmlEnableState_t bad_mode{};
            const int seven = 7;  // not a value of the enum: what a C caller can pass
            std::memcpy(&bad_mode, &seven, sizeof bad_mode);
            EXPECT_EQ(n.nvmlDeviceSetPersistenceMode(d, bad_mode), NVML_ERROR_INVALID_ARGUMENT);
            int not_a_gpu = 0;
            EXPECT_EQ(n.nvmlDeviceSetPowerManagementLimit(
                          reinterpret_cast<nvmlDevice_t>(&not_a_gpu), 300000),
                      NVML_ERROR_INVALID_ARGUMENT);
            n.nvmlShutdown();
          }),
      0);
}

TEST_F(sim_abi_test, unprivileged_scenario_reads_but_may_not_write) {
  EXPECT_EQ(
      in_child(
          frozen("unprivileged", "20"),
          [](Nvml& n) {
            ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
            nvmlDevice_t d = n.handle(0);
            unsigned v = 0;
            EXPECT_EQ(n.nvmlDeviceGetPowerUsage(d, &v), NVML_SUCCESS);
            EXPECT_EQ(n.nvmlDeviceSetGpuLockedClocks(d, 1200, 1200), NVML_ERROR_NO_PERMISSION);
            EXPECT_EQ(n.nvmlDeviceResetGpuLockedClocks(d), NVML_ERROR_NO_PERMISSION);
            EXPECT_EQ(n.nvmlDeviceSetApplicationsClocks(d, 2619, 1410), NVML_ERROR_NO_PERMISSION);
            EXPECT_EQ(n.nvmlDeviceResetApplicationsClocks(d), NVML_ERROR_NO_PERMISSION);
            EXPECT_EQ(n.nvmlDeviceSetPowerManagementLimit(d, 300000), NVML_ERROR_NO_PERMISSION);
            EXPECT_EQ(n.nvmlDeviceSetPersistenceMode(d, NVML_FEATURE_DISABLED),
                      NVML_ERROR_NO_PERMISSION);
            EXPECT_EQ(n.nvmlDeviceSetMemoryLockedClocks(d, 1593, 1593), NVML_ERROR_NOT_SUPPORTED);
            n.nvmlShutdown();
          }),
      0);
}

}  // namespace
}  // namespace gpuclk::sim::testing
