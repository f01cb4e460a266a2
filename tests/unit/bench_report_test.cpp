// The bench report on recorded H100 runs (docs/calibration.md): peaks from the architecture table,
// efficiencies at the max and at the observed clock, energy per unit of work, reason attribution
// and the verdicts. The figures asserted here are the ones docs/bench.md quotes.
#include <gtest/gtest.h>

#include "bench/report.h"
#include "bench_report_samples.h"

namespace gpuclk::bench {
namespace {

using testing::h100_facts;
using testing::h100_result;
using testing::load_h100_phase;

constexpr double kTera = 1e12;

bool has_kind(const WorkloadReport& r, Verdict::Kind kind) {
  for (const auto& v : r.verdicts) {
    if (v.kind == kind) return true;
  }
  return false;
}

const ReasonShare* reason(const WorkloadReport& r, const std::string& key) {
  for (const auto& share : r.reasons) {
    if (share.key == key) return &share;
  }
  return nullptr;
}

TEST(bench_report_test, peak_data_types_follow_the_workload) {
  EXPECT_EQ(peak_data_type(GemmSpec{GemmDtype::tf32}), gpu::DataType::tf32);
  EXPECT_EQ(peak_data_type(GemmSpec{GemmDtype::fp8}), gpu::DataType::fp8);
  EXPECT_EQ(peak_data_type(FmaSpec{}), gpu::DataType::fp32);
  EXPECT_EQ(peak_data_type(MemSpec{}), std::nullopt);
}

TEST(bench_report_test, bf16_gemm_under_the_power_cap_reaches_89_percent_at_its_clock) {
  const auto phase = load_h100_phase("gemm_bf16");
  const GemmSpec spec{GemmDtype::bf16};
  // docs/calibration.md: 680.6 TFLOP/s over 6.009 s, 4189 J.
  const auto r =
      make_report(spec, h100_result(spec, 680.647766e12, 6.009), h100_facts(), &phase.summary);
  ASSERT_TRUE(r.peak);
  EXPECT_EQ(r.peak->domain, PeakDomain::sm_clock);
  EXPECT_NEAR(r.peak->at_max_clock / kTera, 1070.5, 0.1);  // 132 × 4096 × 1980 MHz
  ASSERT_TRUE(r.peak->observed_clock);
  EXPECT_DOUBLE_EQ(r.peak->observed_clock->value(), 1410);
  EXPECT_NEAR(*r.peak->at_observed_clock / kTera, 762.3, 0.1);
  EXPECT_NEAR(*r.efficiency_at_observed_clock, 0.893, 0.001);
  EXPECT_NEAR(*r.efficiency_at_max_clock, 0.636, 0.001);
  EXPECT_EQ(r.peak->basis, "132 SMs x 4096 FLOP/clock/SM (Hopper bf16)");
  ASSERT_TRUE(r.gap);
  EXPECT_NEAR(r.gap->clock, 1 - 1410.0 / 1980, 1e-9);
  EXPECT_NEAR(r.gap->clock + r.gap->kernel + *r.efficiency_at_max_clock, 1, 1e-9);
  // Energy: the counter over the window against the work done in it.
  ASSERT_TRUE(r.joules_per_unit && r.rate_per_watt && r.power_mean);
  EXPECT_NEAR(*r.joules_per_unit * kTera, 1.02, 0.02);  // J per TFLOP
  EXPECT_NEAR(*r.rate_per_watt / 1e9, 970, 20);         // GFLOP/s per W
  EXPECT_NEAR(r.power_mean->value(), 700, 10);
}

TEST(bench_report_test, power_cap_time_is_attributed_to_its_reason_and_named_in_the_verdict) {
  const auto phase = load_h100_phase("gemm_bf16");
  const GemmSpec spec{GemmDtype::bf16};
  const auto r =
      make_report(spec, h100_result(spec, 680.6e12, 6.009), h100_facts(), &phase.summary);
  const ReasonShare* cap = reason(r, "sw_power_cap");
  ASSERT_NE(cap, nullptr);
  // 106 of 108 samples; the two without it came first, the very first standing for half an
  // interval (time weighting), so 98.6 % of the time.
  EXPECT_NEAR(cap->fraction, 0.986, 0.001);
  EXPECT_EQ(r.reasons.size(), 1u);
  ASSERT_FALSE(r.verdicts.empty());
  EXPECT_EQ(r.verdicts.front().kind, Verdict::Kind::power_cap);
  EXPECT_EQ(
      r.verdicts.front().text.rfind("SW power cap 99 % of the run: the power limit, not the "
                                    "kernel, set this ceiling (median SM clock 1410 of 1980 MHz, ",
                                    0),
      0u)
      << r.verdicts.front().text;
  EXPECT_FALSE(has_kind(r, Verdict::Kind::full_clock));
  ASSERT_TRUE(has_kind(r, Verdict::Kind::gap_split));
  EXPECT_EQ(r.verdicts[1].text,
            "of the 36 % gap to the max-clock peak, 29 points are the clock and 7 the kernel "
            "(89 % of the peak at the clock it had)");
}

TEST(bench_report_test, tf32_gemm_is_power_capped_too) {
  const auto phase = load_h100_phase("gemm_tf32");
  const GemmSpec spec{GemmDtype::tf32};
  const auto r =
      make_report(spec, h100_result(spec, 356.547e12, 6.013), h100_facts(), &phase.summary);
  EXPECT_NEAR(r.peak->at_max_clock / kTera, 535.3, 0.1);  // 132 × 2048 × 1980 MHz
  EXPECT_DOUBLE_EQ(r.peak->observed_clock->value(), 1425);
  EXPECT_NEAR(*r.efficiency_at_observed_clock, 0.926, 0.001);
  EXPECT_NEAR(*r.efficiency_at_max_clock, 0.666, 0.001);
  EXPECT_EQ(r.verdicts.front().kind, Verdict::Kind::power_cap);
  EXPECT_NE(r.verdicts.front().text.find("SW power cap 98 % of the run"), std::string::npos);
}

TEST(bench_report_test, fp32_sgemm_at_full_clock_leaves_the_gap_to_the_kernel) {
  const auto phase = load_h100_phase("gemm_fp32");
  const GemmSpec spec{GemmDtype::fp32};
  const auto r =
      make_report(spec, h100_result(spec, 51.9237e12, 6.141), h100_facts(), &phase.summary);
  EXPECT_NEAR(r.peak->at_max_clock / kTera, 66.9, 0.05);  // 132 × 256 × 1980 MHz
  EXPECT_NEAR(*r.efficiency_at_max_clock, 0.776, 0.001);
  EXPECT_NEAR(*r.efficiency_at_observed_clock, 0.776, 0.001);
  EXPECT_TRUE(r.reasons.empty());
  EXPECT_EQ(r.verdicts.front().kind, Verdict::Kind::full_clock);
  EXPECT_EQ(r.verdicts.front().text,
            "full SM clock all run (1980 of 1980 MHz): the kernel reached 78 % of the peak, so the "
            "gap is the kernel's, not the clock's");
  EXPECT_FALSE(has_kind(r, Verdict::Kind::gap_split));  // nothing to split
  EXPECT_NEAR(r.gap->clock, 0, 1e-12);
}

TEST(bench_report_test, device_copy_is_measured_against_dram_bandwidth) {
  const auto phase = load_h100_phase("copy_1GiB");
  const MemSpec spec{MemKind::copy};
  const auto r =
      make_report(spec, h100_result(spec, 2.9995357e12, 6.007), h100_facts(), &phase.summary);
  ASSERT_TRUE(r.peak);
  EXPECT_EQ(r.peak->domain, PeakDomain::memory_clock);
  EXPECT_NEAR(r.peak->at_max_clock / kTera, 3.352, 0.001);  // 2619 MHz × 5120 bit × 2 / 8
  EXPECT_NEAR(*r.efficiency_at_max_clock, 0.895, 0.001);
  EXPECT_EQ(r.peak->basis, "5120-bit bus x 2 transfers per memory clock");
  EXPECT_EQ(r.verdicts.front().kind, Verdict::Kind::full_clock);
  EXPECT_EQ(r.verdicts.front().text,
            "full memory clock all run (2619 of 2619 MHz): it moved 89 % of the DRAM peak, so the "
            "gap is the kernel's and the memory system's, not the clock's");
  ASSERT_TRUE(r.joules_per_unit);
  EXPECT_NEAR(*r.joules_per_unit * kTera, 180, 10);  // J per TB moved: 539 W / 3.0 TB/s
}

TEST(bench_report_test, without_telemetry_only_the_max_clock_peak_is_known) {
  const GemmSpec spec{GemmDtype::bf16};
  const auto r = make_report(spec, h100_result(spec, 680e12, 3), h100_facts(), nullptr);
  ASSERT_TRUE(r.peak);
  EXPECT_FALSE(r.peak->at_observed_clock);
  EXPECT_FALSE(r.efficiency_at_observed_clock);
  EXPECT_NEAR(*r.efficiency_at_max_clock, 0.635, 0.001);
  EXPECT_FALSE(r.gap);
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts.front().kind, Verdict::Kind::no_telemetry);
}

TEST(bench_report_test, an_unknown_architecture_has_no_peak) {
  const GemmSpec spec{GemmDtype::bf16};
  Result result = h100_result(spec, 1e12, 3);
  result.device.cc_major = 6;  // Pascal: not in the table
  const auto r = make_report(spec, result, h100_facts(), nullptr);
  EXPECT_FALSE(r.peak);
  EXPECT_FALSE(r.efficiency_at_max_clock);
}

TEST(bench_report_test, a_failed_check_comes_before_every_other_verdict) {
  const auto phase = load_h100_phase("gemm_bf16");
  const GemmSpec spec{GemmDtype::bf16};
  Result result = h100_result(spec, 680e12, 6);
  result.verification = verify_exact(64, 3, "test");
  const auto r = make_report(spec, result, h100_facts(), &phase.summary);
  EXPECT_EQ(r.verdicts.front().kind, Verdict::Kind::check_failed);
  EXPECT_NE(r.verdicts.front().text.find("3 of 64"), std::string::npos);
  EXPECT_TRUE(has_kind(r, Verdict::Kind::power_cap));
}

telemetry::Summary steady_summary(double sm_mhz, std::uint64_t reasons, double temperature = 60) {
  const telemetry::TimePoint t0{std::chrono::seconds(10)};
  telemetry::SummaryBuilder b(t0);
  for (int i = 0; i <= 40; ++i) {
    telemetry::FastSample f;
    f.time = t0 + std::chrono::milliseconds(50 * i);
    f.sm_clock = units::Megahertz(sm_mhz);
    f.memory_clock = units::Megahertz(2619);
    f.power = units::Watts(500);
    f.gpu_temperature = units::Celsius(temperature);
    f.clock_reasons = gpu::ClockReasons(reasons);
    b.add(f);
  }
  return b.finish(t0 + std::chrono::seconds(2));
}

TEST(bench_report_test, thermal_slowdown_is_blamed_on_cooling) {
  const auto s = steady_summary(1500, gpu::ClockReasons::sw_thermal_slowdown, 88);
  const auto r = make_report(FmaSpec{}, h100_result(FmaSpec{}, 40e12, 2), h100_facts(), &s);
  EXPECT_EQ(r.verdicts.front().text,
            "thermal slowdown 100 % of the run (up to 88 °C): cooling, not the kernel, set this "
            "ceiling");
}

TEST(bench_report_test, application_clocks_at_max_explain_nothing) {
  const auto s = steady_summary(1980, gpu::ClockReasons::applications_clocks_setting);
  const auto r = make_report(FmaSpec{}, h100_result(FmaSpec{}, 60e12, 2), h100_facts(), &s);
  EXPECT_EQ(r.verdicts.front().kind, Verdict::Kind::full_clock);
  const auto low = steady_summary(1410, gpu::ClockReasons::applications_clocks_setting);
  const auto r2 = make_report(FmaSpec{}, h100_result(FmaSpec{}, 40e12, 2), h100_facts(), &low);
  EXPECT_EQ(r2.verdicts.front().kind, Verdict::Kind::app_clocks);
  EXPECT_NE(r2.verdicts.front().text.find("gpuclk reset --app-clocks"), std::string::npos);
}

TEST(bench_report_test, a_low_clock_without_a_reason_says_so) {
  const auto s = steady_summary(1410, 0);
  const auto r = make_report(FmaSpec{}, h100_result(FmaSpec{}, 40e12, 2), h100_facts(), &s);
  EXPECT_EQ(r.verdicts.front().kind, Verdict::Kind::clock_unexplained);
  EXPECT_NE(r.verdicts.front().text.find("median SM clock 1410 of 1980 MHz"), std::string::npos);
}

TEST(bench_report_test, spread_over_repetitions_gets_a_verdict_above_five_percent) {
  const auto s = steady_summary(1980, 0);
  const auto steady =
      make_report(FmaSpec{}, h100_result(FmaSpec{}, 60e12, 2, 0, 0.02), h100_facts(), &s);
  EXPECT_NEAR(steady.rate.spread, 0.02, 1e-9);
  EXPECT_FALSE(has_kind(steady, Verdict::Kind::spread));
  const auto jumpy =
      make_report(FmaSpec{}, h100_result(FmaSpec{}, 60e12, 2, 0, 0.12), h100_facts(), &s);
  ASSERT_TRUE(has_kind(jumpy, Verdict::Kind::spread));
  EXPECT_EQ(jumpy.verdicts.back().text,
            "repetitions varied by 12 % (min to max): clocks or power moved during the run");
}

TEST(bench_report_test, across_gpus_the_slowest_is_named_with_its_clock) {
  const auto full = steady_summary(1980, 0);
  const auto capped = steady_summary(1410, gpu::ClockReasons::sw_power_cap);
  const GemmSpec spec{GemmDtype::bf16};
  std::vector<WorkloadReport> reports = {
      make_report(spec, h100_result(spec, 700e12, 2, 0), h100_facts(0), &full),
      make_report(spec, h100_result(spec, 630e12, 2, 1), h100_facts(1), &capped),
      make_report(FmaSpec{}, h100_result(FmaSpec{}, 60e12, 2, 0), h100_facts(0), &full),
  };
  const auto across = compare_gpus(reports);
  ASSERT_EQ(across.size(), 1u);  // fma ran on one GPU only
  EXPECT_EQ(across[0].fastest, 0u);
  EXPECT_EQ(across[0].slowest, 1u);
  EXPECT_NEAR(across[0].slowest_vs_fastest, 0.9, 1e-12);
  EXPECT_EQ(across[0].verdict.rfind("GPU 1 is 10 % slower than GPU 0: its median SM clock was "
                                    "1410 MHz against 1980 MHz (SW power cap 100 % of the run",
                                    0),
            0u)
      << across[0].verdict;
}

TEST(bench_report_test, gpus_within_three_percent_are_called_even) {
  const auto full = steady_summary(1980, 0);
  const GemmSpec spec{GemmDtype::bf16};
  std::vector<WorkloadReport> reports = {
      make_report(spec, h100_result(spec, 700e12, 2, 0), h100_facts(0), &full),
      make_report(spec, h100_result(spec, 693e12, 2, 1), h100_facts(1), &full),
  };
  EXPECT_EQ(compare_gpus(reports).at(0).verdict, "GPUs within 1 % of each other");
}

}  // namespace
}  // namespace gpuclk::bench
