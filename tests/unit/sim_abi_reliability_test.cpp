// libnvml-sim.so's health entry points follow the scenario: events (Xid 79 when a GPU falls off
// the bus, ECC error events as the counters grow), remapped rows after uncorrectable errors (and
// retired pages on the pre-Ampere V100), the PCIe replay counter, the driver's sample buffers,
// and NvLink where the node has NVSwitches.
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <string>

#include "entry_points.gen.h"
#include "sim_abi_fixture.h"

namespace gpuclk::sim::testing {
namespace {

class sim_abi_reliability_test : public sim_abi_test {};

// A scenario given as a path (sim/scenarios/RELATIVE), frozen at t.
std::map<std::string, std::string> frozen_file(const char* relative, const char* t) {
  return {{"GPUCLK_SIM_SCENARIO", std::string(GPUCLK_SOURCE_DIR) + "/sim/scenarios/" + relative},
          {"GPUCLK_SIM_SPEED", "0"},
          {"GPUCLK_SIM_START", t}};
}

TEST_F(sim_abi_reliability_test, xid_79_event_when_a_gpu_falls_off_the_bus) {
  // faults: GPU 2 is lost at t = 60 s.
  expect_passed(in_child(frozen("faults", "59.5"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    const nvmlDevice_t gpu = n.handle(2);
    unsigned long long types = 0;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetSupportedEventTypes)(gpu, &types), NVML_SUCCESS);
    EXPECT_EQ(types & nvmlEventTypeXidCriticalError, nvmlEventTypeXidCriticalError);
    nvmlEventSet_t set = nullptr;
    ASSERT_EQ(SIM_FN(nvmlEventSetCreate)(&set), NVML_SUCCESS);
    ASSERT_EQ(SIM_FN(nvmlDeviceRegisterEvents)(gpu, types, set), NVML_SUCCESS);
    EXPECT_EQ(SIM_FN(nvmlDeviceRegisterEvents)(gpu, nvmlEventTypeClock, set),
              NVML_ERROR_NOT_SUPPORTED);
    nvmlEventData_t event{};
    // Frozen time: nothing happens, the wait times out after its 50 ms.
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(SIM_FN(nvmlEventSetWait_v2)(set, &event, 50), NVML_ERROR_TIMEOUT);
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
    ASSERT_EQ(n.advance(1.0), 0);
    ASSERT_EQ(SIM_FN(nvmlEventSetWait_v2)(set, &event, 0), NVML_SUCCESS);
    EXPECT_EQ(event.device, gpu);
    EXPECT_EQ(event.eventType, nvmlEventTypeXidCriticalError);
    EXPECT_EQ(event.eventData, 79u);
    EXPECT_EQ(SIM_FN(nvmlEventSetWait_v2)(set, &event, 0), NVML_ERROR_TIMEOUT);  // once
    ASSERT_EQ(SIM_FN(nvmlEventSetFree)(set), NVML_SUCCESS);
    EXPECT_EQ(SIM_FN(nvmlEventSetWait_v2)(set, &event, 0), NVML_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(SIM_FN(nvmlEventSetCreate)(nullptr), NVML_ERROR_INVALID_ARGUMENT);
  }));
}

TEST_F(sim_abi_reliability_test, ecc_events_as_the_counters_grow_in_the_first_layout_too) {
  // doctor/ecc: GPU 0 gains an uncorrected error every 5 s, GPU 1 a corrected one every second.
  expect_passed(in_child(frozen_file("doctor/ecc.toml", "1"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    nvmlEventSet_t set = nullptr;
    ASSERT_EQ(SIM_FN(nvmlEventSetCreate)(&set), NVML_SUCCESS);
    ASSERT_EQ(SIM_FN(nvmlDeviceRegisterEvents)(n.handle(0), nvmlEventTypeDoubleBitEccError, set),
              NVML_SUCCESS);
    ASSERT_EQ(SIM_FN(nvmlDeviceRegisterEvents)(n.handle(1), nvmlEventTypeSingleBitEccError, set),
              NVML_SUCCESS);
    ASSERT_EQ(n.advance(10.0), 0);
    nvmlEventData_t event{};
    ASSERT_EQ(SIM_FN(nvmlEventSetWait_v2)(set, &event, 0), NVML_SUCCESS);
    EXPECT_EQ(event.device, n.handle(0));
    EXPECT_EQ(event.eventType, nvmlEventTypeDoubleBitEccError);
    // nvmlEventSetWait's layout ends after eventData.
    struct {
      unsigned char data[offsetof(nvmlEventData_t, gpuInstanceId)];
      unsigned char guard[16];
    } v1{};
    std::memset(v1.guard, 0xA5, sizeof v1.guard);
    ASSERT_EQ(SIM_FN(nvmlEventSetWait)(set, reinterpret_cast<nvmlEventData_t*>(&v1), 0),
              NVML_SUCCESS);
    nvmlEventData_t first{};
    std::memcpy(&first, v1.data, sizeof v1.data);
    EXPECT_EQ(first.device, n.handle(1));
    EXPECT_EQ(first.eventType, nvmlEventTypeSingleBitEccError);
    for (unsigned char byte : v1.guard) EXPECT_EQ(byte, 0xA5);
    EXPECT_EQ(SIM_FN(nvmlEventSetWait_v2)(set, &event, 0), NVML_ERROR_TIMEOUT);
    SIM_FN(nvmlEventSetFree)(set);
  }));
}

TEST_F(sim_abi_reliability_test, uncorrectable_errors_are_in_dram_and_remap_rows) {
  expect_passed(in_child(frozen_file("doctor/ecc.toml", "31"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    unsigned long long uncorrected = 0;
    ASSERT_EQ(n.nvmlDeviceGetTotalEccErrors(n.handle(0), NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                            NVML_AGGREGATE_ECC, &uncorrected),
              NVML_SUCCESS);
    EXPECT_EQ(uncorrected, 6u);  // 720 per hour over 31 s
    // All of them in DRAM (HBM), none in SRAM; the per-structure locations are not supported.
    unsigned long long by_location = 0;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetMemoryErrorCounter)(
                  n.handle(0), NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC,
                  NVML_MEMORY_LOCATION_DRAM, &by_location),
              NVML_SUCCESS);
    EXPECT_EQ(by_location, 6u);
    ASSERT_EQ(SIM_FN(nvmlDeviceGetMemoryErrorCounter)(
                  n.handle(0), NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC,
                  NVML_MEMORY_LOCATION_SRAM, &by_location),
              NVML_SUCCESS);
    EXPECT_EQ(by_location, 0u);
    EXPECT_EQ(SIM_FN(nvmlDeviceGetMemoryErrorCounter)(
                  n.handle(0), NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC,
                  NVML_MEMORY_LOCATION_L2_CACHE, &by_location),
              NVML_ERROR_NOT_SUPPORTED);
    unsigned corrected_rows = 9, rows = 0, pending = 0, failure = 9;
    ASSERT_EQ(
        SIM_FN(nvmlDeviceGetRemappedRows)(n.handle(0), &corrected_rows, &rows, &pending, &failure),
        NVML_SUCCESS);
    EXPECT_EQ(corrected_rows, 0u);
    EXPECT_EQ(rows, 6u);
    EXPECT_EQ(pending, 1u);  // applied at the next GPU reset
    EXPECT_EQ(failure, 0u);
    nvmlRowRemapperHistogramValues_t banks{};
    ASSERT_EQ(SIM_FN(nvmlDeviceGetRowRemapperHistogram)(n.handle(0), &banks), NVML_SUCCESS);
    EXPECT_EQ(banks.max, 2560u - 6u);
    EXPECT_EQ(banks.high, 6u);
    // GPU 1 has corrected errors only: nothing remapped.
    ASSERT_EQ(
        SIM_FN(nvmlDeviceGetRemappedRows)(n.handle(1), &corrected_rows, &rows, &pending, &failure),
        NVML_SUCCESS);
    EXPECT_EQ(rows + corrected_rows + pending, 0u);
    EXPECT_EQ(SIM_FN(nvmlDeviceGetRemappedRows)(n.handle(1), nullptr, &rows, &pending, &failure),
              NVML_ERROR_INVALID_ARGUMENT);
  }));
  // The L4 model has no row remapping.
  expect_passed(in_child(frozen("l4", "0"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    unsigned v[4] = {};
    EXPECT_EQ(SIM_FN(nvmlDeviceGetRemappedRows)(n.handle(0), &v[0], &v[1], &v[2], &v[3]),
              NVML_ERROR_NOT_SUPPORTED);
  }));
}

