#include "output/format.h"

#include <gtest/gtest.h>

#include <sstream>

#include "output/printer.h"
#include "util/error.h"

namespace gpuclk::output {

TEST(format_test, parses_nvidia_smi_csv_options) {
  auto f = parse_format("csv,noheader,nounits");
  EXPECT_EQ(f.kind, Format::Kind::csv);
  EXPECT_FALSE(f.header);
  EXPECT_FALSE(f.units);
  EXPECT_EQ(parse_format("json").kind, Format::Kind::json);
  EXPECT_EQ(parse_format("table").kind, Format::Kind::table);
}

TEST(format_test, rejects_unknown_formats_and_options) {
  EXPECT_THROW(parse_format("xml"), Error);
  EXPECT_THROW(parse_format("csv,bogus"), Error);
  EXPECT_THROW(parse_format("json,noheader"), Error);
  try {
    parse_format("yaml");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
    EXPECT_NE(std::string(e.what()).find("yaml"), std::string::npos);
    EXPECT_NE(e.hint().find("csv"), std::string::npos);
  }
}

Table sample() {
  Table t;
  t.columns = {{"index", "GPU"}, {"clocks.sm", "SM", false, "MHz"}, {"name", "Name", true}};
  t.rows = {{integer(0), integer(1980, "MHz"), text("H100, SXM")},
            {integer(1), na(), text("A100")}};
  return t;
}

std::string render(const char* format, const Table& t) {
  std::ostringstream out;
  make_printer(parse_format(format), out)->print_table(t);
  return out.str();
}

TEST(format_test, csv_has_unit_headers_na_and_quotes_like_nvidia_smi) {
  EXPECT_EQ(render("csv", sample()),
            "index, clocks.sm [MHz], name\n0, 1980 MHz, \"H100, SXM\"\n1, [N/A], A100\n");
  EXPECT_EQ(render("csv,noheader,nounits", sample()), "0, 1980, \"H100, SXM\"\n1, [N/A], A100\n");
}

TEST(format_test, a_rounded_zero_has_no_sign) {
  // govern printed "-0.0" for a saving of -0.04 % (issue 42).
  EXPECT_EQ(to_text(number(-0.04, "%", 1)), "0.0 %");
  EXPECT_EQ(to_text(number(-0.4, "", 0)), "0");
  EXPECT_EQ(to_text(number(-0.06, "", 1)), "-0.1");
}

TEST(format_test, json_prints_null_for_missing) {
  EXPECT_EQ(
      render("json", sample()),
      "[\n  {\n    \"index\": 0,\n    \"clocks.sm\": 1980,\n    \"name\": \"H100, SXM\"\n  },\n"
      "  {\n    \"index\": 1,\n    \"clocks.sm\": null,\n    \"name\": \"A100\"\n  }\n]\n");
}

TEST(format_test, table_aligns_and_prints_na) {
  EXPECT_EQ(render("table", sample()), "GPU    SM  Name\n  0  1980  H100, SXM\n  1   N/A  A100\n");
}

}  // namespace gpuclk::output
