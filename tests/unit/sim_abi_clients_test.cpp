// libnvml-sim.so as an NVML for other clients: every entry point of sim/abi/entry_points.txt
// resolves, the simulated H100 answers what a real H100 answered (sim_abi_h100_nvml.json: a
// recording of pynvml calls on the calibration card, driver 580.159.04: present vs
// NOT_SUPPORTED, and the static values equal), and the older layouts and names behave like
// the real library's.
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "entry_points.gen.h"
#include "sim_abi_fixture.h"

namespace gpuclk::sim::testing {
namespace {

using nlohmann::json;

class sim_abi_clients_test : public sim_abi_test {};

json recording() {
  std::ifstream in(std::string(GPUCLK_SOURCE_DIR) + "/tests/unit/sim_abi_h100_nvml.json");
  return json::parse(in);
}

// A recorded value: a number, or "ERR:Not Supported" for NVML_ERROR_NOT_SUPPORTED.
void expect_answer(const json& recorded, nvmlReturn_t status, unsigned long long value,
                   const std::string& key) {
  if (recorded.is_string()) {
    EXPECT_EQ(recorded.get<std::string>(), "ERR:Not Supported") << key;
    EXPECT_EQ(status, NVML_ERROR_NOT_SUPPORTED) << key;
    return;
  }
  ASSERT_EQ(status, NVML_SUCCESS) << key;
  EXPECT_EQ(value, recorded.get<unsigned long long>()) << key;
}

TEST_F(sim_abi_clients_test, every_listed_entry_point_resolves) {
  expect_passed(in_child({{"GPUCLK_SIM_SCENARIO", "default"}}, [](Nvml&) {
    for (const char* name : abi::kEntryPoints) {
      EXPECT_NE(dlsym(library_handle(), name), nullptr) << name;
    }
  }));
  EXPECT_GE(std::size(abi::kEntryPoints), 270u);
}

TEST_F(sim_abi_clients_test, h100_answers_what_the_calibration_card_answered) {
  expect_passed(in_child(frozen("h100-calibration", "0"), [](Nvml& n) {
    const json r = recording();
    // Every key read goes through these, so the end can tell which recorded keys no check
    // looked at.
    std::set<std::string> read;
    auto top = [&](const std::string& key) -> const json& {
      read.insert(key);
      return r.at(key);
    };
    auto gpu = [&](const std::string& key) -> const json& {
      read.insert("gpus/" + key);
      return r["gpus"][0].at(key);
    };
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    unsigned count = 0;
    ASSERT_EQ(n.nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
    EXPECT_EQ(count, top("count").get<unsigned>());
    char text[96];
    ASSERT_EQ(n.nvmlSystemGetDriverVersion(text, sizeof text), NVML_SUCCESS);
    EXPECT_EQ(std::string(text), top("driver").get<std::string>());
    ASSERT_EQ(n.nvmlSystemGetNVMLVersion(text, sizeof text), NVML_SUCCESS);
    EXPECT_EQ(std::string(text), top("nvml").get<std::string>());
    int cuda = 0;
    ASSERT_EQ(SIM_FN(nvmlSystemGetCudaDriverVersion)(&cuda), NVML_SUCCESS);
    EXPECT_EQ(cuda, top("cuda_driver").get<int>());

    nvmlDevice_t d = n.handle(0);
    ASSERT_EQ(n.nvmlDeviceGetName(d, text, sizeof text), NVML_SUCCESS);
    EXPECT_EQ(std::string(text), gpu("name").get<std::string>());
    ASSERT_EQ(n.nvmlDeviceGetUUID(d, text, sizeof text), NVML_SUCCESS);
    EXPECT_EQ(std::string(text), gpu("uuid").get<std::string>());
    nvmlPciInfo_t pci{};
    ASSERT_EQ(n.nvmlDeviceGetPciInfo_v3(d, &pci), NVML_SUCCESS);
    char pci_text[256];
    std::snprintf(pci_text, sizeof pci_text,
                  "nvmlPciInfo_t(busIdLegacy: %s, domain: 0x%08X, bus: 0x%02X, device: 0x%02X, "
                  "pciDeviceId: 0x%08X, pciSubSystemId: 0x%08X, busId: %s)",
                  pci.busIdLegacy, pci.domain, pci.bus, pci.device, pci.pciDeviceId,
                  pci.pciSubSystemId, pci.busId);
    EXPECT_EQ(std::string(pci_text), gpu("pci").get<std::string>());
    unsigned board = 0;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetBoardId)(d, &board), NVML_SUCCESS);
    EXPECT_EQ(board, 0x6u);  // nvidia-smi -q on the card: "Board ID : 0x6"
    ASSERT_EQ(SIM_FN(nvmlDeviceGetVbiosVersion)(d, text, sizeof text), NVML_SUCCESS);
    EXPECT_STREQ(text, "96.00.DA.00.0C");  // nvidia-smi -q: "VBIOS Version"

    // Clocks per domain, the way the recording names them; at t = 0 the card idles.
    const std::pair<const char*, nvmlClockType_t> domains[] = {{"sm", NVML_CLOCK_SM},
                                                               {"mem", NVML_CLOCK_MEM},
                                                               {"graphics", NVML_CLOCK_GRAPHICS},
                                                               {"video", NVML_CLOCK_VIDEO}};
    for (const auto& [label, type] : domains) {
      const std::string l(label);
      unsigned mhz = 0;
      nvmlReturn_t s = n.nvmlDeviceGetClockInfo(d, type, &mhz);
      expect_answer(gpu("clock_" + l), s, mhz, "clock_" + l);
      s = n.nvmlDeviceGetMaxClockInfo(d, type, &mhz);
      expect_answer(gpu("maxclock_" + l), s, mhz, "maxclock_" + l);
      s = n.nvmlDeviceGetApplicationsClock(d, type, &mhz);
      expect_answer(gpu("appclock_" + l), s, mhz, "appclock_" + l);
      s = n.nvmlDeviceGetDefaultApplicationsClock(d, type, &mhz);
      expect_answer(gpu("defappclock_" + l), s, mhz, "defappclock_" + l);
      s = n.nvmlDeviceGetMaxCustomerBoostClock(d, type, &mhz);
      expect_answer(gpu("maxcustomerboost_" + l), s, mhz, "maxcustomerboost_" + l);
    }
    unsigned clocks[256];
    unsigned n_clocks = 256;
    ASSERT_EQ(n.nvmlDeviceGetSupportedMemoryClocks(d, &n_clocks, clocks), NVML_SUCCESS);
    EXPECT_EQ(std::vector<unsigned>(clocks, clocks + n_clocks),
              gpu("supported_mem_clocks").get<std::vector<unsigned>>());
    for (const auto& [memory, expected] : gpu("supported_graphics_clocks").items()) {
      n_clocks = 256;
      ASSERT_EQ(n.nvmlDeviceGetSupportedGraphicsClocks(d, static_cast<unsigned>(std::stoul(memory)),
                                                       &n_clocks, clocks),
                NVML_SUCCESS);
      EXPECT_EQ(std::vector<unsigned>(clocks, clocks + n_clocks),
                expected.get<std::vector<unsigned>>())
          << memory;
    }
    unsigned lo = 0, hi = 0;
    ASSERT_EQ(n.nvmlDeviceGetMinMaxClockOfPState(d, NVML_CLOCK_SM, NVML_PSTATE_0, &lo, &hi),
              NVML_SUCCESS);
    EXPECT_EQ((std::vector<unsigned>{lo, hi}),
              gpu("min_max_clock_pstate0_sm").get<std::vector<unsigned>>());

    nvmlPstates_t pstate = NVML_PSTATE_UNKNOWN;
    ASSERT_EQ(n.nvmlDeviceGetPerformanceState(d, &pstate), NVML_SUCCESS);
    EXPECT_EQ(static_cast<int>(pstate), gpu("pstate").get<int>());
    nvmlEnableState_t mode = NVML_FEATURE_DISABLED, pending = NVML_FEATURE_DISABLED;
    ASSERT_EQ(n.nvmlDeviceGetPersistenceMode(d, &mode), NVML_SUCCESS);
    EXPECT_EQ(static_cast<int>(mode), gpu("persistence").get<int>());
    nvmlComputeMode_t compute = NVML_COMPUTEMODE_PROHIBITED;
    ASSERT_EQ(n.nvmlDeviceGetComputeMode(d, &compute), NVML_SUCCESS);
    EXPECT_EQ(static_cast<int>(compute), gpu("compute_mode").get<int>());
    ASSERT_EQ(n.nvmlDeviceGetEccMode(d, &mode, &pending), NVML_SUCCESS);
    EXPECT_EQ((std::vector<int>{mode, pending}), gpu("ecc").get<std::vector<int>>());
    unsigned mig[2] = {9, 9};
    ASSERT_EQ(SIM_FN(nvmlDeviceGetMigMode)(d, &mig[0], &mig[1]), NVML_SUCCESS);
    EXPECT_EQ((std::vector<unsigned>{mig[0], mig[1]}), gpu("mig").get<std::vector<unsigned>>());

    unsigned mw = 0, mw2 = 0;
    ASSERT_EQ(n.nvmlDeviceGetPowerManagementLimit(d, &mw), NVML_SUCCESS);
    EXPECT_EQ(mw, gpu("power_limit_mW").get<unsigned>());
    ASSERT_EQ(n.nvmlDeviceGetPowerManagementLimitConstraints(d, &mw, &mw2), NVML_SUCCESS);
    EXPECT_EQ((std::vector<unsigned>{mw, mw2}),
              gpu("power_limit_constraints_mW").get<std::vector<unsigned>>());
    ASSERT_EQ(n.nvmlDeviceGetPowerManagementDefaultLimit(d, &mw), NVML_SUCCESS);
    EXPECT_EQ(mw, gpu("power_default_mW").get<unsigned>());
    ASSERT_EQ(n.nvmlDeviceGetEnforcedPowerLimit(d, &mw), NVML_SUCCESS);
    EXPECT_EQ(mw, gpu("enforced_power_limit_mW").get<unsigned>());

    const std::pair<const char*, nvmlTemperatureThresholds_t> thresholds[] = {
        {"SHUTDOWN", NVML_TEMPERATURE_THRESHOLD_SHUTDOWN},
        {"SLOWDOWN", NVML_TEMPERATURE_THRESHOLD_SLOWDOWN},
        {"MEM_MAX", NVML_TEMPERATURE_THRESHOLD_MEM_MAX},
        {"GPU_MAX", NVML_TEMPERATURE_THRESHOLD_GPU_MAX},
        {"ACOUSTIC_MIN", NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MIN},
        {"ACOUSTIC_CURR", NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_CURR},
        {"ACOUSTIC_MAX", NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MAX}};
    for (const auto& [label, threshold] : thresholds) {
      unsigned c = 0;
      const nvmlReturn_t s = n.nvmlDeviceGetTemperatureThreshold(d, threshold, &c);
      expect_answer(gpu(std::string("temp_threshold_") + label), s, c, label);
    }

    nvmlMemory_t memory{};
    ASSERT_EQ(n.nvmlDeviceGetMemoryInfo(d, &memory), NVML_SUCCESS);
    char memory_text[160];
    std::snprintf(memory_text, sizeof memory_text,
                  "c_nvmlMemory_t(total: %llu B, free: %llu B, used: %llu B)", memory.total,
                  memory.free, memory.used);
    EXPECT_EQ(std::string(memory_text),
              gpu("mem_info").get<std::string>());  // idle: no process

    unsigned long long reasons = 0;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetCurrentClocksThrottleReasons)(d, &reasons), NVML_SUCCESS);
    EXPECT_EQ(reasons, gpu("throttle_reasons").get<unsigned long long>());
    ASSERT_EQ(SIM_FN(nvmlDeviceGetSupportedClocksThrottleReasons)(d, &reasons), NVML_SUCCESS);
    EXPECT_EQ(reasons, gpu("throttle_supported").get<unsigned long long>());

    unsigned v = 0;
    ASSERT_EQ(n.nvmlDeviceGetCurrPcieLinkGeneration(d, &v), NVML_SUCCESS);
    EXPECT_EQ(v, gpu("pcie_gen_cur").get<unsigned>());
    ASSERT_EQ(n.nvmlDeviceGetMaxPcieLinkGeneration(d, &v), NVML_SUCCESS);
    EXPECT_EQ(v, gpu("pcie_gen_max").get<unsigned>());
    ASSERT_EQ(n.nvmlDeviceGetGpuMaxPcieLinkGeneration(d, &v), NVML_SUCCESS);
    EXPECT_EQ(v, gpu("gpu_max_pcie_gen").get<unsigned>());
    ASSERT_EQ(n.nvmlDeviceGetCurrPcieLinkWidth(d, &v), NVML_SUCCESS);
    EXPECT_EQ(v, gpu("pcie_width_cur").get<unsigned>());
    ASSERT_EQ(n.nvmlDeviceGetMaxPcieLinkWidth(d, &v), NVML_SUCCESS);
    EXPECT_EQ(v, gpu("pcie_width_max").get<unsigned>());
    nvmlDeviceArchitecture_t arch = 0;
    ASSERT_EQ(n.nvmlDeviceGetArchitecture(d, &arch), NVML_SUCCESS);
    EXPECT_EQ(arch, gpu("arch").get<unsigned>());
    int major = 0, minor = 0;
    ASSERT_EQ(n.nvmlDeviceGetCudaComputeCapability(d, &major, &minor), NVML_SUCCESS);
    EXPECT_EQ((std::vector<int>{major, minor}), gpu("cc").get<std::vector<int>>());
    ASSERT_EQ(n.nvmlDeviceGetNumGpuCores(d, &v), NVML_SUCCESS);
    EXPECT_EQ(v, gpu("num_cores").get<unsigned>());
    ASSERT_EQ(n.nvmlDeviceGetMemoryBusWidth(d, &v), NVML_SUCCESS);
    EXPECT_EQ(v, gpu("mem_bus_width").get<unsigned>());

    int offset = 1;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetGpcClkVfOffset)(d, &offset), NVML_SUCCESS);
    EXPECT_EQ(offset, gpu("gpc_vf_offset").get<int>());
    ASSERT_EQ(SIM_FN(nvmlDeviceGetMemClkVfOffset)(d, &offset), NVML_SUCCESS);
    EXPECT_EQ(offset, gpu("mem_vf_offset").get<int>());