TEST_F(sim_abi_reliability_test, v100_retires_pages_per_cause_with_the_pending_flag) {
  // doctor/retired-pages: GPU 0 retired 2 pages after double-bit errors, a retirement pending;
  // GPU 1 retired 44 after repeated single-bit errors and 6 after double-bit ones.
  expect_passed(in_child(frozen_file("doctor/retired-pages.toml", "10"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    const auto sbe = NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS;
    const auto dbe = NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR;
    // Size queries first (count 0, no buffer: how pynvml asks).
    unsigned count = 0;
    ASSERT_EQ(n.nvmlDeviceGetRetiredPages(n.handle(0), sbe, &count, nullptr), NVML_SUCCESS);
    EXPECT_EQ(count, 0u);
    count = 0;
    ASSERT_EQ(n.nvmlDeviceGetRetiredPages(n.handle(0), dbe, &count, nullptr),
              NVML_ERROR_INSUFFICIENT_SIZE);
    EXPECT_EQ(count, 2u);
    unsigned long long addresses[64] = {}, times[64] = {};
    count = 64;
    ASSERT_EQ(n.nvmlDeviceGetRetiredPages(n.handle(0), dbe, &count, addresses), NVML_SUCCESS);
    ASSERT_EQ(count, 2u);
    EXPECT_NE(addresses[0], addresses[1]);
    for (unsigned k = 0; k < count; ++k) {
      EXPECT_EQ(addresses[k] % 4096, 0u);       // 4 KiB pages
      EXPECT_LT(addresses[k], 34089730048ULL);  // inside the 32510 MiB
    }
    // _v2 adds when each was retired: before power-on, in order, the same addresses.
    unsigned long long again[64] = {};
    count = 64;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetRetiredPages_v2)(n.handle(0), dbe, &count, again, times),
              NVML_SUCCESS);
    EXPECT_EQ(again[0], addresses[0]);
    EXPECT_EQ(again[1], addresses[1]);
    EXPECT_LT(times[0], times[1]);
    nvmlEnableState_t pending = NVML_FEATURE_DISABLED;
    ASSERT_EQ(n.nvmlDeviceGetRetiredPagesPendingStatus(n.handle(0), &pending), NVML_SUCCESS);
    EXPECT_EQ(pending, NVML_FEATURE_ENABLED);
    count = 64;
    ASSERT_EQ(n.nvmlDeviceGetRetiredPages(n.handle(1), sbe, &count, addresses), NVML_SUCCESS);
    EXPECT_EQ(count, 44u);
    count = 64;
    ASSERT_EQ(n.nvmlDeviceGetRetiredPages(n.handle(1), dbe, &count, addresses), NVML_SUCCESS);
    EXPECT_EQ(count, 6u);
    ASSERT_EQ(n.nvmlDeviceGetRetiredPagesPendingStatus(n.handle(1), &pending), NVML_SUCCESS);
    EXPECT_EQ(pending, NVML_FEATURE_DISABLED);
    // The real library's argument checks.
    count = 1;
    EXPECT_EQ(n.nvmlDeviceGetRetiredPages(n.handle(1), dbe, &count, addresses),
              NVML_ERROR_INSUFFICIENT_SIZE);
    EXPECT_EQ(count, 6u);
    EXPECT_EQ(n.nvmlDeviceGetRetiredPages(n.handle(1), 7, &count, addresses),
              NVML_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(n.nvmlDeviceGetRetiredPages(n.handle(1), dbe, nullptr, addresses),
              NVML_ERROR_INVALID_ARGUMENT);
    count = 64;
    EXPECT_EQ(n.nvmlDeviceGetRetiredPages(n.handle(1), dbe, &count, nullptr),
              NVML_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(n.nvmlDeviceGetRetiredPagesPendingStatus(n.handle(1), nullptr),
              NVML_ERROR_INVALID_ARGUMENT);
    // Volta has no row remapping.
    unsigned v[4] = {};
    EXPECT_EQ(n.nvmlDeviceGetRemappedRows(n.handle(0), &v[0], &v[1], &v[2], &v[3]),
              NVML_ERROR_NOT_SUPPORTED);
  }));
  // An uncorrected error on a V100 retires a page after a double-bit error, pending until the
  // next reset; the H100 of doctor/ecc remaps a row instead and answers NOT_SUPPORTED here.
  const std::string scenario = ::testing::TempDir() + "/v100-dbe.toml";
  std::ofstream(scenario) << "[node]\ngpu_model = \"v100-sxm2-32gb\"\ngpu_count = 1\n"
                             "[[gpu]]\nindex = 0\necc = { uncorrected_per_hour = 720 }\n";
  expect_passed(in_child(
      {{"GPUCLK_SIM_SCENARIO", scenario},
       {"GPUCLK_SIM_SCENARIO_DIR", std::string(GPUCLK_SOURCE_DIR) + "/sim/scenarios"},
       {"GPUCLK_SIM_SPEED", "0"},
       {"GPUCLK_SIM_START", "31"}},
      [](Nvml& n) {
        ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
        unsigned count = 0;
        EXPECT_EQ(
            n.nvmlDeviceGetRetiredPages(
                n.handle(0), NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &count, nullptr),
            NVML_ERROR_INSUFFICIENT_SIZE);
        EXPECT_EQ(count, 6u);  // 720 per hour over 31 s
        nvmlEnableState_t pending = NVML_FEATURE_DISABLED;
        ASSERT_EQ(n.nvmlDeviceGetRetiredPagesPendingStatus(n.handle(0), &pending), NVML_SUCCESS);
        EXPECT_EQ(pending, NVML_FEATURE_ENABLED);
      }));
  expect_passed(in_child(frozen_file("doctor/ecc.toml", "31"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    unsigned count = 0;
    EXPECT_EQ(n.nvmlDeviceGetRetiredPages(
                  n.handle(0), NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &count, nullptr),
              NVML_ERROR_NOT_SUPPORTED);
    nvmlEnableState_t pending{};
    EXPECT_EQ(n.nvmlDeviceGetRetiredPagesPendingStatus(n.handle(0), &pending),
              NVML_ERROR_NOT_SUPPORTED);
  }));
}

