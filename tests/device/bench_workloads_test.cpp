// The CUDA workloads on a real GPU: every path runs briefly and its own check passes. Non-square
// GEMM sizes catch layout and leading-dimension mistakes that 8192³ would hide. Skipped with a
// reason where there is no CUDA build or no GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/workload.h"
#include "util/error.h"

namespace gpuclk::bench {
namespace {

RunOptions short_run() {
  RunOptions o;
  o.seconds = 0.2;
  o.warmup_seconds = 0.05;
  o.repetition_seconds = 0.02;
  o.min_repetitions = 3;
  return o;
}

class bench_workloads_test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!built_with_cuda()) GTEST_SKIP() << "built without CUDA";
    try {
      if (device_count() < 1) GTEST_SKIP() << "no CUDA device";
    } catch (const Error& e) {
      GTEST_SKIP() << "no usable GPU: " << e.what();
    }
    info_ = device_info(0);
  }

  void expect_sane(const Result& r, const std::string& what) {
    SCOPED_TRACE(what);
    EXPECT_TRUE(r.verification.checked);
    EXPECT_TRUE(r.verification.passed)
        << r.verification.failures << " of " << r.verification.samples << " outside the bound, max "
        << r.verification.max_error;
    ASSERT_GE(r.repetitions.size(), 3u);
    EXPECT_GT(r.rate.median, 0);
    EXPECT_GT(r.window_end, r.window_start);
    for (std::size_t i = 1; i < r.repetitions.size(); ++i) {
      EXPECT_GT(r.repetitions[i].start_seconds, r.repetitions[i - 1].start_seconds);
    }
  }

  bool has_fp8() const { return info_.cc_major * 10 + info_.cc_minor >= 89; }

  DeviceInfo info_;
};

TEST_F(bench_workloads_test, device_info_matches_nvml_formats) {
  EXPECT_FALSE(info_.name.empty());
  EXPECT_GT(info_.sm_count, 0);
  EXPECT_EQ(info_.uuid.rfind("GPU-", 0), 0u);
  EXPECT_EQ(info_.uuid.size(), 40u);
  EXPECT_EQ(info_.pci_bus_id.size(), 16u);  // 00000000:19:00.0
}

TEST_F(bench_workloads_test, gemm_every_dtype_non_square_passes_its_check) {
  for (GemmDtype d : kAllGemmDtypes) {
    if (d == GemmDtype::fp8 && !has_fp8()) continue;
    // fp8 needs multiples of 16; the others get sizes that are not.
    const GemmSpec spec =
        d == GemmDtype::fp8 ? GemmSpec{d, 784, 528, 272} : GemmSpec{d, 1000, 520, 333};
    expect_sane(run(spec, 0, short_run()), describe(spec));
  }
}

TEST_F(bench_workloads_test, gemm_square_with_and_without_autotuning) {
  GemmSpec spec{GemmDtype::bf16, 2048, 2048, 2048};
  expect_sane(run(spec, 0, short_run()), "autotune 4");
  spec.autotune_candidates = 1;
  const Result r = run(spec, 0, short_run());
  expect_sane(r, "autotune 1");
  EXPECT_DOUBLE_EQ(r.work_per_launch, 2.0 * 2048 * 2048 * 2048);
}

TEST_F(bench_workloads_test, gemm_fp8_is_not_supported_before_ada) {
  if (has_fp8()) GTEST_SKIP() << "this GPU has FP8";
  try {
    run(GemmSpec{GemmDtype::fp8, 256, 256, 256}, 0, short_run());
    FAIL() << "fp8 ran on compute capability " << info_.cc_major << "." << info_.cc_minor;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::not_supported);
  }
}

