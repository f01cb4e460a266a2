#include <gtest/gtest.h>

#include "govern/governor.h"
#include "govern/phase_policy.h"
#include "govern_test_support.h"

namespace gpuclk::govern {
namespace {

using namespace testing;

Governor phase_governor(int hold = 3) {
  GovernorOptions o;
  o.hold_ticks = hold;
  return Governor(std::make_unique<PhasePolicy>(0.03), h100_ladder(), o);
}

TEST(govern_governor_test, lowering_waits_for_hold_ticks_raising_is_at_once) {
  auto g = phase_governor(3);
  EXPECT_FALSE(g.step(idle(1980)).write);
  EXPECT_FALSE(g.step(idle(1980)).write);
  const auto third = g.step(idle(1980));
  EXPECT_TRUE(third.write);
  EXPECT_EQ(third.decision, Decision::lock(Megahertz(345), Megahertz(345)));
  // Work arrives: released in the same interval.
  const auto up = g.step(compute_bound(345));
  EXPECT_TRUE(up.write);
  EXPECT_EQ(up.decision, Decision::release());
  EXPECT_EQ(g.writes(), 2u);
}

TEST(govern_governor_test, class_changing_every_tick_does_not_write_every_tick) {
  auto g = phase_governor(3);
  // 1000 intervals alternating compute-bound and idle: each idle proposal is cut short.
  for (int i = 0; i < 1000; ++i) g.step(i % 2 ? idle(1980) : compute_bound(1980));
  EXPECT_EQ(g.writes(), 0u);
  // Alternating idle and memory-bound: both lower, so one write to the higher of the two,
  // then the memory-bound clock holds (idle's lower ask never lasts 3 intervals).
  auto h = phase_governor(3);
  for (int i = 0; i < 1000; ++i) h.step(i % 2 ? idle(1980) : memory_bound(1980));
  EXPECT_LE(h.writes(), 5u);
}

TEST(govern_governor_test, missing_readings_go_to_max_clock_at_once) {
  auto g = phase_governor(1);
  EXPECT_TRUE(g.step(idle(1980)).write);
  Signals broken;  // every read failed
  const auto s = g.step(broken);
  EXPECT_EQ(s.phase_class, PhaseClass::unknown);
  EXPECT_TRUE(s.write);
  EXPECT_EQ(s.decision, Decision::release());
}

TEST(govern_governor_test, a_failed_write_is_retried) {
  auto g = phase_governor(1);
  EXPECT_TRUE(g.step(idle(1980)).write);
  g.write_failed();
  EXPECT_TRUE(g.step(idle(1980)).write);
  EXPECT_FALSE(g.step(idle(345)).write);
}

TEST(govern_governor_test, stable_classes_lower_at_the_first_proposal) {
  auto g = phase_governor(3);
  // Five class runs of 12 intervals each (compute, idle, compute, idle, compute): stable.
  for (int run = 0; run < 5; ++run) {
    for (int i = 0; i < 12; ++i) g.step(run % 2 ? idle(1980) : compute_bound(1980));
  }
  const auto first_idle = g.step(idle(1980));
  EXPECT_TRUE(first_idle.write);  // no 3-interval hold any more
  EXPECT_EQ(first_idle.decision, Decision::lock(Megahertz(345), Megahertz(345)));
}

TEST(govern_governor_test, one_interval_transitions_do_not_make_a_workload_unstable) {
  // Phases of 8 intervals, each entered through a one-interval transition (the GPM window
  // that straddles two phases reads another class): still stable, so a lowering is written
  // at the first proposal.
  auto g = phase_governor(3);
  for (int run = 0; run < 5; ++run) {
    g.step(memory_bound(1980, 0.3));  // classifies compute-bound: a transition
    for (int i = 0; i < 8; ++i) g.step(run % 2 ? idle(1980) : compute_bound(1980));
  }
  const auto first_idle = g.step(idle(1980));
  EXPECT_TRUE(first_idle.write);
  EXPECT_EQ(first_idle.decision, Decision::lock(Megahertz(345), Megahertz(345)));
}

TEST(govern_governor_test, idle_after_work_that_ran_a_while_lowers_at_once) {
  // The first phase of a job (no history: not stable), then the work stops. The idle clock
  // slows nothing, so it is written at the first idle interval, also through a one-interval
  // transition (the GPM window that straddles the end of the phase).
  auto g = phase_governor(3);
  for (int i = 0; i < 20; ++i) g.step(compute_bound(1980));
  g.step(memory_bound(1980, 0.3));  // classifies compute-bound: the phase ending mid-interval
  const auto first_idle = g.step(idle(1980));
  EXPECT_TRUE(first_idle.write);
  EXPECT_EQ(first_idle.decision, Decision::lock(Megahertz(345), Megahertz(345)));
  // Work that ran only an interval or two before stopping is not "work that stopped": a short
  // burst inside a flapping stretch keeps the hold.
  auto h = phase_governor(3);
  for (int i = 0; i < 20; ++i) h.step(compute_bound(1980));
  h.step(idle(1980));
  h.step(compute_bound(1980));
  h.step(idle(1980));
  h.step(compute_bound(1980));
  EXPECT_FALSE(h.step(idle(1980)).write);
}

}  // namespace
}  // namespace gpuclk::govern