TEST_F(sim_abi_reliability_test, pcie_replay_counter_follows_the_scenario) {
  expect_passed(in_child(frozen_file("doctor/pcie-replays.toml", "10"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    unsigned replays = 0;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetPcieReplayCounter)(n.handle(0), &replays), NVML_SUCCESS);
    EXPECT_EQ(replays, 10u);  // 3600 per hour
    nvmlFieldValue_t field{};
    field.fieldId = NVML_FI_DEV_PCIE_REPLAY_COUNTER;
    ASSERT_EQ(n.nvmlDeviceGetFieldValues(n.handle(0), 1, &field), NVML_SUCCESS);
    EXPECT_EQ(field.value.ullVal, replays);  // the same counter as a field value
    ASSERT_EQ(SIM_FN(nvmlDeviceGetPcieReplayCounter)(n.handle(1), &replays), NVML_SUCCESS);
    EXPECT_EQ(replays, 0u);
  }));
}

TEST_F(sim_abi_reliability_test, samples_hold_the_current_reading) {
  expect_passed(in_child(frozen("default", "10"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    const nvmlDevice_t d = n.handle(0);
    nvmlValueType_t type{};
    unsigned count = 0;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetSamples)(d, NVML_TOTAL_POWER_SAMPLES, 0, &type, &count, nullptr),
              NVML_SUCCESS);
    ASSERT_EQ(count, 1u);
    nvmlSample_t sample{};
    ASSERT_EQ(SIM_FN(nvmlDeviceGetSamples)(d, NVML_TOTAL_POWER_SAMPLES, 0, &type, &count, &sample),
              NVML_SUCCESS);
    EXPECT_EQ(type, NVML_VALUE_TYPE_UNSIGNED_INT);
    unsigned mw = 0;
    ASSERT_EQ(n.nvmlDeviceGetPowerUsage(d, &mw), NVML_SUCCESS);
    EXPECT_EQ(sample.sampleValue.uiVal, mw);
    EXPECT_EQ(SIM_FN(nvmlDeviceGetSamples)(d, NVML_TOTAL_POWER_SAMPLES, sample.timeStamp, &type,
                                           &count, &sample),
              NVML_ERROR_NOT_FOUND);  // nothing newer than what the caller saw
    ASSERT_EQ(
        SIM_FN(nvmlDeviceGetSamples)(d, NVML_PROCESSOR_CLK_SAMPLES, 0, &type, &count, &sample),
        NVML_SUCCESS);
    EXPECT_EQ(sample.sampleValue.uiVal, n.clock(d));
    EXPECT_EQ(SIM_FN(nvmlDeviceGetSamples)(d, NVML_MODULE_POWER_SAMPLES, 0, &type, &count, &sample),
              NVML_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(SIM_FN(nvmlDeviceGetSamples)(d, static_cast<nvmlSamplingType_t>(10), 0, &type, &count,
                                           &sample),
              NVML_ERROR_INVALID_ARGUMENT);
  }));
}