TEST_F(bench_workloads_test, mem_every_kind_passes_its_check) {
  for (MemKind k : {MemKind::copy, MemKind::copy_kernel, MemKind::triad}) {
    const MemSpec spec{k, (std::size_t(64) << 20) + 48};  // not a multiple of the unrolled stride
    const Result r = run(spec, 0, short_run());
    expect_sane(r, describe(spec));
    EXPECT_EQ(r.unit, RateUnit::byte_per_second);
    EXPECT_GT(r.rate.median, 50e9);  // any GPU this tool targets moves more than 50 GB/s
  }
}

// Zeros and a constant pass their checks in every dtype and kind (the result buffer starts as NaN
// there, so a kernel that did not run would fail them), and each report names its inputs.
TEST_F(bench_workloads_test, zeros_and_constant_inputs_pass_their_checks) {
  for (InputKind input : {InputKind::zeros, InputKind::constant}) {
    for (GemmDtype d : kAllGemmDtypes) {
      if (d == GemmDtype::fp8 && !has_fp8()) continue;
      GemmSpec spec{d, 512, 384, 256};
      spec.input = input;
      const Result r = run(spec, 0, short_run());
      expect_sane(r, describe(spec));
      EXPECT_EQ(r.input, describe_input(spec));
      EXPECT_NE(r.variant.find(std::string(to_string(input))), std::string::npos) << r.variant;
    }
    for (MemKind k : {MemKind::copy, MemKind::copy_kernel, MemKind::triad}) {
      const MemSpec spec{k, std::size_t(64) << 20, input};
      const Result r = run(spec, 0, short_run());
      expect_sane(r, describe(spec));
      EXPECT_EQ(r.input, input == InputKind::zeros ? "zeros" : "constant byte 0x55");
    }
  }
}

TEST_F(bench_workloads_test, fma_rate_is_below_the_fp32_peak_at_any_real_clock) {
  const Result r = run(FmaSpec{256}, 0, short_run());
  expect_sane(r, "fma");
  // 256 FLOP/clk/SM is the widest FP32 path of any NVIDIA GPU so far; 3 GHz is above any boost.
  EXPECT_LT(r.rate.median, 256.0 * info_.sm_count * 3e9);
}

TEST_F(bench_workloads_test, callbacks_report_each_repetition_and_phase_in_order) {
  RunOptions o = short_run();
  std::vector<int> repetitions;
  std::vector<Phase> phases;
  o.on_repetition = [&](const Progress& p) {
    EXPECT_EQ(p.device, 0);
    repetitions.push_back(p.repetition);
  };
  o.on_phase = [&](int, Phase p) { phases.push_back(p); };
  const Result r = run(FmaSpec{64}, 0, o);
  ASSERT_EQ(repetitions.size(), r.repetitions.size());
  for (std::size_t i = 0; i < repetitions.size(); ++i) EXPECT_EQ(repetitions[i], int(i));
  EXPECT_EQ(phases, (std::vector<Phase>{Phase::prepared, Phase::warmed_up, Phase::measured}));
}

TEST_F(bench_workloads_test, concurrent_runs_every_device_and_reports_a_bad_one) {
  std::vector<int> devices;
  for (int d = 0; d < device_count(); ++d) devices.push_back(d);
  devices.push_back(device_count());  // not a device: must fail alone, not hang the others
  const auto outcomes = run_concurrent(FmaSpec{64}, devices, short_run());
  ASSERT_EQ(outcomes.size(), devices.size());
  for (std::size_t i = 0; i + 1 < outcomes.size(); ++i) {
    ASSERT_TRUE(outcomes[i].result) << "device " << devices[i];
    expect_sane(*outcomes[i].result, "device " + std::to_string(devices[i]));
  }
  EXPECT_FALSE(outcomes.back().result);
  EXPECT_TRUE(outcomes.back().error);
}

TEST_F(bench_workloads_test, unknown_device_is_gpu_not_found) {
  try {
    run(FmaSpec{1}, device_count(), short_run());
    FAIL() << "ran on a device that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::gpu_not_found);
  }
}

}  // namespace
}  // namespace gpuclk::bench
