#include <gtest/gtest.h>

#include <sstream>

#include "output/dmon_printer.h"

namespace gpuclk::output {
namespace {

const std::vector<DmonColumn> kColumns = {{"pwr", "W", "power.draw"}, {"pclk", "MHz", "clocks.sm"}};

std::chrono::system_clock::time_point noon() {
  std::tm tm{};
  tm.tm_year = 126, tm.tm_mon = 10, tm.tm_mday = 21, tm.tm_hour = 12, tm.tm_min = 34,
  tm.tm_sec = 56;
  tm.tm_isdst = -1;
  return std::chrono::system_clock::from_time_t(std::mktime(&tm)) + std::chrono::milliseconds(789);
}

std::string print(DmonStyle style, std::vector<Value> values) {
  std::ostringstream out;
  DmonPrinter p(out, style);
  p.begin(kColumns);
  p.row(noon(), 3, values);
  return out.str();
}

TEST(telemetry_dmon_printer_test, table_matches_nvidia_smi_widths) {
  EXPECT_EQ(print({}, {integer(697, "W"), na()}),
            "# gpu    pwr   pclk \n"
            "# Idx      W    MHz \n"
            "    3    697      - \n");
}

TEST(telemetry_dmon_printer_test, date_and_time_lead_the_row) {
  DmonStyle style;
  style.date = style.time = true;
  EXPECT_EQ(print(style, {integer(75), integer(345)}),
            "#Date       Time        gpu    pwr   pclk \n"
            "#YYYYMMDD   HH:MM:SS    Idx      W    MHz \n"
            " 20261121   12:34:56      3     75    345 \n");
  style.date = false;
  style.milliseconds = true;
  EXPECT_EQ(print(style, {integer(75), integer(345)}).substr(0, 20), "#Time            gpu");
  EXPECT_NE(print(style, {integer(75), integer(345)}).find(" 12:34:56.789      3 "),
            std::string::npos);
}

TEST(telemetry_dmon_printer_test, csv_keeps_the_hash_headers_and_dash_for_missing) {
  DmonStyle style;
  style.kind = DmonStyle::Kind::csv;
  EXPECT_EQ(print(style, {integer(697), na()}), "#gpu, pwr, pclk\n#Idx, W, MHz\n3, 697, -\n");
  style.header = style.units = false;
  EXPECT_EQ(print(style, {integer(697), integer(1410)}), "3, 697, 1410\n");
}

TEST(telemetry_dmon_printer_test, json_lines_use_the_keys_and_null) {
  DmonStyle style;
  style.kind = DmonStyle::Kind::json;
  std::string line = print(style, {integer(697), na()});
  EXPECT_EQ(line.substr(0, 38), "{\"timestamp\":\"2026-11-21T12:34:56.789\"");
  EXPECT_NE(line.find("\"gpu\":3,\"power.draw\":697,\"clocks.sm\":null}"), std::string::npos);
}

TEST(telemetry_dmon_printer_test, notes_are_comments_except_in_json) {
  std::ostringstream table, json;
  DmonPrinter(table, {}).note("slow fields are read every 100 ms");
  DmonStyle js;
  js.kind = DmonStyle::Kind::json;
  DmonPrinter(json, js).note("ignored");
  EXPECT_EQ(table.str(), "# slow fields are read every 100 ms\n");
  EXPECT_EQ(json.str(), "");
}

}  // namespace
}  // namespace gpuclk::output
