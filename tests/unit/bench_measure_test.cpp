// bench::measure with a scripted workload runner and scripted telemetry: windows are matched to
// the sampler's samples, one GPU's failure leaves the others' reports, concurrent runs report
// every GPU. Real time (a few hundred ms per test): the sampler runs its own threads.
#include <gtest/gtest.h>

#include <thread>

#include "bench/measure.h"
#include "bench_report_samples.h"
#include "telemetry_fakes.h"

namespace gpuclk::bench {
namespace {

using namespace std::chrono_literals;
using telemetry::testing::ScriptedSource;

// A GPU held at `mhz` with `reasons` set, drawing 690 W.
std::unique_ptr<telemetry::GpuSource> gpu_at(double mhz, std::uint64_t reasons) {
  auto source = std::make_unique<ScriptedSource>();
  source->gpu_info.max_sm_clock = units::Megahertz(1980);
  source->gpu_info.power_limit = units::Watts(700);
  source->fast = [=](telemetry::TimePoint, telemetry::FastSample& s) {
    s.sm_clock = units::Megahertz(mhz);
    s.memory_clock = units::Megahertz(2619);
    s.power = units::Watts(690);
    s.clock_reasons = gpu::ClockReasons(reasons);
  };
  return source;
}

// Runs for `seconds` of real time and reports `rate` over exactly that window.
Result timed_result(const WorkloadSpec& spec, int ordinal, double rate, double seconds = 0.25) {
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  Result r = testing::h100_result(spec, rate, seconds, ordinal);
  r.window_start = start;
  r.window_end = std::chrono::steady_clock::now();
  return r;
}

MeasureOptions fast_options() {
  MeasureOptions o;
  o.sample_interval = 10ms;
  o.run.seconds = 0.25;
  o.run.warmup_seconds = 0;
  return o;
}

TEST(bench_measure_test, each_report_summarizes_its_own_gpu_over_its_window) {
  const std::vector<WorkloadSpec> specs = {GemmSpec{GemmDtype::bf16}};
  const std::vector<Target> targets = {{testing::h100_facts(0), 0}, {testing::h100_facts(1), 1}};
  std::vector<std::unique_ptr<telemetry::GpuSource>> sources;
  sources.push_back(gpu_at(1980, 0));
  sources.push_back(gpu_at(1410, gpu::ClockReasons::sw_power_cap));
  Runner runner;
  std::vector<int> started;
  MeasureOptions options = fast_options();
  options.on_workload_start = [&](const WorkloadSpec&, std::span<const int> ordinals) {
    started.insert(started.end(), ordinals.begin(), ordinals.end());
  };
  runner.run = [](const WorkloadSpec& spec, int ordinal, const RunOptions&) {
    return timed_result(spec, ordinal, ordinal == 0 ? 700e12 : 600e12);
  };
  ScaledClock clock;
  const Measurement m = measure(specs, targets, std::move(sources), clock, options, runner);
  ASSERT_EQ(m.reports.size(), 2u);
  EXPECT_TRUE(m.errors.empty());
  EXPECT_EQ(started, (std::vector<int>{0, 1}));  // one at a time
  EXPECT_EQ(m.reports[0].gpu.index, 0u);
  EXPECT_DOUBLE_EQ(m.reports[0].sm_clock->median.value(), 1980);
  EXPECT_EQ(m.reports[0].verdicts.front().kind, Verdict::Kind::full_clock);
  EXPECT_DOUBLE_EQ(m.reports[1].sm_clock->median.value(), 1410);
  EXPECT_EQ(m.reports[1].verdicts.front().kind, Verdict::Kind::power_cap);
  EXPECT_NEAR(m.reports[1].power_mean->value(), 690, 1);
}

TEST(bench_measure_test, a_failing_gpu_becomes_an_error_and_the_others_go_on) {
  const std::vector<WorkloadSpec> specs = {GemmSpec{GemmDtype::fp8}};
  const std::vector<Target> targets = {{testing::h100_facts(0), 0}, {testing::h100_facts(1), 1}};
  std::vector<std::unique_ptr<telemetry::GpuSource>> sources;
  sources.push_back(gpu_at(1980, 0));
  sources.push_back(gpu_at(1980, 0));
  Runner runner;
  runner.run = [](const WorkloadSpec& spec, int ordinal, const RunOptions&) {
    if (ordinal == 0) throw Error(ExitCode::not_supported, "no fp8 kernel", "try bf16");
    return timed_result(spec, ordinal, 1000e12, 0.05);
  };
  ScaledClock clock;
  const Measurement m = measure(specs, targets, std::move(sources), clock, fast_options(), runner);
  ASSERT_EQ(m.reports.size(), 1u);
  EXPECT_EQ(m.reports[0].gpu.index, 1u);
  ASSERT_EQ(m.errors.size(), 1u);
  EXPECT_EQ(m.errors[0].gpu_index, 0u);
  EXPECT_EQ(m.errors[0].code, ExitCode::not_supported);
  EXPECT_EQ(m.errors[0].message, "no fp8 kernel");
  EXPECT_EQ(m.errors[0].variant, "fp8 8192x8192x8192");
}

TEST(bench_measure_test, concurrent_runs_start_every_gpu_at_once) {
  const std::vector<WorkloadSpec> specs = {FmaSpec{}};
  const std::vector<Target> targets = {{testing::h100_facts(0), 4}, {testing::h100_facts(1), 5}};
  std::vector<std::unique_ptr<telemetry::GpuSource>> sources;
  sources.push_back(gpu_at(1980, 0));
  sources.push_back(gpu_at(1980, 0));
  Runner runner;
  std::vector<std::vector<int>> calls;
  runner.run_concurrent = [&](const WorkloadSpec& spec, std::span<const int> ordinals,
                              const RunOptions&) {
    calls.emplace_back(ordinals.begin(), ordinals.end());
    std::vector<DeviceOutcome> outcomes;
    for (int o : ordinals) outcomes.push_back({o, timed_result(spec, o, 60e12, 0.05), nullptr});
    return outcomes;
  };
  MeasureOptions options = fast_options();
  options.concurrent = true;
  ScaledClock clock;
  const Measurement m = measure(specs, targets, std::move(sources), clock, options, runner);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0], (std::vector<int>{4, 5}));
  ASSERT_EQ(m.reports.size(), 2u);
  EXPECT_EQ(m.reports[1].cuda_ordinal, 5);
  EXPECT_EQ(compare_gpus(m.reports).size(), 1u);
}

TEST(bench_measure_test, expected_time_counts_every_gpu_unless_concurrent) {
  MeasureOptions o;
  o.run.seconds = 3;
  o.run.warmup_seconds = 1;
  EXPECT_DOUBLE_EQ(expected_seconds(2, 4, o), 2 * 4 * 5.0);
  o.concurrent = true;
  EXPECT_DOUBLE_EQ(expected_seconds(2, 4, o), 2 * 5.0);
}

}  // namespace
}  // namespace gpuclk::bench
