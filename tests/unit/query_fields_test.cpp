#include "views/query_fields.h"

#include <gtest/gtest.h>

#include <set>

#include "util/error.h"

namespace gpuclk::views {

TEST(query_fields_test, resolves_names_and_nvidia_smi_aliases) {
  auto f = parse_query_fields(
      "clocks.sm, clocks.current.memory,POWER.DRAW,clocks_throttle_reasons.active");
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0]->name, "clocks.sm");
  EXPECT_EQ(f[1]->name, "clocks.mem");
  EXPECT_EQ(f[2]->name, "power.draw");
  EXPECT_EQ(f[3]->name, "clocks_event_reasons.active");
}

TEST(query_fields_test, unknown_field_is_a_bad_argument_with_suggestions) {
  try {
    parse_query_fields("clocks.sm,clock.mem");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
    EXPECT_NE(std::string(e.what()).find("clock.mem"), std::string::npos);
    EXPECT_NE(e.hint().find("clocks.mem"), std::string::npos);
  }
  EXPECT_THROW(parse_query_fields("clocks.sm,,power.draw"), Error);
}

TEST(query_fields_test, names_are_unique_and_described) {
  std::set<std::string> seen;
  for (const auto& f : query_fields()) {
    EXPECT_TRUE(seen.insert(f.name).second) << f.name;
    for (const auto& a : f.aliases) EXPECT_TRUE(seen.insert(a).second) << a;
    EXPECT_FALSE(f.description.empty()) << f.name;
  }
  // The five fields of cli_latency.txt (docs/calibration.md) exist.
  EXPECT_EQ(parse_query_fields(
                "clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active")
                .size(),
            5u);
}

}  // namespace gpuclk::views
