#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <vector>

#include "govern/bandit_policy.h"
#include "govern_test_support.h"

namespace gpuclk::govern {
namespace {

using namespace testing;

struct PolicyRun {
  BanditPolicy policy{0.03};
  ClockLadder ladder = h100_ladder();
  Decision current = Decision::release();
  // Each decision takes effect at once (no hysteresis here); returns the clock now.
  double step(const std::function<Signals(double)>& at) {
    const double f = current.ceiling_or(ladder.max()).value();
    const auto s = at(f);
    current = policy.decide({s, classify(s), ladder, current}).decision;
    return current.ceiling_or(ladder.max()).value();
  }
};

TEST(govern_bandit_policy_test, compute_bound_settles_on_the_top_arm) {
  PolicyRun r;
  std::map<double, int> time_at;
  for (int i = 0; i < 3000; ++i) ++time_at[r.step([](double f) { return compute_bound(f); })];
  // Exploration descends: the arm below the top was over the budget, so no lower one was
  // ever tried; the top one held nearly always.
  EXPECT_EQ(time_at.size(), 2u);
  EXPECT_GT(time_at[1980], 2900);
}

TEST(govern_bandit_policy_test, memory_phases_of_different_efficiency_are_not_compared) {
  // Two memory-bound phases in turn, 100 intervals each with an idle interval between: a
  // decode at 55 % and one at 70 % of the bandwidth, the same knee. One reference for both
  // would read every 55 % interval as ~15 % slower than the top arm and keep the clock high.
  PolicyRun r;
  const auto knee = [](double f) {
    const double x = f / 1980;
    return x >= 0.85 ? 1 - (1 - x) * 0.155 : 0.9765 - (0.85 - x) * 0.27;
  };
  std::map<double, int> time_at;
  for (int run = 0; run < 40; ++run) {
    const double efficiency = run % 2 ? 0.55 : 0.70;
    r.step([](double f) { return idle(f); });
    for (int i = 0; i < 100; ++i) {
      ++time_at[r.step([&](double f) { return memory_bound(f, efficiency * knee(f)); })];
    }
  }
  const auto most = std::max_element(time_at.begin(), time_at.end(),
                                     [](auto& a, auto& b) { return a.second < b.second; });
  EXPECT_LT(most->first, 1800);
  EXPECT_LE(knee(1980) / knee(most->first) - 1, 0.03);
}

TEST(govern_bandit_policy_test, memory_bound_settles_below_the_top_within_the_budget) {
  PolicyRun r;
  const auto dram = [](double f) {
    const double x = f / 1980;
    return 0.895 * (x >= 0.85 ? 1 - (1 - x) * 0.155 : 0.9765 - (0.85 - x) * 0.27);
  };
  std::map<double, int> time_at;
  for (int i = 0; i < 3000; ++i) {
    ++time_at[r.step([&](double f) { return memory_bound(f, dram(f)); })];
  }
  const auto most = std::max_element(time_at.begin(), time_at.end(),
                                     [](auto& a, auto& b) { return a.second < b.second; });
  EXPECT_LT(most->first, 1980);
  EXPECT_LE(dram(1980) / dram(most->first) - 1, 0.03);
}

TEST(govern_bandit_policy_test, idle_goes_to_the_lowest_clock_at_once) {
  // Nothing runs, nothing to slow: no arm to explore.
  PolicyRun r;
  EXPECT_EQ(r.step([](double c) { return idle(c); }), 345);
  EXPECT_TRUE(r.policy.arms(PhaseClass::idle).empty() ||
              r.policy.arms(PhaseClass::idle)[0].pulls == 0);
}

TEST(govern_bandit_policy_test, power_capped_and_missing_data_release) {
  PolicyRun r;  // no idle or memory-bound time yet: no budget to spend under the cap
  r.current = Decision::lock(Megahertz(345), Megahertz(1500));
  EXPECT_EQ(r.step([](double f) { return power_capped(f); }), 1980);
  r.current = Decision::lock(Megahertz(345), Megahertz(1500));
  EXPECT_EQ(r.step([](double f) {
    auto s = memory_bound(f);
    s.dram_active.reset();
    return s;
  }),
            1980);
}

TEST(govern_bandit_policy_test, exploration_skips_arms_the_measured_elasticity_puts_within_budget) {
  // A memory-bound phase that loses 0.3 % per 10 % of clock down to 0.8 × max: the first arm
  // below the top measures an elasticity that puts several arms within the budget, so the
  // second arm tried is not the next one down but a lower one.
  PolicyRun r;
  const auto bandwidth = [](double f) { return 0.895 * std::pow(f / 1980, 0.03); };
  std::vector<double> tried;
  for (int i = 0; i < 40; ++i) {
    const double f = r.step([&](double clock) { return memory_bound(clock, bandwidth(clock)); });
    if (tried.empty() || tried.back() != f) tried.push_back(f);
  }
  ASSERT_GE(tried.size(), 3u);
  EXPECT_EQ(tried[0], 1980);
  EXPECT_EQ(tried[1], 1935);       // the arm below the top, as before
  EXPECT_LT(tried[2], 1935 - 45);  // then a jump of more than one arm
}

TEST(govern_bandit_policy_test, a_memory_phase_ending_inside_an_interval_keeps_its_arm) {
  // The interval in which a memory-bound phase ends reads compute-bound (DRAM under 40 %) with
  // no pipe busy: not a compute phase to release the clock for. With the SMs busy over half of
  // it the arm is kept (the next interval tells what follows); with the SMs busy a quarter of it
  // nothing ran for most of it, and no pipe started: the idle clock at once.
  PolicyRun r;
  double f = 1980;
  for (int i = 0; i < 60; ++i) f = r.step([](double clock) { return memory_bound(clock); });
  ASSERT_LT(f, 1980);
  const auto late_tail = busy(f, 0.6, 0, 0.3);
  ASSERT_EQ(classify(late_tail), PhaseClass::compute_bound);
  EXPECT_EQ(r.policy.decide({late_tail, PhaseClass::compute_bound, r.ladder, r.current}).decision,
            r.current);
  f = r.step([](double clock) { return memory_bound(clock); });
  const auto tail = busy(f, 0.24, 0, 0.21);
  ASSERT_EQ(classify(tail), PhaseClass::compute_bound);
  const auto p = r.policy.decide({tail, PhaseClass::compute_bound, r.ladder, r.current});
  EXPECT_EQ(p.decision, Decision::lock(Megahertz(345), Megahertz(345)));
  // A compute phase (its pipes busy) after the memory-bound one is released as before.
  const auto gemm = compute_bound(f);
  EXPECT_EQ(r.policy.decide({gemm, PhaseClass::compute_bound, r.ladder, r.current}).decision,
            Decision::release());
}

TEST(govern_bandit_policy_test, with_no_budget_no_arm_below_the_top_is_tried) {
  BanditPolicy policy(0.0);
  const auto ladder = h100_ladder();
  Decision current = Decision::release();
  for (int i = 0; i < 200; ++i) {
    const auto s = memory_bound(current.ceiling_or(ladder.max()).value());
    current = policy.decide({s, classify(s), ladder, current}).decision;
    ASSERT_EQ(current, Decision::release());
  }
}

}  // namespace
}  // namespace gpuclk::govern
