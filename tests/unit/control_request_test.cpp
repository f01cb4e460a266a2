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

// A log line and a profile show each setting as this text: it parses back to the exact value.
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

// One parser per setting, named by the setting (the command line, profiles and requests).
TEST(control_request_test, parse_setting_fills_the_settings_member_with_its_parser) {
  Request r;
  parse_setting(r, Setting::power_limit, "612.5", option_of(Setting::power_limit));
  parse_setting(r, Setting::locked_memory_clocks, "default", "x");
  parse_setting(r, Setting::persistence_mode, "on", "x");
  EXPECT_EQ(r.power_limit->value, units::Milliwatts(612500));
  EXPECT_TRUE(r.locked_memory_clocks->to_default);
  EXPECT_TRUE(*r.persistence_mode);
  EXPECT_FALSE(r.has(Setting::application_clocks));
  EXPECT_EQ(asked_text(r), "persistence_mode=on locked_memory_clocks=default power_limit=612.500");
  try {
    parse_setting(r, Setting::application_clocks, "fast", option_of(Setting::application_clocks));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
    EXPECT_NE(std::string(e.what()).find("--app-clocks: 'fast' is not MEM,GFX"), std::string::npos)
        << e.what();
  }
}

// A delegated request carries the values gpuclk parsed, typed as the journal writes them; the
// service reads them back without parsing text again.
TEST(control_request_test, a_request_reads_back_from_its_typed_json_exactly) {
  Request r;
  r.persistence_mode = false;
  r.application_clocks = Change<ApplicationClocks>::of({2619, 1755});
  r.locked_gpu_clocks =
      Change<ClockLock>::of(ClockLock::range(ClockBound::tdp(), ClockBound::unlimited()));
  r.locked_memory_clocks = Change<ClockLock>::driver_default();
  r.power_limit = Change<units::Milliwatts>::of(units::Milliwatts(612500));
  const auto text = request_to_json(r);
  EXPECT_EQ(
      text,
      R"({"persistence_mode":false,"application_clocks":{"memory_mhz":2619,"graphics_mhz":1755},)"
      R"("locked_gpu_clocks":{"min_mhz":"tdp","max_mhz":"unlimited"},)"
      R"("locked_memory_clocks":"default","power_limit_mw":612500})");
  const auto back = request_from_json(text, "settings");
  EXPECT_EQ(back.persistence_mode, r.persistence_mode);
  EXPECT_EQ(back.application_clocks, r.application_clocks);
  EXPECT_EQ(back.locked_gpu_clocks, r.locked_gpu_clocks);
  EXPECT_EQ(back.locked_memory_clocks, r.locked_memory_clocks);
  EXPECT_EQ(back.power_limit, r.power_limit);
  // Text as gpuclk set takes it, under the request's key: a request written by hand.
  EXPECT_EQ(request_from_json(R"({"power_limit":"600"})", "settings").power_limit->value,
            units::Milliwatts(600000));
}

TEST(control_request_test, a_bad_request_value_names_the_key_and_exits_2) {
  const auto message = [](const std::string& settings) {
    try {
      request_from_json(settings, "settings");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_argument) << settings;
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(R"({"power_limit":600})"),
            "settings.power_limit must be a string, as gpuclk set takes it");
  EXPECT_EQ(message(R"({"power_limit_mw":-1})"),
            "settings.power_limit_mw: power_limit_mw must be a whole number, not number");
  EXPECT_EQ(message(R"({"power_limit_mw":5000000000})"),
            "settings.power_limit_mw: power_limit_mw 5000000000 is above 4294967295");
  EXPECT_EQ(message(R"({"application_clocks":{"memory_mhz":2619}})").substr(0, 29),
            "settings.application_clocks: ");
  EXPECT_EQ(message(R"({"voltage":"1"})"), "unknown setting 'voltage'");
  EXPECT_EQ(message(R"({})"), "settings must be an object naming one or more settings");
  EXPECT_EQ(message(R"("power_limit=600")"),
            "settings must be an object naming one or more settings");
  EXPECT_NE(message(R"({"power_limit":"nan"})").find("settings.power_limit: 'nan'"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuclk::control
