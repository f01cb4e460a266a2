#include <gtest/gtest.h>

#include <vector>

#include "govern/budget.h"
#include "govern/phase_policy.h"
#include "govern_test_support.h"

namespace gpuclk::govern {
namespace {

using namespace testing;
using Kind = SlowdownBudget::Kind;

Signals at(Signals s, double time_s) {
  s.time_s = time_s;
  return s;
}

TEST(govern_budget_test, only_compute_earns_nothing_to_spend_under_the_cap) {
  // The compute-bound goal: a job of nothing but compute is never held under the cap.
  SlowdownBudget b(0.03);
  const auto ladder = h100_ladder();
  for (int i = 0; i < 500; ++i) b.account(i * 0.02, i % 2 ? Kind::capped : Kind::neutral, 0);
  EXPECT_EQ(b.capped_allowance(), 0);
  const auto s = at(power_capped(1410), 10);
  EXPECT_EQ(b.capped({s, PhaseClass::power_capped, ladder, Decision::release()}).decision,
            Decision::release());
}

TEST(govern_budget_test, idle_time_earns_what_a_capped_phase_may_spend) {
  SlowdownBudget b(0.03);
  // 1 s idle earns 0.03 s; 0.5 s power-capped: 6 %, but never more than twice the budget.
  for (int i = 0; i <= 50; ++i) b.account(i * 0.02, Kind::earns, 0);
  for (int i = 51; i <= 75; ++i) b.account(i * 0.02, Kind::capped, 0);
  EXPECT_NEAR(b.capped_allowance(), 0.06, 1e-9);
  for (int i = 76; i <= 200; ++i) b.account(i * 0.02, Kind::capped, 0);
  EXPECT_NEAR(b.capped_allowance(), 0.03 / 3.0, 1e-9);
  // What memory-bound intervals lose is spent from the same account.
  b.account(4.02, Kind::earns, 1.0);
  EXPECT_LT(b.capped_allowance(), 0.03 / 3.0 - 0.005);
}

TEST(govern_budget_test, a_gap_in_the_readings_books_no_more_than_one_long_interval) {
  SlowdownBudget b(0.03);
  for (int i = 0; i <= 50; ++i) b.account(i * 0.02, Kind::capped, 0);  // 1 s power-capped
  b.account(0, Kind::neutral, 0);  // missing readings: no time, nothing booked
  b.account(60, Kind::earns, 0);   // a minute later: at most kMaxBookedS of it earns
  EXPECT_NEAR(b.capped_allowance(), 0.03 * SlowdownBudget::kMaxBookedS / 1.0, 1e-9);
}

TEST(govern_budget_test, a_capped_phase_is_held_under_the_cap_and_probed) {
  SlowdownBudget b(0.03);
  const auto ladder = h100_ladder();
  for (int i = 0; i <= 100; ++i) b.account(i * 0.02, Kind::earns, 0);
  auto p = b.capped(
      {at(power_capped(1410), 2.02), PhaseClass::power_capped, ladder, Decision::release()});
  ASSERT_TRUE(p.decision.locked);
  // Below the controller's 1410 MHz by no more than the allowance (twice the budget: 6 %).
  EXPECT_LT(p.decision.max.value(), 1410);
  EXPECT_GE(p.decision.max.value(), 1410 / 1.06);
  EXPECT_NE(p.reason.find("under the controller's 1410 MHz"), std::string::npos);
  // Under the lock the GEMM no longer reads power-capped; the same kernel keeps the lock.
  Decision current = p.decision;
  const double f = current.max.value();
  int probe = -1;
  for (int i = 0; i < SlowdownBudget::kProbeIntervals + 5; ++i) {
    auto held =
        b.held({at(compute_bound(f), 2.04 + i * 0.02), PhaseClass::compute_bound, ladder, current});
    ASSERT_TRUE(held.has_value());
    if (!held->decision.locked) {
      probe = i;
      break;
    }
    EXPECT_EQ(held->decision, current);
  }
  // Every kProbeIntervals the lock is released once, to see whether the controller still caps.
  EXPECT_EQ(probe, SlowdownBudget::kProbeIntervals - 1);
}

TEST(govern_budget_test, another_kernel_after_the_capped_one_is_not_held) {
  SlowdownBudget b(0.03);
  const auto ladder = h100_ladder();
  for (int i = 0; i <= 100; ++i) b.account(i * 0.02, Kind::earns, 0);
  const auto p = b.capped(
      {at(power_capped(1410), 2.02), PhaseClass::power_capped, ladder, Decision::release()});
  ASSERT_TRUE(p.decision.locked);
  // A compute-bound kernel with another mix (FP32, no tensor activity) under the lock.
  auto fp32 = busy(p.decision.max.value(), 0.96, 0, 0.1);
  fp32.fp32_active = Ratio(0.5);
  EXPECT_FALSE(b.held({at(fp32, 2.04), PhaseClass::compute_bound, ladder, p.decision}));
}

TEST(govern_budget_test, phase_spends_idle_budget_under_the_cap_not_on_pure_compute) {
  const auto ladder = h100_ladder();
  PhasePolicy idle_then_capped(0.03);
  Decision current = Decision::release();
  double t = 0;
  for (int i = 0; i < 100; ++i, t += 0.02) {
    current =
        idle_then_capped.decide({at(idle(345), t), PhaseClass::idle, ladder, current}).decision;
  }
  current = idle_then_capped
                .decide({at(power_capped(1410), t), PhaseClass::power_capped, ladder, current})
                .decision;
  EXPECT_TRUE(current.locked);
  EXPECT_LT(current.max.value(), 1410);

  PhasePolicy only_capped(0.03);
  current = Decision::release();
  t = 0;
  for (int i = 0; i < 100; ++i, t += 0.02) {
    current =
        only_capped.decide({at(power_capped(1410), t), PhaseClass::power_capped, ladder, current})
            .decision;
    EXPECT_EQ(current, Decision::release());
  }
}

TEST(govern_budget_test, what_a_held_phase_spends_does_not_ration_it_down) {
  // 2 s idle earn 0.06 s; a power-capped phase held at a loss of 2 %. The allowance is what the
  // other phases left over the capped time so far, not the spare after the held phase's own
  // spending, which would shrink it as the phase goes on (to half of what it may take).
  SlowdownBudget b(0.03);
  for (int i = 0; i <= 100; ++i) b.account(i * 0.02, Kind::earns, 0);
  for (int i = 101; i <= 150; ++i) b.account(i * 0.02, Kind::capped, 0.02);
  EXPECT_NEAR(b.capped_allowance(), 0.03 * 2.0 / 1.0, 1e-9);  // 0.06 s over 1 s capped: 6 %
  for (int i = 151; i <= 200; ++i) b.account(i * 0.02, Kind::capped, 0.02);
  EXPECT_NEAR(b.capped_allowance(), 0.03, 1e-9);  // 0.06 s over 2 s (0.04 s of it spent)
  // Once the ledger as a whole is spent, nothing is left.
  for (int i = 201; i <= 300; ++i) b.account(i * 0.02, Kind::capped, 0.02);  // 0.08 s spent
  EXPECT_EQ(b.capped_allowance(), 0);
}

TEST(govern_budget_test, with_no_budget_idle_holds_the_clock_the_next_burst_runs_at) {
  // --max-slowdown 0: a burst entered from the lowest clock runs its first interval slower. Idle
  // holds the base clock until a power-capped burst is seen, then the controller's clock.
  const auto ladder = h100_ladder();
  PhasePolicy p(0.0);
  Decision current = Decision::release();
  double t = 0;
  current = p.decide({at(idle(1980), t += 0.02), PhaseClass::idle, ladder, current}).decision;
  EXPECT_EQ(current, Decision::lock(Megahertz(345), Megahertz(1590)));
  current = p.decide({at(power_capped(1410), t += 0.02), PhaseClass::power_capped, ladder, current})
                .decision;
  EXPECT_EQ(current, Decision::release());  // no budget: nothing under the cap
  current = p.decide({at(idle(1410), t += 0.02), PhaseClass::idle, ladder, current}).decision;
  EXPECT_EQ(current, Decision::lock(Megahertz(345), Megahertz(1410)));
  // With a budget, idle is the lowest clock.
  PhasePolicy q(0.03);
  EXPECT_EQ(
      q.decide({at(idle(1980), 0.02), PhaseClass::idle, ladder, Decision::release()}).decision,
      Decision::lock(Megahertz(345), Megahertz(345)));
}

// Feeds `b` one interval of 20 ms: books it (spending nothing), observes it, and returns what
// an idle interval would be proposed now.
struct GapRun {
  SlowdownBudget b{0.03};
  ClockLadder ladder = h100_ladder();
  double t = 0;
  Decision step(const Signals& s) {
    const auto c = classify(s);
    const PolicyInput in{at(s, t += 0.02), c, ladder, Decision::release()};
    b.account(in.signals.time_s, c == PhaseClass::idle ? Kind::earns : Kind::capped, 0);
    b.observe(in);
    return c == PhaseClass::idle ? b.idle(in).decision : Decision::release();
  }
  // An idle gap of `n` intervals, then a power-capped burst at `cap` MHz of `burst` intervals;
  // returns the clock each gap interval was given.
  std::vector<double> pass(int n, double cap, int burst) {
    std::vector<double> clocks;
    for (int i = 0; i < n; ++i) clocks.push_back(step(idle(345)).max.value());
    for (int i = 0; i < burst; ++i) step(power_capped(cap));
    return clocks;
  }
};

TEST(govern_budget_test, a_repeating_gap_ends_at_the_clock_the_phase_after_it_ran_at) {
  // The ledger is short (a long power-capped phase, a short gap): the burst after the gap would
  // be entered from the lowest clock and lose most of an interval's work. The second gap rises
  // to the controller's clock one interval before the first one's length.
  GapRun r;
  r.pass(20, 1410, 100);
  const auto clocks = r.pass(20, 1410, 100);
  for (int i = 0; i < 18; ++i) EXPECT_EQ(clocks[i], 345) << i;
  EXPECT_EQ(clocks[18], 1410);
  EXPECT_EQ(clocks[19], 1410);
  // The interval that ends the gap loses against that clock, not the top one.
  const PolicyInput entry{at(compute_bound(1410), r.t + 0.02), PhaseClass::compute_bound, r.ladder,
                          Decision::lock(Megahertz(345), Megahertz(1410))};
  EXPECT_EQ(r.b.entry_clock(entry), 0);  // the gap of the last pass already ended
  r.step(idle(345));
  EXPECT_EQ(r.b.entry_clock(entry), 1410);
}

TEST(govern_budget_test, gaps_of_a_repeating_pattern_rise_to_their_own_next_phase) {
  // Two gaps per pass (12 then 20 intervals), each followed by another burst: period 2.
  GapRun r;
  for (int pass = 0; pass < 2; ++pass) {
    r.pass(12, 1410, 50);
    r.pass(20, 1305, 50);
  }
  const auto a = r.pass(12, 1410, 50);
  EXPECT_EQ(a[10], 1410);
  EXPECT_EQ(a[9], 345);
  const auto b = r.pass(20, 1305, 50);
  EXPECT_EQ(b[18], 1305);
  EXPECT_EQ(b[10], 345);  // not at the other gap's length
}

TEST(govern_budget_test, gaps_that_do_not_repeat_or_are_short_keep_the_lowest_clock) {
  // The second gap takes the first one's length (one gap remembered: nothing says otherwise),
  // and is longer; from then on no period fits the lengths.
  GapRun varying;
  varying.pass(12, 1410, 50);
  varying.pass(25, 1410, 50);
  for (int n : {16, 31, 12, 20}) {
    for (double f : varying.pass(n, 1410, 50)) EXPECT_EQ(f, 345) << n;
  }
  // Under kRiseMinGap intervals one interval at the burst's clock costs more than a tenth of
  // what the gap saves: a 4-interval gap (the stencil's halo exchange) stays at the lowest clock.
  GapRun short_gaps;
  for (int pass = 0; pass < 4; ++pass) {
    for (double f : short_gaps.pass(4, 1590, 50)) EXPECT_EQ(f, 345);
  }
  // With budget to spare (the capped phase may take all it is allowed) there is no rise either:
  // the time the entry loses is not worth the rise's energy.
  GapRun spare;
  for (int pass = 0; pass < 4; ++pass) {
    for (double f : spare.pass(200, 1410, 2)) EXPECT_EQ(f, 345);
  }
}

}  // namespace
}  // namespace gpuclk::govern
