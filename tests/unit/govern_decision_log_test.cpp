#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "govern/decision_log.h"
#include "govern_test_support.h"
#include "util/error.h"

namespace gpuclk::govern {
namespace {

namespace fs = std::filesystem;
using namespace testing;

fs::path temp_file(const char* name) {
  return fs::temp_directory_path() / (std::string(name) + "-" + std::to_string(::getpid()));
}

TEST(govern_decision_log_test, entry_round_trips_through_json) {
  LogEntry e;
  e.time = "2026-11-23T13:00:00Z";
  e.elapsed_s = 1.25;
  e.gpu = 2;
  e.uuid = "GPU-x";
  e.signals = memory_bound(1650);
  e.signals.power.reset();
  e.phase_class = PhaseClass::memory_bound;
  e.decision = Decision::lock(Megahertz(345), Megahertz(1650));
  e.written = true;
  e.reason = "memory_bound: predicted slowdown 2.1 %";
  const auto line = to_json_line(e);
  EXPECT_NE(line.find("\"power_w\":null"), std::string::npos);
  const auto back = entry_from_json_line(line);
  EXPECT_EQ(back.gpu, 2u);
  EXPECT_EQ(back.phase_class, PhaseClass::memory_bound);
  EXPECT_EQ(back.decision, e.decision);
  EXPECT_EQ(back.signals.sm_clock, Megahertz(1650));
  EXPECT_FALSE(back.signals.power);
  EXPECT_TRUE(back.written);
}

TEST(govern_decision_log_test, summary_adds_time_per_class) {
  const auto file = temp_file("govern-log");
  fs::remove(file);
  {
    DecisionLog log(file);
    const auto entry = [&](double t, Signals s, PhaseClass c, Decision d) {
      LogEntry e;
      e.time = "t";
      e.elapsed_s = t;
      e.signals = s;
      e.phase_class = c;
      e.decision = d;
      e.written = true;
      log.write(e);
    };
    entry(0, compute_bound(1980), PhaseClass::compute_bound, Decision::release());
    entry(2, idle(1980), PhaseClass::idle, Decision::lock(Megahertz(345), Megahertz(345)));
    entry(3, compute_bound(1980), PhaseClass::compute_bound, Decision::release());
    entry(4, compute_bound(1980), PhaseClass::compute_bound, Decision::release());
  }
  const auto s = summarize(file);
  fs::remove(file);
  EXPECT_EQ(s.entries, 4u);
  EXPECT_DOUBLE_EQ(s.seconds, 4);
  ASSERT_EQ(s.classes.size(), 2u);
  EXPECT_EQ(s.classes[0].phase_class, PhaseClass::compute_bound);
  EXPECT_DOUBLE_EQ(s.classes[0].seconds, 3);
  EXPECT_DOUBLE_EQ(s.classes[1].seconds, 1);
  EXPECT_DOUBLE_EQ(s.classes[1].mean_ceiling_mhz, 345);
  EXPECT_DOUBLE_EQ(s.classes[0].energy_j, 3 * 400);
}

TEST(govern_decision_log_test, power_is_booked_from_readings_whose_second_lies_in_one_class) {
  // The reading logged at a change averages the second before it: a 20 ms power-capped blip
  // must not get the idle phase's watts (issue 32: power_capped 101 W, compute 127 W below idle).
  const auto file = temp_file("govern-log-power");
  fs::remove(file);
  {
    DecisionLog log(file);
    const auto entry = [&](double t, Signals s, PhaseClass c, double watts) {
      LogEntry e;
      e.time = "t";
      e.elapsed_s = t;
      s.power = Watts(watts);
      e.signals = s;
      e.phase_class = c;
      log.write(e);
    };
    entry(0, idle(1980), PhaseClass::idle, 100);  // its second began before the log: not booked
    entry(2, compute_bound(1980), PhaseClass::compute_bound, 100);     // idle's second
    entry(2.02, power_capped(1410), PhaseClass::power_capped, 120);    // two classes
    entry(2.04, compute_bound(1980), PhaseClass::compute_bound, 130);  // two classes
    entry(4, idle(1980), PhaseClass::idle, 700);                       // compute's second
    entry(5, idle(1980), PhaseClass::idle, 110);                       // idle's second
  }
  const auto s = summarize(file);
  fs::remove(file);
  std::map<PhaseClass, const ClassSummary*> by_class;
  for (const auto& c : s.classes) by_class[c.phase_class] = &c;
  ASSERT_EQ(by_class.size(), 3u);
  EXPECT_DOUBLE_EQ(by_class[PhaseClass::compute_bound]->mean_power_w, 700);
  EXPECT_NEAR(by_class[PhaseClass::compute_bound]->energy_j, 700 * 1.98, 1e-9);
  EXPECT_DOUBLE_EQ(by_class[PhaseClass::idle]->mean_power_w, 105);
  EXPECT_TRUE(std::isnan(by_class[PhaseClass::power_capped]->mean_power_w));
  EXPECT_TRUE(std::isnan(by_class[PhaseClass::power_capped]->energy_j));
}

TEST(govern_decision_log_test, a_phase_held_under_the_cap_is_estimated_against_the_cap) {
  // A BF16 GEMM held at 1290 MHz under the controller's 1305 MHz logs as compute-bound; it lost
  // 1 − 1290/1305 of its time, not 1 − 1290/1980.
  const auto file = temp_file("govern-log-held");
  fs::remove(file);
  {
    DecisionLog log(file);
    LogEntry e;
    e.time = "t";
    e.elapsed_s = 0;
    e.signals = compute_bound(1290);
    e.phase_class = PhaseClass::compute_bound;
    e.decision = Decision::lock(Megahertz(345), Megahertz(1290));
    e.reason =
        "power-capped phase held under the cap: 1290 MHz, 1.2 % under the controller's 1305 MHz "
        "(budget left)";
    log.write(e);
    e.elapsed_s = 10;
    e.signals = compute_bound(1980);
    e.decision = Decision::release();
    e.reason = "compute_bound: throughput follows the clock (elasticity 1.00)";
    log.write(e);
    e.elapsed_s = 11;
    log.write(e);
  }
  const auto s = summarize(file);
  fs::remove(file);
  ASSERT_EQ(s.classes.size(), 1u);
  EXPECT_NEAR(s.classes[0].estimated_extra_seconds, 10 * (1 - 1290.0 / 1305), 1e-9);
}

TEST(govern_decision_log_test, malformed_line_names_the_line) {
  const auto file = temp_file("govern-bad-log");
  std::ofstream(file) << "{\"time\": \"t\"}\n";
  try {
    summarize(file);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
    EXPECT_NE(std::string(e.what()).find("line 1"), std::string::npos);
  }
  fs::remove(file);
}

}  // namespace
}  // namespace gpuclk::govern
