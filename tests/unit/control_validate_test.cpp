#include <gtest/gtest.h>

#include "control/validate.h"
#include "control_fake_gpu.h"

namespace gpuclk::control {
namespace {

using testing::h100_facts;

Request app_clocks(unsigned mem, unsigned gfx) {
  Request r;
  r.application_clocks = Change<ApplicationClocks>::of({mem, gfx});
  return r;
}

TEST(control_validate_test, supported_application_clocks_pass_unchanged) {
  auto v = validate(app_clocks(2619, 1755), h100_facts(0), false);
  ASSERT_TRUE(v.problems.empty());
  EXPECT_EQ(*v.target.application_clocks, (ApplicationClocks{2619, 1755}));
}

TEST(control_validate_test, unsupported_clock_names_the_nearest_values) {
  auto v = validate(app_clocks(2619, 1234), h100_facts(2), false);
  ASSERT_EQ(v.problems.size(), 1u);
  const auto& p = v.problems[0];
  EXPECT_EQ(p.code, ExitCode::bad_argument);
  EXPECT_NE(p.message.find("GPU 2"), std::string::npos);
  EXPECT_NE(p.message.find("1234 MHz"), std::string::npos);
  EXPECT_NE(p.message.find("1230 MHz or 1245 MHz"), std::string::npos);
  EXPECT_FALSE(v.target.application_clocks);
}

TEST(control_validate_test, snap_rounds_to_the_nearest_supported_clock) {
  auto v = validate(app_clocks(2600, 1234), h100_facts(0), true);
  ASSERT_TRUE(v.problems.empty());
  EXPECT_EQ(*v.target.application_clocks, (ApplicationClocks{2619, 1230}));
  EXPECT_EQ(v.notes.size(), 2u);
}

TEST(control_validate_test, gpu_lock_bounds_must_be_supported_clocks) {
  Request r;
  r.locked_gpu_clocks = Change<ClockLock>::of(
      ClockLock::range(ClockBound::megahertz(1400), ClockBound::megahertz(1755)));
  auto v = validate(r, h100_facts(0), false);
  ASSERT_EQ(v.problems.size(), 1u);
  EXPECT_NE(v.problems[0].message.find("1395 MHz or 1410 MHz"), std::string::npos);
  auto snapped = validate(r, h100_facts(0), true);
  EXPECT_EQ(snapped.target.locked_gpu_clocks->min.mhz, 1395u);
}

TEST(control_validate_test, symbolic_gpu_lock_is_left_to_the_driver) {
  Request r;
  r.locked_gpu_clocks =
      Change<ClockLock>::of(ClockLock::range(ClockBound::tdp(), ClockBound::unlimited()));
  auto v = validate(r, h100_facts(0), false);
  EXPECT_TRUE(v.problems.empty());
  EXPECT_EQ(v.target.locked_gpu_clocks->min, ClockBound::tdp());
}

TEST(control_validate_test, memory_lock_on_hopper_is_not_supported_and_names_app_clocks) {
  Request r;
  r.locked_memory_clocks = Change<ClockLock>::of(
      ClockLock::range(ClockBound::megahertz(2619), ClockBound::megahertz(2619)));
  auto v = validate(r, h100_facts(0), false);
  ASSERT_EQ(v.problems.size(), 1u);
  EXPECT_EQ(v.problems[0].code, ExitCode::not_supported);
  EXPECT_NE(v.problems[0].message.find("Hopper"), std::string::npos);
  EXPECT_NE(v.problems[0].hint.find("--app-clocks"), std::string::npos);
}

TEST(control_validate_test, memory_lock_elsewhere_checks_memory_clocks) {
  auto facts = h100_facts(0);
  facts.hopper = false;
  Request r;
  r.locked_memory_clocks = Change<ClockLock>::of(
      ClockLock::range(ClockBound::megahertz(1593), ClockBound::megahertz(1593)));
  EXPECT_TRUE(validate(r, facts, false).problems.empty());
  r.locked_memory_clocks->value.min.mhz = 1600;
  EXPECT_EQ(validate(r, facts, false).problems.size(), 1u);
}

TEST(control_validate_test, power_limit_outside_constraints_is_refused_or_clamped) {
  Request r;
  r.power_limit = Change<units::Milliwatts>::of(units::Milliwatts(900000));
  auto v = validate(r, h100_facts(1), false);
  ASSERT_EQ(v.problems.size(), 1u);
  EXPECT_NE(v.problems[0].message.find("200 W\u2013700 W"), std::string::npos);
  auto clamped = validate(r, h100_facts(1), true);
  EXPECT_EQ(clamped.target.power_limit_mw->count(), 700000u);
}

TEST(control_validate_test, defaults_resolve_to_the_drivers_values) {
  Request r;
  r.application_clocks = Change<ApplicationClocks>::driver_default();
  r.locked_gpu_clocks = Change<ClockLock>::driver_default();
  r.power_limit = Change<units::Milliwatts>::driver_default();
  auto v = validate(r, h100_facts(0), false);
  ASSERT_TRUE(v.problems.empty());
  EXPECT_EQ(*v.target.application_clocks, (ApplicationClocks{2619, 1980}));
  EXPECT_FALSE(v.target.locked_gpu_clocks->locked);
  EXPECT_EQ(v.target.power_limit_mw->count(), 700000u);
}

TEST(control_validate_test, unsupported_features_exit_3) {
  auto facts = h100_facts(0);
  facts.supported_clocks = gpu::Reading<std::vector<gpu::SupportedClocks>>::not_supported();
  facts.power_constraints = gpu::Reading<gpu::PowerConstraints>::not_supported();
  Request r = app_clocks(2619, 1755);
  r.power_limit = Change<units::Milliwatts>::of(units::Milliwatts(500000));
  auto v = validate(r, facts, false);
  ASSERT_EQ(v.problems.size(), 2u);
  EXPECT_EQ(v.problems[0].code, ExitCode::not_supported);
  EXPECT_EQ(v.problems[1].code, ExitCode::not_supported);
}

TEST(control_validate_test, throw_problems_lists_every_gpu) {
  std::vector<Problem> problems = {{0, ExitCode::bad_argument, "GPU 0: a", "h"},
                                   {3, ExitCode::bad_argument, "GPU 3: b", "h"}};
  try {
    throw_problems(problems);
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("GPU 0: a"), std::string::npos);
    EXPECT_NE(what.find("GPU 3: b"), std::string::npos);
    EXPECT_NE(what.find("nothing was changed"), std::string::npos);
    EXPECT_EQ(e.hint(), "h");
  }
}

TEST(control_validate_test, validate_all_fails_once_for_every_gpu_or_gives_every_target) {
  // Every GPU is checked before the one Error: GPU 1's and GPU 3's problems are both in it.
  try {
    validate_all({{app_clocks(2619, 1755), h100_facts(0)},
                  {app_clocks(2619, 1234), h100_facts(1)},
                  {app_clocks(2619, 1234), h100_facts(3)}},
                 false);
    FAIL() << "two GPUs were asked for an unsupported clock";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
    const std::string what = e.what();
    EXPECT_NE(what.find("2 problems, nothing was changed"), std::string::npos) << what;
    EXPECT_NE(what.find("GPU 1: graphics clock"), std::string::npos) << what;
    EXPECT_NE(what.find("GPU 3: graphics clock"), std::string::npos) << what;
  }
  // All pass: one target per GPU in order, every note named by its GPU.
  const auto checked = validate_all(
      {{app_clocks(2619, 1755), h100_facts(0)}, {app_clocks(2600, 1234), h100_facts(2)}}, true);
  ASSERT_EQ(checked.targets.size(), 2u);
  EXPECT_EQ(*checked.targets[0].application_clocks, (ApplicationClocks{2619, 1755}));
  EXPECT_EQ(*checked.targets[1].application_clocks, (ApplicationClocks{2619, 1230}));
  ASSERT_EQ(checked.notes.size(), 2u);
  EXPECT_EQ(checked.notes[0].rfind("GPU 2: ", 0), 0u) << checked.notes[0];
  EXPECT_EQ(checked.notes[1].rfind("GPU 2: ", 0), 0u) << checked.notes[1];
}

}  // namespace
}  // namespace gpuclk::control
