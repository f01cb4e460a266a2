#include <gtest/gtest.h>

#include "gpu/clock_reasons.h"
#include "telemetry/summary.h"

namespace gpuclk::telemetry {
namespace {

using namespace std::chrono_literals;
using gpu::ClockReasons;

const TimePoint t0{std::chrono::seconds(100)};

FastSample fast_at(Duration offset, double watts, double sm_mhz = 1980, std::uint64_t reasons = 0) {
  FastSample s;
  s.time = t0 + offset;
  s.power = Watts(watts);
  s.sm_clock = Megahertz(sm_mhz);
  s.memory_clock = Megahertz(2619);
  s.clock_reasons = ClockReasons(reasons);
  s.gpu_utilization = Ratio(1.0);
  s.memory_utilization = Ratio(0.5);
  s.gpu_temperature = Celsius(50);
  return s;
}

SlowSample energy_at(Duration offset, double joules) {
  SlowSample s;
  s.time = t0 + offset;
  s.energy = Joules(joules);
  return s;
}

TEST(telemetry_summary_test, constant_power_integrates_to_power_times_time) {
  SummaryBuilder b(t0);
  for (int i = 0; i <= 100; ++i) b.add(fast_at(i * 100ms, 700));
  auto s = b.finish(t0 + 10s);
  ASSERT_TRUE(s.energy);
  EXPECT_EQ(s.energy_source, EnergySource::integrated_power);
  EXPECT_NEAR(s.energy->value(), 7000, 1e-6);
  EXPECT_NEAR(s.power_mean->value(), 700, 1e-9);
  EXPECT_DOUBLE_EQ(s.power_peak->value(), 700);
  EXPECT_EQ(s.fast_samples, 101u);
  EXPECT_DOUBLE_EQ(s.seconds(), 10);
}

TEST(telemetry_summary_test, energy_comes_from_the_counter_when_it_is_read) {
  SummaryBuilder b(t0);
  // Power readings say 500 W (one 700 W peak), the counter says 600 W: the counter wins inside
  // its span.
  for (int i = 0; i <= 100; ++i) {
    b.add(fast_at(i * 100ms, i == 50 ? 700 : 500));
    if (i == 10) b.add(energy_at(1s, 1000));
    if (i == 90) b.add(energy_at(9s, 1000 + 8 * 600));
  }
  auto s = b.finish(t0 + 10s);
  ASSERT_TRUE(s.energy);
  EXPECT_EQ(s.energy_source, EnergySource::counter);
  // 8 s from the counter at 600 W + 1 s before and 1 s after from power at 500 W.
  EXPECT_NEAR(s.energy->value(), 8 * 600 + 2 * 500, 1e-6);
  EXPECT_NEAR(s.power_mean->value(), 580, 1e-9);
  EXPECT_EQ(s.energy_note, "");
}

TEST(telemetry_summary_test, the_mean_is_never_above_the_peak) {
  // Issue 32: a 539.8 W mean above a 499.6 W peak. A counter mean above every reading gives
  // way to the readings' integral, and the note says so.
  SummaryBuilder b(t0);
  for (int i = 0; i <= 100; ++i) {
    b.add(fast_at(i * 100ms, 500));
    if (i == 10) b.add(energy_at(1s, 1000));
    if (i == 90) b.add(energy_at(9s, 1000 + 8 * 600));
  }
  auto s = b.finish(t0 + 10s);
  EXPECT_EQ(s.energy_source, EnergySource::integrated_power);
  EXPECT_NEAR(s.power_mean->value(), 500, 1e-9);
  EXPECT_NE(s.energy_note.find("above the highest power reading"), std::string::npos);
}

TEST(telemetry_summary_test, a_window_under_a_second_has_no_energy) {
  // Issue 32: 0.0 J and a 0.8 W mean beside a 400 W peak for a 20 ms run.
  SummaryBuilder b(t0);
  b.add(energy_at(0s, 1000));
  b.add(fast_at(0s, 400));
  b.add(energy_at(20ms, 1000));
  auto s = b.finish(t0 + 20ms);
  EXPECT_FALSE(s.energy);
  EXPECT_FALSE(s.power_mean);
  EXPECT_DOUBLE_EQ(s.power_peak->value(), 400);
  EXPECT_NE(s.energy_note.find("shorter than the counters resolve"), std::string::npos);
}

TEST(telemetry_summary_test, the_memory_share_is_integrated_and_absent_where_unread) {
  // An H100 reports its memory's power as a 1 s average: 100 W for 4 s, then 150 W for 6 s.
  SummaryBuilder b(t0);
  for (int i = 0; i <= 100; ++i) {
    auto f = fast_at(i * 100ms, 500);
    f.memory_power = Watts(i < 40 ? 100 : 150);
    b.add(f);
  }
  auto s = b.finish(t0 + 10s);
  ASSERT_TRUE(s.memory_energy);
  // Each reading holds until halfway to the next: 100 W up to 3.95 s, 150 W from there.
  EXPECT_NEAR(s.memory_energy->value(), 3.95 * 100 + 6.05 * 150, 1e-6);
  EXPECT_NEAR(s.memory_power_mean->value(), 130.25, 1e-9);
  // A board without the reading (before Hopper): no figure, not zero.
  SummaryBuilder none(t0);
  for (int i = 0; i <= 20; ++i) none.add(fast_at(i * 100ms, 500));
  auto n = none.finish(t0 + 2s);
  EXPECT_FALSE(n.memory_energy);
  EXPECT_FALSE(n.memory_power_mean);
}

TEST(telemetry_summary_test, a_counter_read_before_the_window_is_not_its_base) {
  // The service's stream gives `gpuclk stat` the last slow read before the command started: it
  // would have counted 0.6 s of energy the window never saw (stat through the service on the
  // simulator said 965 J where the simulator's truth was 778 J).
  SummaryBuilder b(t0);
  b.add(energy_at(-600ms, 0));
  for (int i = 0; i <= 20; ++i) {
    b.add(fast_at(i * 100ms, 400));
    if (i == 4) b.add(energy_at(400ms, 400));  // 400 W since -0.6 s
    if (i == 14) b.add(energy_at(1400ms, 800));
  }
  auto s = b.finish(t0 + 2s);
  EXPECT_EQ(s.energy_source, EnergySource::counter);
  EXPECT_EQ(s.slow_samples, 2u);
  EXPECT_NEAR(s.energy->value(), 800, 1e-6);  // 2 s at 400 W, not 2.6 s
}

TEST(telemetry_summary_test, one_counter_read_falls_back_to_integrated_power) {
  SummaryBuilder b(t0);
  b.add(energy_at(0s, 50));
  for (int i = 0; i <= 10; ++i) b.add(fast_at(i * 100ms, 100));
  auto s = b.finish(t0 + 1s);
  EXPECT_EQ(s.energy_source, EnergySource::integrated_power);
  EXPECT_NEAR(s.energy->value(), 100, 1e-9);
}

TEST(telemetry_summary_test, a_counter_that_goes_backwards_restarts_its_span) {
  SummaryBuilder b(t0);
  for (int i = 0; i <= 10; ++i) b.add(fast_at(i * 100ms, 100));
  b.add(energy_at(0s, 5000));
  b.add(energy_at(500ms, 10));  // driver reloaded: the counter restarted
  b.add(energy_at(1s, 60));
  auto s = b.finish(t0 + 1s);
  EXPECT_EQ(s.energy_source, EnergySource::counter);
  EXPECT_NEAR(s.energy->value(), 50 + 50, 1e-6);  // 0.5 s counter + 0.5 s of 100 W before it
}

TEST(telemetry_summary_test, clock_percentiles_are_time_weighted) {
  SummaryBuilder b(t0);
  // 1 s at 1980 MHz sampled 10 times, then 9 s at 1410 MHz sampled only 9 times (1 Hz).
  for (int i = 0; i < 10; ++i) b.add(fast_at(i * 100ms, 700, 1980));
  for (int i = 1; i <= 9; ++i) b.add(fast_at(std::chrono::seconds(i), 700, 1410));
  auto s = b.finish(t0 + 10s);
  ASSERT_TRUE(s.sm_clock);
  EXPECT_DOUBLE_EQ(s.sm_clock->median.value(), 1410);
  EXPECT_DOUBLE_EQ(s.sm_clock->p5.value(), 1410);
  EXPECT_DOUBLE_EQ(s.sm_clock->p95.value(), 1980);
  EXPECT_DOUBLE_EQ(s.sm_clock->max.value(), 1980);
  EXPECT_NEAR(s.sm_clock->mean.value(), (1980 * 0.95 + 1410 * 9.05) / 10, 1e-6);
}

TEST(telemetry_summary_test, reason_fractions_count_time_not_samples) {
  SummaryBuilder b(t0);
  // Power cap for the first 9.5 s (1 Hz samples), then idle, sampled fast.
  for (int i = 0; i <= 9; ++i)
    b.add(fast_at(std::chrono::seconds(i), 700, 1410, ClockReasons::sw_power_cap));
  b.add(fast_at(10s, 80, 345, ClockReasons::gpu_idle));
  for (int i = 1; i <= 10; ++i) b.add(fast_at(10s + i * 100ms, 80, 345, ClockReasons::gpu_idle));
  auto s = b.finish(t0 + 11s);
  EXPECT_NEAR(s.reason_fraction(ClockReasons::sw_power_cap)->value(), 9.5 / 11, 1e-9);
  EXPECT_NEAR(s.reason_fraction(ClockReasons::gpu_idle)->value(), 1.5 / 11, 1e-9);
  EXPECT_NEAR(s.reason_fraction(ClockReasons::sw_power_cap | ClockReasons::gpu_idle)->value(), 1,
              1e-9);
  ASSERT_EQ(s.clock_reasons.size(), 2u);
  EXPECT_EQ(s.clock_reasons[0].bit, ClockReasons::gpu_idle);
  EXPECT_EQ(s.clock_reasons[1].bit, ClockReasons::sw_power_cap);
}

TEST(telemetry_summary_test, no_reason_readings_means_unknown_not_zero) {
  SummaryBuilder b(t0);
  FastSample s = fast_at(0s, 100);
  s.clock_reasons.reset();
  b.add(s);
  EXPECT_FALSE(b.finish(t0 + 1s).reason_fraction(ClockReasons::sw_power_cap));
}

TEST(telemetry_summary_test, utilization_mean_gives_the_idle_fraction) {
  SummaryBuilder b(t0);
  for (int i = 0; i < 10; ++i) {
    FastSample s = fast_at(i * 100ms, 300);
    s.gpu_utilization = Ratio(i < 6 ? 1.0 : 0.0);
    b.add(s);
  }
  auto s = b.finish(t0 + 1s);
  EXPECT_NEAR(s.gpu_utilization->value(), 0.55, 1e-9);  // samples 0..5 cover [0, 0.55 s]
  EXPECT_NEAR(s.idle_fraction()->value(), 1 - s.gpu_utilization->value(), 1e-12);
}

TEST(telemetry_summary_test, gpm_means_weight_each_window_by_its_length) {
  SummaryBuilder b(t0);
  SlowSample a;
  a.time = t0 + 1s;
  a.gpm_window_start = t0;
  a.gpm = GpmActivity{};
  a.gpm->sm = Ratio(1.0);
  a.gpm->tensor = Ratio(0.9);
  b.add(a);
  SlowSample c = a;
  c.time = t0 + 4s;
  c.gpm_window_start = t0 + 1s;
  c.gpm->sm = Ratio(0.2);
  c.gpm->tensor.reset();
  b.add(c);
  auto s = b.finish(t0 + 4s);
  ASSERT_TRUE(s.gpm);
  EXPECT_NEAR(s.gpm->sm->value(), (1.0 * 1 + 0.2 * 3) / 4, 1e-12);
  EXPECT_NEAR(s.gpm->tensor->value(), 0.9, 1e-12);  // only the window that had it
  EXPECT_FALSE(s.gpm->dram);
}

TEST(telemetry_summary_test, violation_counters_give_exact_fractions) {
  SummaryBuilder b(t0);
  SlowSample a;
  a.time = t0;
  a.power_violation = std::chrono::nanoseconds(std::chrono::seconds(100));
  a.thermal_violation = std::chrono::nanoseconds(0);
  b.add(a);
  SlowSample c = a;
  c.time = t0 + 10s;
  c.power_violation = std::chrono::nanoseconds(std::chrono::seconds(109));
  b.add(c);
  auto s = b.finish(t0 + 10s);
  EXPECT_NEAR(s.power_violation->value(), 0.9, 1e-12);
  EXPECT_NEAR(s.thermal_violation->value(), 0.0, 1e-12);
}

TEST(telemetry_summary_test, a_lost_gpu_ends_the_window_where_it_was_lost) {
  SummaryBuilder b(t0);
  for (int i = 0; i <= 30; ++i) b.add(fast_at(i * 100ms, 400));
  b.mark_lost(t0 + 3s);
  b.add(fast_at(5s, 9999));  // ignored
  auto s = b.finish(t0 + 10s);
  EXPECT_TRUE(s.lost);
  EXPECT_DOUBLE_EQ(s.seconds(), 3);
  EXPECT_NEAR(s.energy->value(), 1200, 1e-6);
  EXPECT_DOUBLE_EQ(s.power_peak->value(), 400);
}

TEST(telemetry_summary_test, finish_leaves_the_builder_open) {
  SummaryBuilder b(t0);
  b.add(fast_at(0s, 100));
  auto first = b.finish(t0 + 1s);
  b.add(fast_at(1s, 300));
  auto second = b.finish(t0 + 2s);
  EXPECT_NEAR(first.energy->value(), 100, 1e-9);
  EXPECT_NEAR(second.energy->value(), 100 * 0.5 + 300 * 1.5, 1e-9);
}

TEST(telemetry_summary_test, empty_window_has_no_figures) {
  SummaryBuilder b(t0);
  auto s = b.finish(t0 + 1s);
  EXPECT_FALSE(s.energy);
  EXPECT_FALSE(s.power_mean);
  EXPECT_FALSE(s.sm_clock);
  EXPECT_FALSE(s.idle_fraction());
}

TEST(telemetry_summary_test, energy_source_names_say_which) {
  EXPECT_EQ(to_string(EnergySource::counter), "energy counter");
  EXPECT_EQ(to_string(EnergySource::integrated_power), "integrated power");
}

}  // namespace
}  // namespace gpuclk::telemetry
