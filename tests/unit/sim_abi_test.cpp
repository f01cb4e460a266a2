// libnvml-sim.so through dlopen, as gpuclk uses it: return codes of every entry point, writes
// shared across processes, faults, privileges. Each case runs in a forked child (the library
// keeps one scenario per process); the child's gtest failures become its exit status.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "../../sim/abi/gpuclk_sim.h"
#include "nvml/nvml_abi.h"

namespace {

namespace fs = std::filesystem;

// Every NVML entry point and helper, resolved with dlsym.
struct Nvml {
#define GPUCLK_TEST_POINTER(name, params, args) nvmlReturn_t(*name) params = nullptr;
  GPUCLK_NVML_ALL(GPUCLK_TEST_POINTER)
#undef GPUCLK_TEST_POINTER
  const char* (*nvmlErrorString)(nvmlReturn_t) = nullptr;
  double (*time_scale)() = nullptr;
  double (*time)() = nullptr;
  int (*advance)(double) = nullptr;
  int (*truth)(unsigned, gpuclk_sim_gpu_truth_t*) = nullptr;
  double (*energy)(unsigned) = nullptr;

  explicit Nvml(void* lib) {
#define GPUCLK_TEST_RESOLVE(name, params, args) \
  name = reinterpret_cast<decltype(name)>(dlsym(lib, #name));                                      \
  EXPECT_NE(name, nullptr) << #name;
    GPUCLK_NVML_ALL(GPUCLK_TEST_RESOLVE)
#undef GPUCLK_TEST_RESOLVE
    nvmlErrorString = reinterpret_cast<decltype(nvmlErrorString)>(dlsym(lib, "nvmlErrorString"));
    time_scale = reinterpret_cast<decltype(time_scale)>(dlsym(lib, "gpuclk_sim_time_scale"));
    time = reinterpret_cast<decltype(time)>(dlsym(lib, "gpuclk_sim_time"));
    advance = reinterpret_cast<decltype(advance)>(dlsym(lib, "gpuclk_sim_advance"));
    truth = reinterpret_cast<decltype(truth)>(dlsym(lib, "gpuclk_sim_gpu_truth"));
    energy = reinterpret_cast<decltype(energy)>(dlsym(lib, "gpuclk_sim_energy_joules"));
  }

  nvmlDevice_t handle(unsigned index) {
    nvmlDevice_t device = nullptr;
    EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(index, &device), NVML_SUCCESS);
    return device;
  }
  unsigned clock(nvmlDevice_t d, nvmlClockType_t type = NVML_CLOCK_SM) {
    unsigned v = 0;
    EXPECT_EQ(nvmlDeviceGetClockInfo(d, type, &v), NVML_SUCCESS);
    return v;
  }
};

class sim_abi_test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(library())) GTEST_SKIP() << library() << " is not built (cmake --build … --target nvml_sim)";
    dir_ = fs::temp_directory_path() / ("gpuclk-sim-abi-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Runs body in a child process with these environment variables and a fresh library.
  int in_child(const std::map<std::string, std::string>& env, const std::function<void(Nvml&)>& body) {
    std::fflush(stdout);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("GPUCLK_SIM_STATE", (dir_ / "sim.state").c_str(), 1);
      ::setenv("GPUCLK_SIM_SCENARIO_DIR", (fs::path(GPUCLK_SOURCE_DIR) / "sim" / "scenarios").c_str(), 1);
      ::unsetenv("GPUCLK_SIM_SPEED");
      ::unsetenv("GPUCLK_SIM_START");
      ::unsetenv("GPUCLK_SIM_SCENARIO");
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      void* lib = dlopen(library().c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!lib) {
        std::fprintf(stderr, "dlopen: %s\n", dlerror());
        std::_Exit(3);
      }
      Nvml nvml(lib);
      body(nvml);
      std::fflush(stdout);
      std::_Exit(::testing::Test::HasFailure() ? 1 : 0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  static std::string library() { return std::string(GPUCLK_BINARY_DIR) + "/libnvml-sim.so"; }

  fs::path dir_;
};

// Frozen time at t: deterministic readings.
std::map<std::string, std::string> frozen(const char* scenario, const char* t) {
  return {{"GPUCLK_SIM_SCENARIO", scenario}, {"GPUCLK_SIM_SPEED", "0"}, {"GPUCLK_SIM_START", t}};
}

TEST_F(sim_abi_test, calls_before_init_and_after_shutdown_are_uninitialized) {
  EXPECT_EQ(in_child(frozen("default", "0"), [](Nvml& n) {
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
    EXPECT_EQ(n.nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &mhz), NVML_ERROR_UNINITIALIZED);
    EXPECT_EQ(n.nvmlDeviceSetGpuLockedClocks(d, 1200, 1200), NVML_ERROR_UNINITIALIZED);
    EXPECT_STREQ(n.nvmlErrorString(NVML_ERROR_UNINITIALIZED), "Uninitialized");
    EXPECT_STREQ(n.nvmlErrorString(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
  }), 0);
}

TEST_F(sim_abi_test, default_scenario_reads_like_an_idle_h100_node) {
  EXPECT_EQ(in_child(frozen("default", "0"), [](Nvml& n) {
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
    EXPECT_EQ(n.nvmlDeviceGetHandleByPciBusId_v2("00000000:77:00.0", &by_bus), NVML_ERROR_NOT_FOUND);
    EXPECT_EQ(n.nvmlDeviceGetHandleByPciBusId_v2("garbage", &by_bus), NVML_ERROR_INVALID_ARGUMENT);
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
    EXPECT_EQ(n.nvmlDeviceGetApplicationsClock(d, NVML_CLOCK_VIDEO, &v), NVML_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(n.nvmlDeviceGetDefaultApplicationsClock(d, NVML_CLOCK_MEM, &v), NVML_SUCCESS);
    EXPECT_EQ(v, 2619u);
    EXPECT_EQ(n.nvmlDeviceGetMaxCustomerBoostClock(d, NVML_CLOCK_GRAPHICS, &v), NVML_SUCCESS);
    EXPECT_EQ(v, 1980u);
    EXPECT_EQ(n.nvmlDeviceGetMaxCustomerBoostClock(d, NVML_CLOCK_MEM, &v), NVML_ERROR_NOT_SUPPORTED);
    unsigned clocks[128];
    unsigned n_clocks = 0;
    EXPECT_EQ(n.nvmlDeviceGetSupportedMemoryClocks(d, &n_clocks, nullptr), NVML_ERROR_INSUFFICIENT_SIZE);
    EXPECT_EQ(n_clocks, 2u);
    EXPECT_EQ(n.nvmlDeviceGetSupportedMemoryClocks(d, &n_clocks, clocks), NVML_SUCCESS);
    EXPECT_EQ(clocks[0], 2619u);
    EXPECT_EQ(clocks[1], 1593u);
    n_clocks = 128;
    EXPECT_EQ(n.nvmlDeviceGetSupportedGraphicsClocks(d, 1593, &n_clocks, clocks), NVML_SUCCESS);
    EXPECT_EQ(n_clocks, 110u);
    EXPECT_EQ(clocks[0], 1980u);
    EXPECT_EQ(clocks[109], 345u);
    n_clocks = 128;
    EXPECT_EQ(n.nvmlDeviceGetSupportedGraphicsClocks(d, 1000, &n_clocks, clocks), NVML_ERROR_NOT_FOUND);
    EXPECT_EQ(n.nvmlDeviceGetMinMaxClockOfPState(d, NVML_CLOCK_SM, NVML_PSTATE_0, &v, &w), NVML_SUCCESS);
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
    EXPECT_EQ(n.nvmlDeviceGetViolationStatus(d, NVML_PERF_POLICY_POWER, &violation), NVML_SUCCESS);
    EXPECT_EQ(violation.violationTime, 0ull);
    EXPECT_GT(violation.referenceTime, 1'600'000'000'000'000ull);  // µs since the epoch
    EXPECT_EQ(n.nvmlDeviceGetViolationStatus(d, static_cast<nvmlPerfPolicyType_t>(7), &violation),
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
        {NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, 95}, {NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, 89},
        {NVML_TEMPERATURE_THRESHOLD_MEM_MAX, 95}, {NVML_TEMPERATURE_THRESHOLD_GPU_MAX, 87}};
    for (auto [which, celsius] : thresholds) {
      EXPECT_EQ(n.nvmlDeviceGetTemperatureThreshold(d, which, &v), NVML_SUCCESS);
      EXPECT_EQ(v, celsius);
    }
    EXPECT_EQ(n.nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MIN, &v),
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
    EXPECT_EQ(n.nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &energy), NVML_SUCCESS);
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
    for (auto getter : {n.nvmlDeviceGetCurrPcieLinkGeneration, n.nvmlDeviceGetMaxPcieLinkGeneration,
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
    EXPECT_EQ(n.nvmlDeviceGetComputeRunningProcesses_v3(d, &n_procs, nullptr), NVML_SUCCESS);
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
    EXPECT_EQ(n.nvmlDeviceGetPowerUsage(reinterpret_cast<nvmlDevice_t>(&not_a_gpu), &v), NVML_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(n.nvmlShutdown(), NVML_SUCCESS);
  }), 0);
}

TEST_F(sim_abi_test, entry_points_looked_up_by_name_answer_like_an_h100) {
  EXPECT_EQ(in_child(frozen("default", "0"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    void* self = dlopen(library().c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(self, nullptr);
    auto bar1 = reinterpret_cast<gpuclk_nvml_bar1_memory_fn>(dlsym(self, "nvmlDeviceGetBAR1MemoryInfo"));
    auto protected_memory =
        reinterpret_cast<gpuclk_nvml_memory_usage_fn>(dlsym(self, "nvmlDeviceGetConfComputeProtectedMemoryUsage"));
    ASSERT_NE(bar1, nullptr);
    ASSERT_NE(protected_memory, nullptr);
    nvmlBAR1Memory_t b{};
    EXPECT_EQ(bar1(n.handle(0), &b), NVML_SUCCESS);
    EXPECT_EQ(b.bar1Total, 131072ull << 20);
    EXPECT_EQ(b.bar1Used, 1ull << 20);
    nvmlMemory_t m{1, 1, 1};
    EXPECT_EQ(protected_memory(n.handle(0), &m), NVML_SUCCESS);
    EXPECT_EQ(m.total, 0ull);
    for (const char* name : {"nvmlDeviceGetEncoderUtilization", "nvmlDeviceGetDecoderUtilization",
                             "nvmlDeviceGetJpgUtilization", "nvmlDeviceGetOfaUtilization"}) {
      auto engine = reinterpret_cast<gpuclk_nvml_engine_utilization_fn>(dlsym(self, name));
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
  }), 0);
}

TEST_F(sim_abi_test, busy_gpu_reads_follow_the_workload) {
  // default.toml at t = 45 s: the training loop runs.
  EXPECT_EQ(in_child(frozen("default", "45"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    nvmlDevice_t d = n.handle(0);
    unsigned n_procs = 4;
    nvmlProcessInfo_t procs[4];
    EXPECT_EQ(n.nvmlDeviceGetComputeRunningProcesses_v3(d, &n_procs, procs), NVML_SUCCESS);
    ASSERT_EQ(n_procs, 1u);
    EXPECT_EQ(procs[0].pid, 41000u);
    unsigned too_few = 0;
    EXPECT_EQ(n.nvmlDeviceGetComputeRunningProcesses_v3(d, &too_few, procs), NVML_ERROR_INSUFFICIENT_SIZE);
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
    m.sample1 = b;
    m.sample2 = a;
    EXPECT_EQ(n.nvmlGpmMetricsGet(&m), NVML_ERROR_INVALID_ARGUMENT);  // out of order
    m.version = 99;
    EXPECT_EQ(n.nvmlGpmMetricsGet(&m), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    EXPECT_EQ(n.nvmlGpmSampleFree(a), NVML_SUCCESS);
    EXPECT_EQ(n.nvmlGpmSampleFree(b), NVML_SUCCESS);
    n.nvmlShutdown();
  }), 0);
}

TEST_F(sim_abi_test, a_lock_set_by_one_process_holds_for_the_next) {
  const auto env = frozen("default", "45");
  EXPECT_EQ(in_child(env, [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    EXPECT_EQ(n.nvmlDeviceSetGpuLockedClocks(n.handle(1), 1200, 1200), NVML_SUCCESS);
    EXPECT_EQ(n.nvmlDeviceSetApplicationsClocks(n.handle(2), 1593, 1500), NVML_SUCCESS);
    EXPECT_EQ(n.nvmlDeviceSetPowerManagementLimit(n.handle(3), 300000), NVML_SUCCESS);
    EXPECT_EQ(n.nvmlDeviceSetPersistenceMode(n.handle(0), NVML_FEATURE_DISABLED), NVML_SUCCESS);
    n.nvmlShutdown();
  }), 0);
  EXPECT_EQ(in_child(env, [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    ASSERT_EQ(n.advance(2.0), 0);  // the next steps run under the new settings
    unsigned v = 0;
    gpuclk_sim_gpu_truth_t truth{};
    ASSERT_EQ(n.truth(1, &truth), 0);
    if (truth.context_active) {
      EXPECT_EQ(n.clock(n.handle(1)), 1200u);
    }
    EXPECT_EQ(n.nvmlDeviceGetApplicationsClock(n.handle(2), NVML_CLOCK_SM, &v), NVML_SUCCESS);
    EXPECT_EQ(v, 1500u);
    EXPECT_EQ(n.clock(n.handle(2), NVML_CLOCK_MEM), 1593u);
    EXPECT_EQ(n.nvmlDeviceGetPowerManagementLimit(n.handle(3), &v), NVML_SUCCESS);
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
  }), 0);
  EXPECT_EQ(in_child(env, [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    unsigned v = 0;
    EXPECT_EQ(n.nvmlDeviceGetApplicationsClock(n.handle(2), NVML_CLOCK_SM, &v), NVML_SUCCESS);
    EXPECT_EQ(v, 1980u);
    n.nvmlShutdown();
  }), 0);
}

TEST_F(sim_abi_test, concurrent_writers_lose_no_update) {
  const auto env = frozen("8xh100", "10");
  auto writer = [&](unsigned first) {
    return in_child(env, [first](Nvml& n) {
      ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
      for (int round = 0; round < 20; ++round) {
        for (unsigned i = first; i < 8; i += 2) {
          EXPECT_EQ(n.nvmlDeviceSetPowerManagementLimit(n.handle(i), 300000 + 1000 * round + i), NVML_SUCCESS);
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
  EXPECT_EQ(in_child(env, [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    for (unsigned i = 0; i < 8; ++i) {
      unsigned v = 0;
      EXPECT_EQ(n.nvmlDeviceGetPowerManagementLimit(n.handle(i), &v), NVML_SUCCESS);
      EXPECT_EQ(v, 300000u + 19000u + i) << "GPU " << i;
    }
  }), 0);
}

TEST_F(sim_abi_test, writes_refuse_what_the_driver_refuses) {
  EXPECT_EQ(in_child(frozen("default", "0"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    nvmlDevice_t d = n.handle(0);
    EXPECT_EQ(n.nvmlDeviceSetGpuLockedClocks(d, 1500, 1200), NVML_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(n.nvmlDeviceSetGpuLockedClocks(d, 1200, 2500), NVML_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(n.nvmlDeviceSetGpuLockedClocks(d, 1401, 1404), NVML_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(n.nvmlDeviceSetGpuLockedClocks(d, NVML_CLOCK_LIMIT_ID_TDP, NVML_CLOCK_LIMIT_ID_TDP), NVML_SUCCESS);
    EXPECT_EQ(n.nvmlDeviceSetApplicationsClocks(d, 2619, 1411), NVML_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(n.nvmlDeviceSetApplicationsClocks(d, 3000, 1410), NVML_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(n.nvmlDeviceSetMemoryLockedClocks(d, 1593, 2619), NVML_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(n.nvmlDeviceResetMemoryLockedClocks(d), NVML_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(n.nvmlDeviceSetPowerManagementLimit(d, 100000), NVML_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(n.nvmlDeviceSetPowerManagementLimit(d, 800000), NVML_ERROR_INVALID_ARGUMENT);
    nvmlEnableState_t bad_mode{};
    const int seven = 7;  // not a value of the enum: what a C caller can pass
    std::memcpy(&bad_mode, &seven, sizeof bad_mode);
    EXPECT_EQ(n.nvmlDeviceSetPersistenceMode(d, bad_mode), NVML_ERROR_INVALID_ARGUMENT);
    int not_a_gpu = 0;
    EXPECT_EQ(n.nvmlDeviceSetPowerManagementLimit(reinterpret_cast<nvmlDevice_t>(&not_a_gpu), 300000),
              NVML_ERROR_INVALID_ARGUMENT);
    n.nvmlShutdown();
  }), 0);
}

TEST_F(sim_abi_test, unprivileged_scenario_reads_but_may_not_write) {
  EXPECT_EQ(in_child(frozen("unprivileged", "20"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    nvmlDevice_t d = n.handle(0);
    unsigned v = 0;
    EXPECT_EQ(n.nvmlDeviceGetPowerUsage(d, &v), NVML_SUCCESS);
    EXPECT_EQ(n.nvmlDeviceSetGpuLockedClocks(d, 1200, 1200), NVML_ERROR_NO_PERMISSION);
    EXPECT_EQ(n.nvmlDeviceResetGpuLockedClocks(d), NVML_ERROR_NO_PERMISSION);
    EXPECT_EQ(n.nvmlDeviceSetApplicationsClocks(d, 2619, 1410), NVML_ERROR_NO_PERMISSION);
    EXPECT_EQ(n.nvmlDeviceResetApplicationsClocks(d), NVML_ERROR_NO_PERMISSION);
    EXPECT_EQ(n.nvmlDeviceSetPowerManagementLimit(d, 300000), NVML_ERROR_NO_PERMISSION);
    EXPECT_EQ(n.nvmlDeviceSetPersistenceMode(d, NVML_FEATURE_DISABLED), NVML_ERROR_NO_PERMISSION);
    EXPECT_EQ(n.nvmlDeviceSetMemoryLockedClocks(d, 1593, 1593), NVML_ERROR_NOT_SUPPORTED);
    n.nvmlShutdown();
  }), 0);
}

TEST_F(sim_abi_test, driver_not_loaded_fails_init) {
  EXPECT_EQ(in_child(frozen("no-driver", "0"), [](Nvml& n) {
    EXPECT_EQ(n.nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
    unsigned count = 0;
    EXPECT_EQ(n.nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
  }), 0);
}

TEST_F(sim_abi_test, unknown_scenario_fails_init_with_a_message) {
  EXPECT_EQ(in_child(frozen("no-such-scenario", "0"), [](Nvml& n) {
    EXPECT_EQ(n.nvmlInit_v2(), NVML_ERROR_UNKNOWN);
    EXPECT_TRUE(std::isnan(n.time()));
  }), 0);
}

TEST_F(sim_abi_test, gpu_lost_at_its_time) {
  EXPECT_EQ(in_child(frozen("faults", "59.5"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    nvmlDevice_t lost = n.handle(2);
    unsigned v = 0;
    EXPECT_EQ(n.nvmlDeviceGetPowerUsage(lost, &v), NVML_SUCCESS);
    ASSERT_EQ(n.advance(1.0), 0);
    EXPECT_EQ(n.nvmlDeviceGetPowerUsage(lost, &v), NVML_ERROR_GPU_IS_LOST);
    EXPECT_EQ(n.nvmlDeviceGetName(lost, nullptr, 0), NVML_ERROR_GPU_IS_LOST);
    EXPECT_EQ(n.nvmlDeviceSetGpuLockedClocks(lost, 1200, 1200), NVML_ERROR_GPU_IS_LOST);
    nvmlDevice_t again = nullptr;
    EXPECT_EQ(n.nvmlDeviceGetHandleByIndex_v2(2, &again), NVML_ERROR_GPU_IS_LOST);
    unsigned count = 0;
    EXPECT_EQ(n.nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
    EXPECT_EQ(count, 4u);
    EXPECT_EQ(n.nvmlDeviceGetPowerUsage(n.handle(0), &v), NVML_SUCCESS);  // the others carry on
    n.nvmlShutdown();
  }), 0);
}

TEST_F(sim_abi_test, scheduled_and_transient_read_errors) {
  EXPECT_EQ(in_child(frozen("faults", "35"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    unsigned v = 0;
    EXPECT_EQ(n.nvmlDeviceGetPowerUsage(n.handle(3), &v), NVML_ERROR_TIMEOUT);
    EXPECT_EQ(n.nvmlDeviceGetTemperature(n.handle(3), NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
    unsigned long long corrected = 0;
    EXPECT_EQ(n.nvmlDeviceGetTotalEccErrors(n.handle(3), NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC,
                                            &corrected), NVML_SUCCESS);
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
    for (int i = 0; i < 200; ++i) EXPECT_EQ(n.nvmlDeviceGetName(n.handle(1), name, sizeof name), NVML_SUCCESS);
    ASSERT_EQ(n.advance(11.0), 0);
    EXPECT_EQ(n.nvmlDeviceGetPowerUsage(n.handle(3), &v), NVML_SUCCESS);  // window over
    n.nvmlShutdown();
  }), 0);
}

TEST_F(sim_abi_test, simulated_time_runs_at_the_requested_speed) {
  EXPECT_EQ(in_child({{"GPUCLK_SIM_SCENARIO", "default"}, {"GPUCLK_SIM_SPEED", "50"}}, [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    EXPECT_EQ(n.time_scale(), 50.0);
    const double t0 = n.time();
    ::usleep(200'000);
    const double t1 = n.time();
    EXPECT_NEAR(t1 - t0, 10.0, 3.0);
    n.nvmlShutdown();
  }), 0);
}

}  // namespace
