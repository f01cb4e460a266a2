// libnvml-sim.so reads: life cycle, every getter on an idle node, busy readings, GPM, time.
#include <unistd.h>

#include <cmath>
#include <cstring>

#include "sim_abi_fixture.h"

namespace gpuclk::sim::testing {
namespace {

TEST_F(sim_abi_test, calls_before_init_and_after_shutdown_are_uninitialized) {
  EXPECT_EQ(in_child(frozen("default", "0"),
                     [](Nvml& n) {
                       unsigned count = 0;
                       EXPECT_EQ(n.nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
                       nvmlDevice_t d = nullptr;
                       EXPECT_EQ(n.nvmlDeviceGetHandleByIndex_v2(0, &d), NVML_ERROR_UNINITIALIZED);
                       EXPECT_EQ(n.nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
                       ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
                       ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);  // reference counted
                       d = n.handle(0);
                       EXPECT_EQ(n.nvmlShutdown(), NVML_SUCCESS);
                       EXPECT_EQ(n.nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
                       EXPECT_EQ(n.nvmlShutdown(), NVML_SUCCESS);
                       unsigned mhz = 0;
                       EXPECT_EQ(n.nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &mhz),
                                 NVML_ERROR_UNINITIALIZED);
                       EXPECT_EQ(n.nvmlDeviceSetGpuLockedClocks(d, 1200, 1200),
                                 NVML_ERROR_UNINITIALIZED);
                       EXPECT_STREQ(n.nvmlErrorString(NVML_ERROR_UNINITIALIZED), "Uninitialized");
                       EXPECT_STREQ(n.nvmlErrorString(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
                     }),
            0);
}

TEST_F(sim_abi_test, default_scenario_reads_like_an_idle_h100_node) {
  EXPECT_EQ(
      in_child(
          frozen("default", "0"),
          [](Nvml& n) {
            ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
            unsigned count = 0;
            ASSERT_EQ(n.nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
            ASSERT_EQ(count, 4u);
            char text[96];
            EXPECT_EQ(n.nvmlSystemGetDriverVersion(text, sizeof text), NVML_SUCCESS);
            EXPECT_STREQ(text, "580.159.04");
            EXPECT_EQ(n.nvmlSystemGetDriverVersion(text, 4), NVML_ERROR_INSUFFICIENT_SIZE);
            int cuda = 0;
            EXPECT_EQ(n.nvmlSystemGetCudaDriverVersion_v2(&cuda), NVML_SUCCESS);
            EXPECT_EQ(cuda, 13000);
            nvmlDevice_t d = n.handle(0);
            EXPECT_EQ(n.nvmlDeviceGetName(d, text, sizeof text), NVML_SUCCESS);
            EXPECT_STREQ(text, "NVIDIA H100 80GB HBM3");
            EXPECT_EQ(n.nvmlDeviceGetUUID(d, text, sizeof text), NVML_SUCCESS);
            EXPECT_STREQ(text, "GPU-cba78776-3017-caf5-5d64-a73aee97faac");
            nvmlDevice_t by_uuid = nullptr;
            EXPECT_EQ(n.nvmlDeviceGetHandleByUUID(text, &by_uuid), NVML_SUCCESS);
            EXPECT_EQ(by_uuid, d);
            EXPECT_EQ(n.nvmlDeviceGetHandleByUUID("GPU-nope", &by_uuid), NVML_ERROR_NOT_FOUND);
            nvmlPciInfo_t pci{};
            ASSERT_EQ(n.nvmlDeviceGetPciInfo_v3(n.handle(1), &pci), NVML_SUCCESS);
            EXPECT_STREQ(pci.busId, "00000000:2A:00.0");
            EXPECT_STREQ(pci.busIdLegacy, "0000:2A:00.0");
            EXPECT_EQ(pci.pciDeviceId, 0x233010DEu);
            nvmlDevice_t by_bus = nullptr;
            EXPECT_EQ(n.nvmlDeviceGetHandleByPciBusId_v2("0000:2a:00.0", &by_bus), NVML_SUCCESS);
            EXPECT_EQ(by_bus, n.handle(1));
            EXPECT_EQ(n.nvmlDeviceGetHandleByPciBusId_v2("2A:00.0", &by_bus), NVML_SUCCESS);
            EXPECT_EQ(n.nvmlDeviceGetHandleByPciBusId_v2("00000000:77:00.0", &by_bus),
                      NVML_ERROR_NOT_FOUND);
            EXPECT_EQ(n.nvmlDeviceGetHandleByPciBusId_v2("garbage", &by_bus),
                      NVML_ERROR_INVALID_ARGUMENT);
            EXPECT_EQ(n.nvmlDeviceGetHandleByIndex_v2(4, &by_bus), NVML_ERROR_INVALID_ARGUMENT);

            EXPECT_EQ(n.clock(d), 345u);
            EXPECT_EQ(n.clock(d, NVML_CLOCK_GRAPHICS), 345u);
            EXPECT_EQ(n.clock(d, NVML_CLOCK_MEM), 2619u);
            EXPECT_EQ(n.clock(d, NVML_CLOCK_VIDEO), 765u);
            unsigned v = 0, w = 0;
            EXPECT_EQ(n.nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_SM, &v), NVML_SUCCESS);
            EXPECT_EQ(v, 1980u);
            EXPECT_EQ(n.nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_VIDEO, &v), NVML_SUCCESS);
            EXPECT_EQ(v, 1545u);
            EXPECT_EQ(n.nvmlDeviceGetApplicationsClock(d, NVML_CLOCK_SM, &v), NVML_SUCCESS);
            EXPECT_EQ(v, 1980u);
            EXPECT_EQ(n.nvmlDeviceGetApplicationsClock(d, NVML_CLOCK_VIDEO, &v),
                      NVML_ERROR_NOT_SUPPORTED);
            EXPECT_EQ(n.nvmlDeviceGetDefaultApplicationsClock(d, NVML_CLOCK_MEM, &v), NVML_SUCCESS);
            EXPECT_EQ(v, 2619u);
            EXPECT_EQ(n.nvmlDeviceGetMaxCustomerBoostClock(d, NVML_CLOCK_GRAPHICS, &v),
                      NVML_SUCCESS);
            EXPECT_EQ(v, 1980u);
            EXPECT_EQ(n.nvmlDeviceGetMaxCustomerBoostClock(d, NVML_CLOCK_MEM, &v),
                      NVML_ERROR_NOT_SUPPORTED);
            unsigned clocks[128];
            unsigned n_clocks = 0;
            EXPECT_EQ(n.nvmlDeviceGetSupportedMemoryClocks(d, &n_clocks, nullptr),
                      NVML_ERROR_INSUFFICIENT_SIZE);
            EXPECT_EQ(n_clocks, 2u);
            EXPECT_EQ(n.nvmlDeviceGetSupportedMemoryClocks(d, &n_clocks, clocks), NVML_SUCCESS);
            EXPECT_EQ(clocks[0], 2619u);
            EXPECT_EQ(clocks[1], 1593u);
            n_clocks = 128;
            EXPECT_EQ(n.nvmlDeviceGetSupportedGraphicsClocks(d, 1593, &n_clocks, clocks),
                      NVML_SUCCESS);
            EXPECT_EQ(n_clocks, 110u);
            EXPECT_EQ(clocks[0], 1980u);
            EXPECT_EQ(clocks[109], 345u);
            n_clocks = 128;
            EXPECT_EQ(n.nvmlDeviceGetSupportedGraphicsClocks(d, 1000, &n_clocks, clocks),
                      NVML_ERROR_NOT_FOUND);
            EXPECT_EQ(n.nvmlDeviceGetMinMaxClockOfPState(d, NVML_CLOCK_SM, NVML_PSTATE_0, &v, &w),
                      NVML_SUCCESS);
            EXPECT_EQ(v, 345u);
            EXPECT_EQ(w, 1980u);
            nvmlPstates_t pstate = NVML_PSTATE_UNKNOWN;
            EXPECT_EQ(n.nvmlDeviceGetPerformanceState(d, &pstate), NVML_SUCCESS);
            EXPECT_EQ(pstate, NVML_PSTATE_0);
            unsigned long long reasons = 0;
            EXPECT_EQ(n.nvmlDeviceGetCurrentClocksEventReasons(d, &reasons), NVML_SUCCESS);
            EXPECT_EQ(reasons, nvmlClocksEventReasonGpuIdle);
            EXPECT_EQ(n.nvmlDeviceGetSupportedClocksEventReasons(d, &reasons), NVML_SUCCESS);
            EXPECT_EQ(reasons, 0x1ffull);
            nvmlViolationTime_t violation{};
            EXPECT_EQ(n.nvmlDeviceGetViolationStatus(d, NVML_PERF_POLICY_POWER, &violation),
                      NVML_SUCCESS);
            EXPECT_EQ(violation.violationTime, 0ull);
            EXPECT_GT(violation.referenceTime, 1'600'000'000'000'000ull);  // µs since the epoch
            EXPECT_EQ(
                n.nvmlDeviceGetViolationStatus(d, static_cast<nvmlPerfPolicyType_t>(7), &violation),
                NVML_ERROR_INVALID_ARGUMENT);

            EXPECT_EQ(n.nvmlDeviceGetPowerUsage(d, &v), NVML_SUCCESS);
            EXPECT_NEAR(v, 75400, 1000);
            EXPECT_EQ(n.nvmlDeviceGetPowerManagementLimit(d, &v), NVML_SUCCESS);
            EXPECT_EQ(v, 700000u);
            EXPECT_EQ(n.nvmlDeviceGetEnforcedPowerLimit(d, &v), NVML_SUCCESS);
            EXPECT_EQ(v, 700000u);
            EXPECT_EQ(n.nvmlDeviceGetPowerManagementDefaultLimit(d, &v), NVML_SUCCESS);
            EXPECT_EQ(v, 700000u);
            EXPECT_EQ(n.nvmlDeviceGetPowerManagementLimitConstraints(d, &v, &w), NVML_SUCCESS);
            EXPECT_EQ(v, 200000u);
            EXPECT_EQ(w, 700000u);
            unsigned long long energy = 1;
            EXPECT_EQ(n.nvmlDeviceGetTotalEnergyConsumption(d, &energy), NVML_SUCCESS);
            EXPECT_EQ(energy, 0ull);  // t = 0
            EXPECT_EQ(n.nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
            EXPECT_EQ(v, 34u);
            const std::pair<nvmlTemperatureThresholds_t, unsigned> thresholds[] = {
                {NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, 95},
                {NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, 89},
                {NVML_TEMPERATURE_THRESHOLD_MEM_MAX, 95},
                {NVML_TEMPERATURE_THRESHOLD_GPU_MAX, 87}};
            for (auto [which, celsius] : thresholds) {
              EXPECT_EQ(n.nvmlDeviceGetTemperatureThreshold(d, which, &v), NVML_SUCCESS);
              EXPECT_EQ(v, celsius);
            }
            EXPECT_EQ(
                n.nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MIN, &v),
                NVML_ERROR_NOT_SUPPORTED);
            EXPECT_EQ(n.nvmlDeviceGetFanSpeed(d, &v), NVML_ERROR_NOT_SUPPORTED);
            nvmlUtilization_t util{9, 9};
            EXPECT_EQ(n.nvmlDeviceGetUtilizationRates(d, &util), NVML_SUCCESS);
            EXPECT_EQ(util.gpu, 0u);
            EXPECT_EQ(util.memory, 0u);
            nvmlMemory_t memory{};
            EXPECT_EQ(n.nvmlDeviceGetMemoryInfo(d, &memory), NVML_SUCCESS);
            EXPECT_EQ(memory.total, 85520809984ull);
            EXPECT_EQ(memory.used, 503316480ull);
            EXPECT_EQ(memory.free + memory.used, memory.total);
            nvmlEnableState_t mode = NVML_FEATURE_DISABLED, pending = NVML_FEATURE_DISABLED;
            EXPECT_EQ(n.nvmlDeviceGetPersistenceMode(d, &mode), NVML_SUCCESS);
            EXPECT_EQ(mode, NVML_FEATURE_ENABLED);
            EXPECT_EQ(n.nvmlDeviceGetEccMode(d, &mode, &pending), NVML_SUCCESS);
            EXPECT_EQ(n.nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED,
                                                    NVML_VOLATILE_ECC, &energy),
                      NVML_SUCCESS);
            nvmlComputeMode_t compute = NVML_COMPUTEMODE_PROHIBITED;
            EXPECT_EQ(n.nvmlDeviceGetComputeMode(d, &compute), NVML_SUCCESS);
            EXPECT_EQ(compute, NVML_COMPUTEMODE_DEFAULT);
            nvmlDeviceArchitecture_t arch = 0;
            EXPECT_EQ(n.nvmlDeviceGetArchitecture(d, &arch), NVML_SUCCESS);
            EXPECT_EQ(arch, NVML_DEVICE_ARCH_HOPPER);
            int major = 0, minor = 0;
            EXPECT_EQ(n.nvmlDeviceGetCudaComputeCapability(d, &major, &minor), NVML_SUCCESS);
            EXPECT_EQ(major * 10 + minor, 90);
            EXPECT_EQ(n.nvmlDeviceGetNumGpuCores(d, &v), NVML_SUCCESS);
            EXPECT_EQ(v, 16896u);
            EXPECT_EQ(n.nvmlDeviceGetMemoryBusWidth(d, &v), NVML_SUCCESS);
            EXPECT_EQ(v, 5120u);
            for (auto getter :
                 {n.nvmlDeviceGetCurrPcieLinkGeneration, n.nvmlDeviceGetMaxPcieLinkGeneration,
                  n.nvmlDeviceGetGpuMaxPcieLinkGeneration}) {
              EXPECT_EQ(getter(d, &v), NVML_SUCCESS);
              EXPECT_EQ(v, 5u);
            }
            EXPECT_EQ(n.nvmlDeviceGetCurrPcieLinkWidth(d, &v), NVML_SUCCESS);
            EXPECT_EQ(v, 16u);
            EXPECT_EQ(n.nvmlDeviceGetPcieThroughput(d, NVML_PCIE_UTIL_RX_BYTES, &v), NVML_SUCCESS);
            nvmlGpuTopologyLevel_t level{};
            EXPECT_EQ(n.nvmlDeviceGetTopologyCommonAncestor(d, n.handle(1), &level), NVML_SUCCESS);
            EXPECT_EQ(level, NVML_TOPOLOGY_SINGLE);
            EXPECT_EQ(n.nvmlDeviceGetTopologyCommonAncestor(d, n.handle(2), &level), NVML_SUCCESS);
            EXPECT_EQ(level, NVML_TOPOLOGY_SYSTEM);  // other NUMA node
            EXPECT_EQ(n.nvmlDeviceGetNvLinkState(d, 17, &mode), NVML_SUCCESS);
            EXPECT_EQ(n.nvmlDeviceGetNvLinkState(d, 18, &mode), NVML_ERROR_INVALID_ARGUMENT);
            EXPECT_EQ(n.nvmlDeviceGetNvLinkRemotePciInfo_v2(d, 0, &pci), NVML_SUCCESS);
            unsigned long cpus[4] = {};
            EXPECT_EQ(n.nvmlDeviceGetCpuAffinity(n.handle(3), 4, cpus), NVML_SUCCESS);
            EXPECT_EQ(cpus[0], 0xffffffff00000000ul);  // CPUs 32–63: NUMA node 1
            EXPECT_EQ(n.nvmlDeviceGetNumaNodeId(n.handle(3), &v), NVML_SUCCESS);
            EXPECT_EQ(v, 1u);
            unsigned n_procs = 0;
            EXPECT_EQ(n.nvmlDeviceGetComputeRunningProcesses_v3(d, &n_procs, nullptr),
                      NVML_SUCCESS);
            EXPECT_EQ(n_procs, 0u);

            nvmlFieldValue_t fields[3] = {};
            fields[0].fieldId = NVML_FI_DEV_POWER_INSTANT;
            fields[1].fieldId = NVML_FI_DEV_POWER_AVERAGE;
            fields[2].fieldId = 9999;
            EXPECT_EQ(n.nvmlDeviceGetFieldValues(d, 3, fields), NVML_SUCCESS);
            EXPECT_EQ(fields[0].nvmlReturn, NVML_SUCCESS);
            EXPECT_EQ(fields[0].valueType, NVML_VALUE_TYPE_UNSIGNED_INT);
            EXPECT_NEAR(fields[0].value.uiVal, 75400, 1000);
            EXPECT_EQ(fields[1].nvmlReturn, NVML_SUCCESS);
            EXPECT_EQ(fields[2].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);

            // Null outputs and foreign handles.
            EXPECT_EQ(n.nvmlDeviceGetPowerUsage(d, nullptr), NVML_ERROR_INVALID_ARGUMENT);
            int not_a_gpu = 0;
            EXPECT_EQ(n.nvmlDeviceGetPowerUsage(reinterpret_cast<nvmlDevice_t>(&not_a_gpu), &v),
                      NVML_ERROR_INVALID_ARGUMENT);
            EXPECT_EQ(n.nvmlShutdown(), NVML_SUCCESS);
          }),
      0);
}

// The signatures of nvml_abi.h's list, for calling the library's exports directly.
using Bar1MemoryFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlBAR1Memory_t*);
using MemoryUsageFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using EngineUtilizationFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*);

TEST_F(sim_abi_test, entry_points_looked_up_by_name_answer_like_an_h100) {
  EXPECT_EQ(
      in_child(frozen("default", "0"),
               [](Nvml& n) {
                 ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
                 void* self = dlopen(library().c_str(), RTLD_NOW | RTLD_NOLOAD);
                 ASSERT_NE(self, nullptr);
                 auto bar1 =
                     reinterpret_cast<Bar1MemoryFn>(dlsym(self, "nvmlDeviceGetBAR1MemoryInfo"));
                 auto protected_memory = reinterpret_cast<MemoryUsageFn>(
                     dlsym(self, "nvmlDeviceGetConfComputeProtectedMemoryUsage"));
                 ASSERT_NE(bar1, nullptr);
                 ASSERT_NE(protected_memory, nullptr);
                 nvmlBAR1Memory_t b{};
                 EXPECT_EQ(bar1(n.handle(0), &b), NVML_SUCCESS);
                 EXPECT_EQ(b.bar1Total, 131072ull << 20);
                 EXPECT_EQ(b.bar1Used, 1ull << 20);
                 nvmlMemory_t m{1, 1, 1};
                 EXPECT_EQ(protected_memory(n.handle(0), &m), NVML_SUCCESS);
                 EXPECT_EQ(m.total, 0ull);
                 for (const char* name :
                      {"nvmlDeviceGetEncoderUtilization", "nvmlDeviceGetDecoderUtilization",
                       "nvmlDeviceGetJpgUtilization", "nvmlDeviceGetOfaUtilization"}) {
                   auto engine = reinterpret_cast<EngineUtilizationFn>(dlsym(self, name));
                   ASSERT_NE(engine, nullptr) << name;
                   unsigned percent = 9, period = 0;
                   EXPECT_EQ(engine(n.handle(1), &percent, &period), NVML_SUCCESS) << name;
                   EXPECT_EQ(percent, 0u);
                   EXPECT_GT(period, 0u);
                 }
                 nvmlFieldValue_t f[2] = {};
                 f[0].fieldId = NVML_FI_DEV_PCIE_REPLAY_COUNTER;
                 f[1].fieldId = NVML_FI_DEV_MEMORY_TEMP;
                 EXPECT_EQ(n.nvmlDeviceGetFieldValues(n.handle(0), 2, f), NVML_SUCCESS);
                 EXPECT_EQ(f[0].nvmlReturn, NVML_SUCCESS);
                 EXPECT_EQ(f[0].value.ullVal, 0ull);
                 EXPECT_EQ(f[1].value.uiVal, 36u);  // smi_q.txt: memory 36 °C beside a 33 °C GPU
                 n.nvmlShutdown();
               }),
      0);
}

TEST_F(sim_abi_test, busy_gpu_reads_follow_the_workload) {
  // default.toml at t = 45 s: the training loop runs.
  EXPECT_EQ(in_child(frozen("default", "45"),
                     [](Nvml& n) {
                       ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
                       nvmlDevice_t d = n.handle(0);
                       unsigned n_procs = 4;
                       nvmlProcessInfo_t procs[4];
                       EXPECT_EQ(n.nvmlDeviceGetComputeRunningProcesses_v3(d, &n_procs, procs),
                                 NVML_SUCCESS);
                       ASSERT_EQ(n_procs, 1u);
                       EXPECT_EQ(procs[0].pid, 41000u);
                       unsigned too_few = 0;
                       EXPECT_EQ(n.nvmlDeviceGetComputeRunningProcesses_v3(d, &too_few, procs),
                                 NVML_ERROR_INSUFFICIENT_SIZE);
                       EXPECT_EQ(too_few, 1u);
                       unsigned long long energy = 0;
                       EXPECT_EQ(n.nvmlDeviceGetTotalEnergyConsumption(d, &energy), NVML_SUCCESS);
                       EXPECT_GT(energy, 45ull * 75 * 1000);
                       EXPECT_NEAR(static_cast<double>(energy) / 1000.0, n.energy(0), 1.0);

                       // GPM over 3 simulated seconds of the loop.
                       nvmlGpmSupport_t support{NVML_GPM_SUPPORT_VERSION, 0};
                       EXPECT_EQ(n.nvmlGpmQueryDeviceSupport(d, &support), NVML_SUCCESS);
                       EXPECT_EQ(support.isSupportedDevice, 1u);
                       nvmlGpmSample_t a = nullptr, b = nullptr;
                       ASSERT_EQ(n.nvmlGpmSampleAlloc(&a), NVML_SUCCESS);
                       ASSERT_EQ(n.nvmlGpmSampleAlloc(&b), NVML_SUCCESS);
                       ASSERT_EQ(n.nvmlGpmSampleGet(d, a), NVML_SUCCESS);
                       ASSERT_EQ(n.advance(3.0), 0);
                       ASSERT_EQ(n.nvmlGpmSampleGet(d, b), NVML_SUCCESS);
                       nvmlGpmMetricsGet_t m{};
                       m.version = NVML_GPM_METRICS_GET_VERSION;
                       m.numMetrics = 3;
                       m.sample1 = a;
                       m.sample2 = b;
                       m.metrics[0].metricId = NVML_GPM_METRIC_SM_UTIL;
                       m.metrics[1].metricId = NVML_GPM_METRIC_ANY_TENSOR_UTIL;
                       m.metrics[2].metricId = 97;
                       ASSERT_EQ(n.nvmlGpmMetricsGet(&m), NVML_SUCCESS);
                       EXPECT_EQ(m.metrics[0].nvmlReturn, NVML_SUCCESS);
                       EXPECT_GT(m.metrics[0].value, 30);
                       EXPECT_LT(m.metrics[0].value, 90);  // idle gaps in the loop
                       EXPECT_GT(m.metrics[1].value, 20);
                       EXPECT_EQ(m.metrics[2].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
                       // Two samples of one tick: no value, not an error (as the H100).
                       m.sample1 = b;
                       m.sample2 = b;
                       ASSERT_EQ(n.nvmlGpmMetricsGet(&m), NVML_SUCCESS);
                       EXPECT_TRUE(std::isnan(m.metrics[0].value));
                       m.sample1 = b;
                       m.sample2 = a;
                       EXPECT_EQ(n.nvmlGpmMetricsGet(&m),
                                 NVML_ERROR_INVALID_ARGUMENT);  // out of order
                       m.version = 99;
                       EXPECT_EQ(n.nvmlGpmMetricsGet(&m), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
                       EXPECT_EQ(n.nvmlGpmSampleFree(a), NVML_SUCCESS);
                       EXPECT_EQ(n.nvmlGpmSampleFree(b), NVML_SUCCESS);
                       n.nvmlShutdown();
                     }),
            0);
}

TEST_F(sim_abi_test, simulated_time_runs_at_the_requested_speed) {
  EXPECT_EQ(in_child({{"GPUCLK_SIM_SCENARIO", "default"}, {"GPUCLK_SIM_SPEED", "50"}},
                     [](Nvml& n) {
                       ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
                       EXPECT_EQ(n.time_scale(), 50.0);
                       const double t0 = n.time();
                       ::usleep(200'000);
                       const double t1 = n.time();
                       EXPECT_NEAR(t1 - t0, 10.0, 3.0);
                       n.nvmlShutdown();
                     }),
            0);
}

}  // namespace
}  // namespace gpuclk::sim::testing
