#include <gtest/gtest.h>

#include "govern/threshold_policy.h"
#include "govern_test_support.h"

namespace gpuclk::govern {
namespace {

using namespace testing;

Proposal decide(ThresholdPolicy& p, const Signals& s, Decision current) {
  const auto ladder = h100_ladder();
  return p.decide({s, classify(s), ladder, current});
}

TEST(govern_threshold_policy_test, high_utilisation_releases_to_max_boost) {
  ThresholdPolicy p;
  const auto locked = Decision::lock(Megahertz(1260), Megahertz(1260));
  EXPECT_EQ(decide(p, memory_bound(1260), locked).decision, Decision::release());
}

TEST(govern_threshold_policy_test, low_utilisation_locks_to_0_8_of_base) {
  ThresholdPolicy p;
  // 0.8 x 1590 = 1272 → the supported clock at or below it: 1260 MHz.
  const auto d = decide(p, idle(1980, 0.1), Decision::release()).decision;
  EXPECT_EQ(d, Decision::lock(Megahertz(1260), Megahertz(1260)));
}

TEST(govern_threshold_policy_test, in_between_keeps_the_last_decision) {
  ThresholdPolicy p;
  const auto locked = Decision::lock(Megahertz(1260), Megahertz(1260));
  EXPECT_EQ(decide(p, idle(1260, 0.5), locked).decision, locked);
  EXPECT_EQ(decide(p, idle(1980, 0.5), Decision::release()).decision, Decision::release());
}

TEST(govern_threshold_policy_test, memory_bound_work_at_full_utilisation_gets_max_clock) {
  // The rule looks at utilisation only: a copy kernel keeps the GPU 100 % "utilised".
  ThresholdPolicy p;
  EXPECT_EQ(decide(p, memory_bound(1980), Decision::release()).decision, Decision::release());
}

}  // namespace
}  // namespace gpuclk::govern