    // What the card did not support.
    EXPECT_EQ(gpu("fan"), "ERR:Not Supported");
    EXPECT_EQ(n.nvmlDeviceGetFanSpeed(d, &v), NVML_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(gpu("auto_boost"), "ERR:Not Supported");
    EXPECT_EQ(SIM_FN(nvmlDeviceGetAutoBoostedClocksEnabled)(d, &mode, &pending),
              NVML_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(gpu("api_restriction_appclocks"), "ERR:Not Supported");
    EXPECT_EQ(SIM_FN(nvmlDeviceGetAPIRestriction)(d, 0, &mode), NVML_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(gpu("nvlink0"), "ERR:Not Supported");
    EXPECT_EQ(n.nvmlDeviceGetNvLinkState(d, 0, &mode), NVML_ERROR_NOT_SUPPORTED);

    // Processes: none at t = 0 ("procs": "[]"); the field values the recording read succeed.
    unsigned procs = 0;
    EXPECT_EQ(n.nvmlDeviceGetComputeRunningProcesses_v3(d, &procs, nullptr), NVML_SUCCESS);
    EXPECT_EQ(procs, 0u);
    EXPECT_EQ(gpu("procs"), "[]");
    nvmlFieldValue_t fields[2] = {};
    fields[0].fieldId = NVML_FI_DEV_POWER_INSTANT;
    fields[1].fieldId = NVML_FI_DEV_POWER_AVERAGE;
    ASSERT_EQ(n.nvmlDeviceGetFieldValues(d, 2, fields), NVML_SUCCESS);
    EXPECT_EQ(gpu("fieldvalues"), "[(186, 0), (185, 0)]");
    EXPECT_EQ(fields[0].nvmlReturn, NVML_SUCCESS);
    EXPECT_EQ(fields[1].nvmlReturn, NVML_SUCCESS);

    // Readings that move: within the calibration's tolerance at t = 0 (idle, no context).
    ASSERT_EQ(n.nvmlDeviceGetPowerUsage(d, &mw), NVML_SUCCESS);
    EXPECT_NEAR(mw, gpu("power_usage_mW").get<double>(), 0.02 * 75454);
    unsigned celsius = 0;
    ASSERT_EQ(n.nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &celsius), NVML_SUCCESS);
    EXPECT_NEAR(celsius, gpu("temp_gpu").get<double>(), 1.0);
    nvmlUtilization_t util{};
    ASSERT_EQ(n.nvmlDeviceGetUtilizationRates(d, &util), NVML_SUCCESS);
    char util_text[96];
    std::snprintf(util_text, sizeof util_text, "c_nvmlUtilization_t(gpu: %u %%, memory: %u %%)",
                  util.gpu, util.memory);
    EXPECT_EQ(std::string(util_text), gpu("util").get<std::string>());
    for (const auto& [key, policy] :
         {std::pair{"violation_power_ns", NVML_PERF_POLICY_POWER},
          std::pair{"violation_thermal_ns", NVML_PERF_POLICY_THERMAL}}) {
      nvmlViolationTime_t time{};
      ASSERT_EQ(n.nvmlDeviceGetViolationStatus(d, policy, &time), NVML_SUCCESS);
      const std::string recorded = gpu(key).get<std::string>();
      EXPECT_NE(recorded.find("violationTime: 0)"), std::string::npos) << key;
      EXPECT_EQ(time.violationTime, 0u) << key;
    }

    // Every recorded key was compared, but those that cannot be: the card's energy counter
    // since its driver loaded, the time nvmlInit took, and per-call latencies (perf/).
    const std::set<std::string> not_comparable = {"nvmlInit_s", "gpus", "gpus/energy_mJ",
                                                  "gpus/latency_us_median"};
    for (const auto& [key, value] : r.items()) {
      EXPECT_TRUE(read.count(key) || not_comparable.count(key)) << key << " is not checked";
    }
    for (const auto& [key, value] : r["gpus"][0].items()) {
      EXPECT_TRUE(read.count("gpus/" + key) || not_comparable.count("gpus/" + key))
          << "gpus/" << key << " is not checked";
    }
  }));
}