TEST_F(sim_abi_reliability_test, nvlink_reads_on_an_nvswitch_node_and_none_on_a_pcie_card) {
  // default: 4 H100 SXM on NVSwitches, 18 links each.
  expect_passed(in_child(frozen("default", "10"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    const nvmlDevice_t d = n.handle(1);
    unsigned version = 0;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetNvLinkVersion)(d, 17, &version), NVML_SUCCESS);
    EXPECT_EQ(version, static_cast<unsigned>(NVML_NVLINK_VERSION_4_0));
    EXPECT_EQ(SIM_FN(nvmlDeviceGetNvLinkVersion)(d, 18, &version), NVML_ERROR_INVALID_ARGUMENT);
    unsigned capable = 9;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetNvLinkCapability)(d, 0, NVML_NVLINK_CAP_P2P_SUPPORTED, &capable),
              NVML_SUCCESS);
    EXPECT_EQ(capable, 1u);
    ASSERT_EQ(SIM_FN(nvmlDeviceGetNvLinkCapability)(d, 0, NVML_NVLINK_CAP_SYSMEM_ACCESS, &capable),
              NVML_SUCCESS);
    EXPECT_EQ(capable, 0u);
    nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetNvLinkRemoteDeviceType)(d, 3, &type), NVML_SUCCESS);
    EXPECT_EQ(type, NVML_NVLINK_DEVICE_TYPE_SWITCH);
    unsigned long long errors = 9;
    ASSERT_EQ(SIM_FN(nvmlDeviceGetNvLinkErrorCounter)(d, 3, NVML_NVLINK_ERROR_DL_CRC_FLIT, &errors),
              NVML_SUCCESS);
    EXPECT_EQ(errors, 0u);
  }));
  // h100-calibration: the card was a PCIe pass-through and reported no NvLink.
  expect_passed(in_child(frozen("h100-calibration", "0"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    unsigned version = 0;
    EXPECT_EQ(SIM_FN(nvmlDeviceGetNvLinkVersion)(n.handle(0), 0, &version),
              NVML_ERROR_NOT_SUPPORTED);
  }));
}

}  // namespace
}  // namespace gpuclk::sim::testing
