// serve::FindingsHold: /metrics' findings held over a window with hysteresis, so that one look's
// finding (hotter_than_peers in 2 of 21 scrapes, issue 42) does not come and go with the load.
#include <gtest/gtest.h>

#include "serve/findings.h"

namespace gpuclk::serve {
namespace {

using namespace std::chrono_literals;

rules::Finding finding(const std::string& rule, unsigned gpu) {
  rules::Finding f;
  f.rule = rule;
  f.gpus = {gpu};
  f.summary = rule + " on GPU " + std::to_string(gpu);
  return f;
}

bool has(const std::vector<rules::Finding>& held, const std::string& rule, unsigned gpu) {
  for (const auto& f : held)
    if (f.rule == rule && f.gpus == std::vector<unsigned>{gpu}) return true;
  return false;
}

TEST(serve_findings_test, a_finding_seen_now_and_then_never_shows) {
  FindingsHold hold;
  const auto t0 = FindingsHold::TimePoint{};
  const auto steady = finding("persistence_off", 0);
  for (int i = 0; i < 21; ++i) {
    std::vector<rules::Finding> look{steady};
    // hotter_than_peers in looks 5 and 13 only, each time on another GPU.
    if (i == 5) look.push_back(finding("hotter_than_peers", 1));
    if (i == 13) look.push_back(finding("hotter_than_peers", 3));
    const auto held = hold.update(look, t0 + i * 1s);
    EXPECT_TRUE(has(held, "persistence_off", 0)) << "look " << i;  // seen in every look: at once
    EXPECT_FALSE(has(held, "hotter_than_peers", 1)) << "look " << i;
    EXPECT_FALSE(has(held, "hotter_than_peers", 3)) << "look " << i;
  }
}

TEST(serve_findings_test, a_held_finding_stays_through_a_gap_and_goes_when_it_is_gone) {
  FindingsHold hold({.window = 20s, .raise = 0.5, .clear = 0.2});
  const auto t0 = FindingsHold::TimePoint{};
  int t = 0;
  const auto look = [&](bool seen) {
    return hold.update(
        seen ? std::vector{finding("thermal_slowdown", 2)} : std::vector<rules::Finding>{},
        t0 + (t++) * 1s);
  };
  for (int i = 0; i < 20; ++i) look(i % 4 != 0);  // 75 % of the looks, the first one missed
  EXPECT_TRUE(has(look(true), "thermal_slowdown", 2));
  // Gone for a few looks (share still above `clear`): still shown, as last seen.
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(has(look(false), "thermal_slowdown", 2)) << i;
  // Gone long enough: cleared; back once (a share below `raise`): not shown again.
  for (int i = 0; i < 12; ++i) look(false);
  EXPECT_FALSE(has(look(false), "thermal_slowdown", 2));
  EXPECT_FALSE(has(look(true), "thermal_slowdown", 2));
}

// A straggler (window_findings: judged over a window of samples already) shows after three
// looks in a row, not after half the minute, and stays through a short gap; one look, or every
// other look, never shows it.
TEST(serve_findings_test, a_windowed_finding_shows_in_three_looks_and_stays_through_gaps) {
  FindingsHold hold;
  const auto t0 = FindingsHold::TimePoint{};
  int t = 0;
  const auto look = [&](bool straggler) {
    std::vector<rules::Finding> windowed;
    if (straggler) windowed.push_back(finding("straggler", 5));
    return hold.update({finding("persistence_off", 0)}, t0 + (t++) * 1s, windowed);
  };
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(has(look(i % 2 == 0), "straggler", 5)) << i;
  EXPECT_FALSE(has(look(true), "straggler", 5));
  EXPECT_FALSE(has(look(true), "straggler", 5));
  EXPECT_TRUE(has(look(true), "straggler", 5));  // the third look in a row
  EXPECT_TRUE(has(look(true), "persistence_off", 0));
  for (int i = 0; i < 14; ++i) EXPECT_TRUE(has(look(i == 7), "straggler", 5)) << i;
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(has(look(false), "straggler", 5)) << i;
  EXPECT_FALSE(has(look(false), "straggler", 5));  // missed 15 looks in a row
  EXPECT_FALSE(has(look(true), "straggler", 5));
}

}  // namespace
}  // namespace gpuclk::serve
