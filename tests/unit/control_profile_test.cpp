#include <gtest/gtest.h>

#include "control/profile.h"
#include "util/error.h"

namespace gpuclk::control {
namespace {

TEST(control_profile_test, parses_settings_and_overrides) {
  auto p = parse_profile(R"(
version = 1
description = "training nodes"
gpus = "all"
snap = true
[settings]
persistence_mode = "on"
application_clocks = "2619,1980"
locked_gpu_clocks = "1755"
power_limit_w = 650
[[override]]
gpus = "3"
power_limit_w = "default"
)",
                         "p.toml");
  EXPECT_EQ(p.description, "training nodes");
  EXPECT_TRUE(p.snap);
  EXPECT_TRUE(*p.settings.persistence_mode);
  EXPECT_EQ(p.settings.application_clocks->value, (ApplicationClocks{2619, 1980}));
  EXPECT_EQ(p.settings.locked_gpu_clocks->value.min.mhz, 1755u);
  EXPECT_EQ(p.settings.power_limit->value, units::Milliwatts(650000));
  ASSERT_EQ(p.overrides.size(), 1u);
  EXPECT_EQ(p.overrides[0].gpus, "3");
  EXPECT_TRUE(p.overrides[0].request.power_limit->to_default);
}

TEST(control_profile_test, accepts_unquoted_booleans) {
  auto p = parse_profile("[settings]\npersistence_mode = true\n", "p.toml");
  EXPECT_TRUE(*p.settings.persistence_mode);
}

TEST(control_profile_test, unknown_keys_are_errors_with_file_and_line) {
  try {
    parse_profile("[settings]\npower_limit = 600\n", "p.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
    EXPECT_NE(std::string(e.what()).find("p.toml:2"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("power_limit"), std::string::npos);
  }
}

TEST(control_profile_test, bad_values_name_the_key) {
  try {
    parse_profile("[settings]\nlocked_gpu_clocks = \"fast\"\n", "p.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("locked_gpu_clocks"), std::string::npos);
  }
}

TEST(control_profile_test, empty_profile_and_override_without_gpus_are_errors) {
  EXPECT_THROW(parse_profile("gpus = \"all\"\n", "p.toml"), Error);
  EXPECT_THROW(parse_profile("[settings]\npower_limit_w = 600\n[[override]]\npower_limit_w = 500\n",
                             "p.toml"),
               Error);
  EXPECT_THROW(parse_profile("this is not toml", "p.toml"), Error);
}

TEST(control_profile_test, example_profile_in_deploy_parses) {
  auto p = load_profile(std::string(GPUCLK_SOURCE_DIR) + "/deploy/profiles/example.toml");
  EXPECT_FALSE(p.settings.empty());
}

}  // namespace
}  // namespace gpuclk::control
