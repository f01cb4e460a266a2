#include <gtest/gtest.h>

#include "govern/geopm_policy.h"
#include "govern_test_support.h"

namespace gpuclk::govern {
namespace {

using namespace testing;

Decision decide(GeopmPolicy& p, const Signals& s) {
  const auto ladder = h100_ladder();
  return p.decide({s, classify(s), ladder, Decision::release()}).decision;
}

TEST(govern_geopm_policy_test, full_sm_activity_requests_fmax_even_when_memory_bound) {
  GeopmPolicy p(0.5, Megahertz(0));
  // SM_ACTIVE 0.99 / UTIL 1.0: f = Fe + 0.99 (Fmax - Fe) = 1590 + 0.99 x 390 = 1976.1 → 1980.
  EXPECT_EQ(decide(p, memory_bound(1980)), Decision::lock(Megahertz(1980), Megahertz(1980)));
}

TEST(govern_geopm_policy_test, no_utilisation_requests_the_efficient_frequency) {
  GeopmPolicy p(0.5, Megahertz(0));
  EXPECT_EQ(decide(p, idle(1980)), Decision::lock(Megahertz(1590), Megahertz(1590)));
  GeopmPolicy fe(0.5, Megahertz(1200));
  EXPECT_EQ(decide(fe, idle(1980)), Decision::lock(Megahertz(1200), Megahertz(1200)));
}

TEST(govern_geopm_policy_test, half_active_sms_request_the_midpoint) {
  GeopmPolicy p(0.5, Megahertz(1200));
  // 1200 + 0.5 x 780 = 1590.
  EXPECT_EQ(decide(p, busy(1980, 0.5, 0.3, 0.1, 1.0)),
            Decision::lock(Megahertz(1590), Megahertz(1590)));
}

TEST(govern_geopm_policy_test, phi_biases_towards_energy_or_performance) {
  // phi 0: Fmax moves down to Fe: every request is Fe.
  GeopmPolicy energy(0.0, Megahertz(1200));
  EXPECT_EQ(decide(energy, memory_bound(1980)), Decision::lock(Megahertz(1200), Megahertz(1200)));
  // phi 1: Fe moves up to Fmax: every request is Fmax.
  GeopmPolicy performance(1.0, Megahertz(1200));
  EXPECT_EQ(decide(performance, idle(1980)), Decision::lock(Megahertz(1980), Megahertz(1980)));
}

}  // namespace
}  // namespace gpuclk::govern