TEST_F(sim_abi_clients_test, older_names_and_layouts) {
  // default at t = 10 s: the training job holds its context on every GPU.
  expect_passed(in_child(frozen("default", "10"), [](Nvml& n) {
    ASSERT_EQ(SIM_FN(nvmlInitWithFlags)(0), NVML_SUCCESS);
    EXPECT_EQ(SIM_FN(nvmlInitWithFlags)(0x100), NVML_ERROR_INVALID_ARGUMENT);
    unsigned count = 0;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetCount)(&count), NVML_SUCCESS);
    EXPECT_EQ(count, 4u);
    nvmlDevice_t d = nullptr;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetHandleByIndex)(1, &d), NVML_SUCCESS);
    EXPECT_EQ(d, n.handle(1));

    // The first PCI layout is 52 bytes: nothing written past it.
    struct {
      nvmlPciInfoV1_t pci;
      unsigned char guard[32];
    } v1{};
    std::memset(v1.guard, 0xA5, sizeof v1.guard);
    ASSERT_EQ(SIM_FN(nvmlDeviceGetPciInfo)(d, &v1.pci), NVML_SUCCESS);
    EXPECT_STREQ(v1.pci.busId, "0000:2A:00.0");
    for (unsigned char byte : v1.guard) EXPECT_EQ(byte, 0xA5);

    // Running processes in both layouts, and per-process utilization.
    nvmlProcessInfoV1_t old_layout[4] = {};
    unsigned n_old = 4;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetComputeRunningProcesses)(d, &n_old, old_layout), NVML_SUCCESS);
    ASSERT_EQ(n_old, 1u);
    EXPECT_EQ(old_layout[0].pid, 41001u);
    EXPECT_EQ(old_layout[0].usedGpuMemory, 62ULL << 30);
    nvmlProcessInfo_t current[4] = {};
    unsigned n_current = 0;
    EXPECT_EQ(SIM_FN(nvmlDeviceGetComputeRunningProcesses_v2)(d, &n_current, nullptr),
              NVML_ERROR_INSUFFICIENT_SIZE);
    EXPECT_EQ(n_current, 1u);
    ASSERT_EQ(SIM_FN(nvmlDeviceGetComputeRunningProcesses_v2)(d, &n_current, current),
              NVML_SUCCESS);
    EXPECT_EQ(current[0].pid, 41001u);
    unsigned n_graphics = 4;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetGraphicsRunningProcesses)(d, &n_graphics, old_layout),
              NVML_SUCCESS);
    EXPECT_EQ(n_graphics, 0u);
    // One sample per 0.25 s the process held a context, the last 8 s.
    nvmlProcessUtilizationSample_t samples[64] = {};
    unsigned n_samples = 0;
    EXPECT_EQ(SIM_FN(nvmlDeviceGetProcessUtilization)(d, nullptr, &n_samples, 0),
              NVML_ERROR_INSUFFICIENT_SIZE);
    ASSERT_GE(n_samples, 1u);
    ASSERT_LE(n_samples, 32u);
    ASSERT_EQ(SIM_FN(nvmlDeviceGetProcessUtilization)(d, samples, &n_samples, 0), NVML_SUCCESS);
    unsigned long long newest = 0;
    for (unsigned k = 0; k < n_samples; ++k) {
      EXPECT_EQ(samples[k].pid, 41001u);
      newest = std::max(newest, samples[k].timeStamp);
    }
    nvmlUtilization_t util{};
    ASSERT_EQ(n.nvmlDeviceGetUtilizationRates(d, &util), NVML_SUCCESS);
    // The last second's four periods (none before the workload held a context) average to the
    // GPU's utilization over that second.
    double last_second = 0;
    for (unsigned k = 0; k < n_samples; ++k) {
      if (samples[k].timeStamp + 1000000 > newest) last_second += samples[k].smUtil / 4.0;
    }
    EXPECT_NEAR(last_second, util.gpu, 5.0);
    // Nothing newer than the newest sample read: the real library's NOT_FOUND.
    EXPECT_EQ(SIM_FN(nvmlDeviceGetProcessUtilization)(d, samples, &n_samples, newest),
              NVML_ERROR_NOT_FOUND);
    char name[64];
    ASSERT_EQ(SIM_FN(nvmlSystemGetProcessName)(41001, name, sizeof name), NVML_SUCCESS);
    EXPECT_STREQ(name, "python3 train.py");

    // Versioned struct: the version field is checked.
    nvmlMemory_v2_t memory{};
    memory.version = 1;
    EXPECT_EQ(SIM_FN(nvmlDeviceGetMemoryInfo_v2)(d, &memory), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    memory.version = nvmlMemory_v2;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetMemoryInfo_v2)(d, &memory), NVML_SUCCESS);
    EXPECT_EQ(memory.used, 62ULL << 30);
    EXPECT_EQ(memory.total, memory.reserved + memory.used + memory.free);

    // Old event-reason names are the new ones.
    unsigned long long now = 0, old = 1;
    ASSERT_EQ(n.nvmlDeviceGetCurrentClocksEventReasons(d, &now), NVML_SUCCESS);
    ASSERT_EQ(SIM_FN(nvmlDeviceGetCurrentClocksThrottleReasons)(d, &old), NVML_SUCCESS);
    EXPECT_EQ(now, old);

    // Unsupported families answer NOT_SUPPORTED after the same checks as the rest.
    EXPECT_EQ(SIM_FN(nvmlDeviceGetRetiredPagesPendingStatus)(d, nullptr), NVML_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(SIM_FN(nvmlDeviceGetRetiredPagesPendingStatus)(nullptr, nullptr),
              NVML_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(SIM_FN(nvmlDeviceGetDisplayMode)(d, nullptr), NVML_ERROR_INVALID_ARGUMENT);
    nvmlEnableState_t display = NVML_FEATURE_ENABLED;
    EXPECT_EQ(SIM_FN(nvmlDeviceGetDisplayMode)(d, &display), NVML_ERROR_DEPRECATED);
    ASSERT_EQ(n.nvmlShutdown(), NVML_SUCCESS);
    ASSERT_EQ(SIM_FN(nvmlInit)(), NVML_SUCCESS);
    EXPECT_EQ(SIM_FN(nvmlDeviceGetBoardId)(nullptr, &count), NVML_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(n.nvmlShutdown(), NVML_SUCCESS);
    EXPECT_EQ(SIM_FN(nvmlDeviceGetBoardId)(d, &count), NVML_ERROR_UNINITIALIZED);
  }));
}

}  // namespace
}  // namespace gpuclk::sim::testing
