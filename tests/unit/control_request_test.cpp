#include <gtest/gtest.h>

#include "control/request.h"
#include "util/error.h"

namespace gpuclk::control {
namespace {

TEST(control_request_test, parses_on_off_spellings) {
  EXPECT_TRUE(parse_on_off("on", "--persistence"));
  EXPECT_TRUE(parse_on_off("ENABLED", "--persistence"));
  EXPECT_FALSE(parse_on_off("0", "--persistence"));
  EXPECT_THROW(parse_on_off("maybe", "--persistence"), Error);
}

TEST(control_request_test, application_clocks_are_memory_then_graphics) {
  auto c = parse_application_clocks("2619,1755", "--app-clocks");
  EXPECT_FALSE(c.to_default);
  EXPECT_EQ(c.value.memory_mhz, 2619u);
  EXPECT_EQ(c.value.graphics_mhz, 1755u);
  EXPECT_TRUE(parse_application_clocks("default", "--app-clocks").to_default);
  EXPECT_THROW(parse_application_clocks("1755", "--app-clocks"), Error);
  EXPECT_THROW(parse_application_clocks("a,b", "--app-clocks"), Error);
}

TEST(control_request_test, clock_lock_single_value_locks_min_and_max) {
  auto c = parse_clock_lock("1500", "--lock-gpu-clocks");
  EXPECT_EQ(c.value, ClockLock::range(ClockBound::megahertz(1500), ClockBound::megahertz(1500)));
  auto r = parse_clock_lock("1410,1755", "--lock-gpu-clocks");
  EXPECT_EQ(r.value.min.mhz, 1410u);
  EXPECT_EQ(r.value.max.mhz, 1755u);
}

TEST(control_request_test, clock_lock_symbolic_limits) {
  EXPECT_EQ(parse_clock_lock("tdp", "x").value,
            ClockLock::range(ClockBound::tdp(), ClockBound::tdp()));
  EXPECT_EQ(parse_clock_lock("tdp,unlimited", "x").value,
            ClockLock::range(ClockBound::tdp(), ClockBound::unlimited()));
  // The driver documents unlimited,unlimited as a reset.
  EXPECT_TRUE(parse_clock_lock("unlimited,unlimited", "x").to_default);
  EXPECT_TRUE(parse_clock_lock("default", "x").to_default);
}

TEST(control_request_test, clock_lock_rejects_mixed_and_inverted_ranges) {
  EXPECT_THROW(parse_clock_lock("tdp,1500", "x"), Error);
  EXPECT_THROW(parse_clock_lock("1755,1410", "x"), Error);
  EXPECT_THROW(parse_clock_lock("fast", "x"), Error);
  try {
    parse_clock_lock("1755,1410", "--lock-gpu-clocks");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
    EXPECT_NE(std::string(e.what()).find("--lock-gpu-clocks"), std::string::npos);
  }
}

TEST(control_request_test, power_limit_in_watts) {
  EXPECT_EQ(parse_power_limit("600", "x").value, units::Milliwatts(600000));
  EXPECT_EQ(parse_power_limit("612.5W", "x").value, units::Milliwatts(612500));
  // Exact, and never wrapped: 4295617.296 W is 4295617296 mW, not 650 W (2^32 mW later).
  EXPECT_EQ(parse_power_limit("4295617.296", "x").value, units::Milliwatts(4295617296ull));
  EXPECT_THROW(parse_power_limit("600.0001", "x"), Error);
  EXPECT_THROW(parse_power_limit("99999999999999999999", "x"), Error);
  EXPECT_THROW(parse_power_limit("nan", "x"), Error);
  EXPECT_THROW(parse_power_limit("inf", "x"), Error);
  EXPECT_THROW(parse_power_limit("0", "x"), Error);
  EXPECT_THROW(parse_power_limit("6e2", "x"), Error);
  EXPECT_TRUE(parse_power_limit("default", "x").to_default);
  EXPECT_THROW(parse_power_limit("-5", "x"), Error);
  EXPECT_THROW(parse_power_limit("lots", "x"), Error);
}

TEST(control_request_test, merge_replaces_only_named_settings) {
  Request base;
  base.power_limit = Change<units::Milliwatts>::of(units::Milliwatts(700000));
  base.persistence_mode = true;
  Request over;
  over.power_limit = Change<units::Milliwatts>::of(units::Milliwatts(500000));
  base.merge(over);
  EXPECT_EQ(base.power_limit->value, units::Milliwatts(500000));
  EXPECT_TRUE(*base.persistence_mode);
  EXPECT_FALSE(base.has(Setting::application_clocks));
}

// A delegated request carries each setting as this text: the service parses it back to the
// exact value the command validated.
TEST(control_request_test, setting_text_reads_back_as_the_same_value) {
  Settings s;
  s.persistence_mode = false;
  s.application_clocks = ApplicationClocks{2619, 1755};
  s.locked_gpu_clocks = ClockLock::range(ClockBound::megahertz(1410), ClockBound::megahertz(1410));
  s.locked_memory_clocks = ClockLock::range(ClockBound::tdp(), ClockBound::unlimited());
  s.power_limit_mw = units::Milliwatts(612500);
  EXPECT_EQ(setting_text(s, Setting::persistence_mode), "off");
  EXPECT_EQ(setting_text(s, Setting::application_clocks), "2619,1755");
  EXPECT_EQ(setting_text(s, Setting::locked_gpu_clocks), "1410,1410");
  EXPECT_EQ(setting_text(s, Setting::locked_memory_clocks), "tdp,unlimited");
  EXPECT_EQ(setting_text(s, Setting::power_limit), "612.500");
  EXPECT_FALSE(parse_on_off(setting_text(s, Setting::persistence_mode), "x"));
  EXPECT_EQ(parse_application_clocks(setting_text(s, Setting::application_clocks), "x").value,
            *s.application_clocks);
  EXPECT_EQ(parse_clock_lock(setting_text(s, Setting::locked_gpu_clocks), "x").value,
            *s.locked_gpu_clocks);
  EXPECT_EQ(parse_clock_lock(setting_text(s, Setting::locked_memory_clocks), "x").value,
            *s.locked_memory_clocks);
  EXPECT_EQ(parse_power_limit(setting_text(s, Setting::power_limit), "x").value, *s.power_limit_mw);
  s.power_limit_mw = units::Milliwatts(600000);
  EXPECT_EQ(setting_text(s, Setting::power_limit), "600");
  // An unlocked lock is a reset; a setting the settings lack has no text.
  s.locked_gpu_clocks = ClockLock::none();
  EXPECT_TRUE(parse_clock_lock(setting_text(s, Setting::locked_gpu_clocks), "x").to_default);
  EXPECT_EQ(setting_text(Settings{}, Setting::power_limit), "");
}

}  // namespace
}  // namespace gpuclk::control
