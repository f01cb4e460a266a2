#include <gtest/gtest.h>

#include "govern/phase_policy.h"
#include "govern_test_support.h"

namespace gpuclk::govern {
namespace {

using namespace testing;

struct PolicyRun {
  PhasePolicy policy{0.03};
  ClockLadder ladder = h100_ladder();
  Decision current = Decision::release();
  Proposal step(const Signals& s) {
    auto p = policy.decide({s, classify(s), ladder, current});
    current = p.decision;
    return p;
  }
};

TEST(govern_phase_policy_test, compute_bound_and_power_capped_keep_the_clock) {
  PolicyRun r;
  EXPECT_EQ(r.step(compute_bound(1980)).decision, Decision::release());
  EXPECT_EQ(r.step(power_capped(1410)).decision, Decision::release());
}

TEST(govern_phase_policy_test, idle_with_context_gets_the_lowest_clock) {
  PolicyRun r;
  EXPECT_EQ(r.step(idle(1980)).decision, Decision::lock(Megahertz(345), Megahertz(345)));
}

TEST(govern_phase_policy_test, missing_readings_release) {
  PolicyRun r;
  r.current = Decision::lock(Megahertz(345), Megahertz(345));
  auto s = memory_bound(345);
  s.sm_active.reset();
  const auto p = r.step(s);
  EXPECT_EQ(p.decision, Decision::release());
  EXPECT_NE(p.reason.find("missing"), std::string::npos);
}

TEST(govern_phase_policy_test, memory_bound_descends_a_step_at_a_time_and_learns_the_knee) {
  PolicyRun r;
  // A bandwidth curve like the H100 model's: 1.0 at 1980, -1.2 % at 1830, -3.7 % at 1530.
  const auto dram = [](double f) {
    const double x = f / 1980;
    return 0.895 * (x >= 0.85 ? 1 - (1 - x) * 0.155 : 0.9765 - (0.85 - x) * 0.27);
  };
  double f = 1980;
  double lowest = f;
  for (int i = 0; i < 200; ++i) {
    const auto p = r.step(memory_bound(f, dram(f)));
    const double next = p.decision.ceiling_or(Megahertz(1980)).value();
    // Never more than one exploration step below what it has seen.
    EXPECT_GE(next, lowest - PhasePolicy::kExploreStepMhz - 15);
    f = next;
    lowest = std::min(lowest, f);
  }
  // It settles where the true slowdown is within the budget, well below the top clock.
  const double slowdown = dram(1980) / dram(f) - 1;
  EXPECT_LE(slowdown, 0.03);
  EXPECT_LT(f, 1750);
  EXPECT_GT(r.policy.sensitivity(PhaseClass::memory_bound).pairs(), 0u);
}

TEST(govern_phase_policy_test, throughput_proxy_follows_the_bound_unit) {
  EXPECT_NEAR(throughput_proxy(memory_bound(1980, 0.5), PhaseClass::memory_bound), 0.5 * 2619,
              1e-9);
  EXPECT_NEAR(throughput_proxy(compute_bound(1500), PhaseClass::compute_bound), 0.89 * 1500, 1e-9);
  EXPECT_EQ(throughput_proxy(idle(1980), PhaseClass::idle), 0);
}

TEST(govern_phase_policy_test, a_memory_phase_ending_inside_an_interval_lowers_when_sms_idle) {
  const auto ladder = h100_ladder();
  const auto run_memory_phase = [&](PhasePolicy& p) {
    Decision current = Decision::lock(Megahertz(345), Megahertz(1830));
    for (int i = 0; i < 5; ++i) {
      current = p.decide({memory_bound(1830), PhaseClass::memory_bound, ladder, current}).decision;
    }
    return current;
  };
  // SM and DRAM activity over half the phase's, no pipe busy: reads compute-bound; the memory
  // phase ended late in the interval and the next one tells what follows: the clock is kept.
  PhasePolicy late(0.03);
  Decision current = run_memory_phase(late);
  const auto late_tail = busy(current.ceiling_or(ladder.max()).value(), 0.6, 0, 0.3);
  ASSERT_EQ(classify(late_tail), PhaseClass::compute_bound);
  const auto kept = late.decide({late_tail, PhaseClass::compute_bound, ladder, current});
  EXPECT_EQ(kept.decision, current);
  EXPECT_NE(kept.reason.find("memory-bound phase ending"), std::string::npos);
  // A quarter of it: the SMs ran nothing for most of the interval, and no pipe started: the idle
  // clock at once (GEOPM's agent lowers there by SM_ACTIVE / UTIL), not the memory phase's.
  PhasePolicy early(0.03);
  current = run_memory_phase(early);
  const auto tail = busy(current.ceiling_or(ladder.max()).value(), 0.24, 0, 0.21);
  ASSERT_EQ(classify(tail), PhaseClass::compute_bound);
  const auto lowered = early.decide({tail, PhaseClass::compute_bound, ladder, current});
  EXPECT_EQ(lowered.decision, Decision::lock(Megahertz(345), Megahertz(345)));
  EXPECT_NE(lowered.reason.find("memory-bound phase ended"), std::string::npos);
  // With no budget, the idle clock is the one the next burst runs at (the base clock here).
  PhasePolicy none(0.0);
  current = run_memory_phase(none);
  EXPECT_EQ(none.decide({tail, PhaseClass::compute_bound, ladder, current}).decision,
            Decision::lock(Megahertz(345), Megahertz(1590)));
}

}  // namespace
}  // namespace gpuclk::govern
