#include <gtest/gtest.h>

#include "gpu/clock_reasons.h"
#include "telemetry/verdict.h"

namespace gpuclk::telemetry {
namespace {

using namespace std::chrono_literals;
using gpu::ClockReasons;

const TimePoint t0{std::chrono::seconds(10)};

GpuInfo h100() {
  GpuInfo info;
  info.max_sm_clock = Megahertz(1980);
  return info;
}

// Samples every 100 ms, each made by `make(i)`; the window starts and ends half an interval
// beyond the first and last sample, so every sample stands for exactly 100 ms.
template <class Make>
Summary run(int samples, Make make) {
  SummaryBuilder b(t0 - 50ms);
  for (int i = 0; i < samples; ++i) {
    FastSample s;
    s.time = t0 + i * 100ms;
    s.power = Watts(690);
    s.gpu_utilization = Ratio(1.0);
    s.sm_clock = Megahertz(1980);
    s.clock_reasons = ClockReasons(0);
    make(i, s);
    b.add(s);
  }
  return b.finish(t0 + samples * 100ms - 50ms);
}

TEST(telemetry_verdict_test, power_capped_run_names_the_fraction_and_the_median_clock) {
  auto s = run(100, [](int i, FastSample& f) {
    if (i >= 7) {
      f.clock_reasons = ClockReasons(ClockReasons::sw_power_cap);
      f.sm_clock = Megahertz(1410);
    }
  });
  auto v = verdicts(s, h100());
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().kind, Verdict::Kind::power_capped);
  EXPECT_EQ(v.front().text, "power-capped 93 % of the time: median SM clock 1410 of 1980 MHz");
}

TEST(telemetry_verdict_test, idle_gaps_are_reported_after_the_limiters) {
  auto s = run(100, [](int i, FastSample& f) {
    if (i < 40)
      f.gpu_utilization = Ratio(0);
    else
      f.clock_reasons = ClockReasons(ClockReasons::sw_power_cap);
  });
  auto v = verdicts(s, h100());
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].kind, Verdict::Kind::power_capped);
  EXPECT_EQ(v[1].text, "idle 40 % of the time: the GPU waited on input");
}

TEST(telemetry_verdict_test, a_gpu_the_command_did_not_use_says_so_alone) {
  auto s = run(50, [](int, FastSample& f) {
    f.gpu_utilization = Ratio(0);
    f.clock_reasons = ClockReasons(ClockReasons::gpu_idle);
  });
  auto v = verdicts(s, h100());
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].kind, Verdict::Kind::unused);
}

TEST(telemetry_verdict_test, thermal_throttling_shows_the_hottest_reading) {
  auto s = run(100, [](int i, FastSample& f) {
    f.gpu_temperature = Celsius(i < 80 ? 80 : 88);
    if (i >= 80) {
      f.clock_reasons = ClockReasons(ClockReasons::sw_thermal_slowdown);
      f.sm_clock = Megahertz(1650);
    }
  });
  auto v = verdicts(s, h100());
  EXPECT_EQ(v.front().kind, Verdict::Kind::thermal);
  EXPECT_EQ(v.front().text,
            "thermally throttled 20 % of the time (max 88 C): median SM clock 1980 of 1980 MHz");
}

TEST(telemetry_verdict_test, an_unlimited_run_at_max_clock_is_full_clock) {
  auto v = verdicts(run(20, [](int, FastSample&) {}), h100());
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].kind, Verdict::Kind::full_clock);
  EXPECT_EQ(v[0].text, "no limit held the clock down: median SM clock 1980 of 1980 MHz");
}

TEST(telemetry_verdict_test, low_clock_without_a_reason_is_called_out) {
  auto v = verdicts(run(20, [](int, FastSample& f) { f.sm_clock = Megahertz(1500); }), h100());
  EXPECT_EQ(v.front().kind, Verdict::Kind::below_max);
}

TEST(telemetry_verdict_test, lost_gpu_comes_first) {
  SummaryBuilder b(t0);
  FastSample f;
  f.time = t0;
  f.sm_clock = Megahertz(1980);
  f.gpu_utilization = Ratio(1);
  b.add(f);
  b.mark_lost(t0 + 2s);
  auto v = verdicts(b.finish(t0 + 5s), h100());
  EXPECT_EQ(v.front().kind, Verdict::Kind::lost);
  EXPECT_EQ(v.front().text, "GPU lost after 2.0 s: the figures cover the time before");
}

TEST(telemetry_verdict_test, no_samples_is_no_data) {
  SummaryBuilder b(t0);
  auto v = verdicts(b.finish(t0 + 50ms), h100());
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].kind, Verdict::Kind::no_data);
}

}  // namespace
}  // namespace gpuclk::telemetry
