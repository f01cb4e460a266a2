// libnvml-sim.so's NvLink answers on a directly linked pair (2xh200 and the doctor's link
// faults): state, remote end, speed, error counters and the data counters as NVML field values.
#include <string>

#include "entry_points.gen.h"
#include "sim_abi_fixture.h"

namespace gpuclk::sim::testing {
namespace {

class sim_abi_nvlink_test : public sim_abi_test {
 protected:
  // Powers the node on again: the next child starts at its GPUCLK_SIM_START (a state file that
  // exists keeps its time).
  void power_on() {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
};

std::map<std::string, std::string> frozen_path(const char* relative, const char* t) {
  return {{"GPUCLK_SIM_SCENARIO", std::string(GPUCLK_SOURCE_DIR) + "/sim/scenarios/" + relative},
          {"GPUCLK_SIM_SPEED", "0"},
          {"GPUCLK_SIM_START", t}};
}

nvmlFieldValue_t field(unsigned id, unsigned scope) {
  nvmlFieldValue_t v{};
  v.fieldId = id;
  v.scopeId = scope;
  return v;
}

TEST_F(sim_abi_nvlink_test, a_pair_of_h200_reads_nv18_to_each_other) {
  expect_passed(in_child(frozen("2xh200", "1"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    const nvmlDevice_t d0 = n.handle(0), d1 = n.handle(1);
    char name[96] = {};
    ASSERT_EQ(n.nvmlDeviceGetName(d0, name, sizeof name), NVML_SUCCESS);
    EXPECT_STREQ(name, "NVIDIA H200");
    nvmlPciInfo_t own{};
    ASSERT_EQ(n.nvmlDeviceGetPciInfo_v3(d1, &own), NVML_SUCCESS);
    for (unsigned link = 0; link < 18; ++link) {
      nvmlEnableState_t active = NVML_FEATURE_DISABLED;
      ASSERT_EQ(n.nvmlDeviceGetNvLinkState(d0, link, &active), NVML_SUCCESS);
      EXPECT_EQ(active, NVML_FEATURE_ENABLED);
      nvmlPciInfo_t remote{};
      ASSERT_EQ(n.nvmlDeviceGetNvLinkRemotePciInfo_v2(d0, link, &remote), NVML_SUCCESS);
      EXPECT_STREQ(remote.busId, own.busId) << "link " << link << " leads to GPU 1";
      nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
      ASSERT_EQ(n.nvmlDeviceGetNvLinkRemoteDeviceType(d0, link, &type), NVML_SUCCESS);
      EXPECT_EQ(type, NVML_NVLINK_DEVICE_TYPE_GPU);
    }
    nvmlEnableState_t active{};
    EXPECT_EQ(n.nvmlDeviceGetNvLinkState(d0, 18, &active), NVML_ERROR_INVALID_ARGUMENT);
    unsigned version = 0;
    ASSERT_EQ(n.nvmlDeviceGetNvLinkVersion(d1, 0, &version), NVML_SUCCESS);
    EXPECT_EQ(version, static_cast<unsigned>(NVML_NVLINK_VERSION_4_0));
    // Speed (MB/s) and count as field values; the static DL ECC counts; no replays.
    nvmlFieldValue_t v[3] = {field(NVML_FI_DEV_NVLINK_GET_SPEED, 3),
                             field(NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON, 0),
                             field(NVML_FI_DEV_NVLINK_LINK_COUNT, 0)};
    ASSERT_EQ(n.nvmlDeviceGetFieldValues(d0, 3, v), NVML_SUCCESS);
    for (const auto& f : v) ASSERT_EQ(f.nvmlReturn, NVML_SUCCESS) << f.fieldId;
    EXPECT_EQ(v[0].value.uiVal, 26562u);
    EXPECT_EQ(v[1].value.uiVal, 26562u);
    EXPECT_EQ(v[2].value.uiVal, 18u);
    unsigned long long count = 0;
    ASSERT_EQ(n.nvmlDeviceGetNvLinkErrorCounter(d0, 9, NVML_NVLINK_ERROR_DL_ECC_DATA, &count),
              NVML_SUCCESS);
    EXPECT_EQ(count, 70u);
    ASSERT_EQ(n.nvmlDeviceGetNvLinkErrorCounter(d0, 9, NVML_NVLINK_ERROR_DL_REPLAY, &count),
              NVML_SUCCESS);
    EXPECT_EQ(count, 0u);
  }));
}

TEST_F(sim_abi_nvlink_test, data_counters_grow_in_kib_on_both_ends_of_the_copy) {
  // Each rank sends its gradients to the other (p2p phase) from t = 2 s on.
  expect_passed(in_child(frozen("2xh200", "1"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    nvmlFieldValue_t v[2] = {field(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, NVML_NVLINK_SCOPE_ALL),
                             field(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, NVML_NVLINK_SCOPE_ALL)};
    ASSERT_EQ(n.nvmlDeviceGetFieldValues(n.handle(1), 2, v), NVML_SUCCESS);
    EXPECT_EQ(v[0].value.ullVal, 0u);  // before the job starts
  }));
  power_on();
  expect_passed(in_child(frozen("2xh200", "30"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    nvmlFieldValue_t tx1[2] = {field(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, NVML_NVLINK_SCOPE_ALL),
                               field(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, 4)};
    nvmlFieldValue_t rx0[2] = {field(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, NVML_NVLINK_SCOPE_ALL),
                               field(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, NVML_NVLINK_SCOPE_ALL)};
    ASSERT_EQ(n.nvmlDeviceGetFieldValues(n.handle(1), 2, tx1), NVML_SUCCESS);
    ASSERT_EQ(n.nvmlDeviceGetFieldValues(n.handle(0), 2, rx0), NVML_SUCCESS);
    EXPECT_EQ(tx1[0].valueType, NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
    EXPECT_GT(tx1[0].value.ullVal, 40ULL << 20);  // one 40 GiB all-reduce at least, in KiB
    EXPECT_NEAR(double(tx1[1].value.ullVal), double(tx1[0].value.ullVal) / 18, 2.0);  // link 4
    EXPECT_NEAR(double(rx0[0].value.ullVal), double(tx1[0].value.ullVal), 18.0);
    EXPECT_GT(rx0[1].value.ullVal, 40ULL << 20);  // GPU 0 sends its own
    nvmlFieldValue_t bad = field(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, 18);
    ASSERT_EQ(n.nvmlDeviceGetFieldValues(n.handle(1), 1, &bad), NVML_SUCCESS);
    EXPECT_EQ(bad.nvmlReturn, NVML_ERROR_INVALID_ARGUMENT);
  }));
}

TEST_F(sim_abi_nvlink_test, the_doctor_scenarios_read_a_link_down_and_a_counter_rising) {
  expect_passed(in_child(frozen_path("doctor/nvlink-down.toml", "10"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    for (unsigned gpu = 0; gpu < 2; ++gpu) {
      nvmlEnableState_t active = NVML_FEATURE_ENABLED;
      ASSERT_EQ(n.nvmlDeviceGetNvLinkState(n.handle(gpu), 7, &active), NVML_SUCCESS);
      EXPECT_EQ(active, NVML_FEATURE_DISABLED) << "GPU " << gpu;
      nvmlFieldValue_t speed = field(NVML_FI_DEV_NVLINK_GET_SPEED, 7);
      ASSERT_EQ(n.nvmlDeviceGetFieldValues(n.handle(gpu), 1, &speed), NVML_SUCCESS);
      EXPECT_EQ(speed.value.uiVal, 0u);
    }
  }));
  for (const char* t : {"4", "25"}) {
    power_on();
    expect_passed(in_child(frozen_path("doctor/nvlink-errors.toml", t), [t](Nvml& n) {
      ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
      unsigned long long replays = 99;
      ASSERT_EQ(
          n.nvmlDeviceGetNvLinkErrorCounter(n.handle(1), 4, NVML_NVLINK_ERROR_DL_REPLAY, &replays),
          NVML_SUCCESS);
      EXPECT_EQ(replays, std::string(t) == "4" ? 0u : 40u);  // 7200/h from 5 s
    }));
  }
  // A PCIe card (the calibration H100) has no NvLink: NOT_SUPPORTED, also as a field value.
  expect_passed(in_child(frozen("h100-calibration", "0"), [](Nvml& n) {
    ASSERT_EQ(n.nvmlInit_v2(), NVML_SUCCESS);
    nvmlFieldValue_t v = field(NVML_FI_DEV_NVLINK_LINK_COUNT, 0);
    ASSERT_EQ(n.nvmlDeviceGetFieldValues(n.handle(0), 1, &v), NVML_SUCCESS);
    EXPECT_EQ(v.nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  }));
}

}  // namespace
}  // namespace gpuclk::sim::testing
