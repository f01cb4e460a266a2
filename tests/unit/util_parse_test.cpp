// The checked number parser, the bounded file reader and the glob matcher (util/): every
// hostile form refused before any conversion.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "util/error.h"
#include "util/file.h"
#include "util/glob.h"
#include "util/parse.h"

namespace gpuclk {
namespace {

TEST(util_parse_test, unsigned_checks_syntax_and_range_before_converting) {
  EXPECT_EQ(parse::try_unsigned("0"), 0u);
  EXPECT_EQ(parse::try_unsigned("18446744073709551615"), 18446744073709551615ull);
  EXPECT_FALSE(parse::try_unsigned("18446744073709551616"));
  EXPECT_FALSE(parse::try_unsigned("99999999999999999999999999"));
  EXPECT_FALSE(parse::try_unsigned(""));
  EXPECT_FALSE(parse::try_unsigned("-1"));
  EXPECT_FALSE(parse::try_unsigned("+1"));
  EXPECT_FALSE(parse::try_unsigned(" 1"));
  EXPECT_FALSE(parse::try_unsigned("0x10"));
  EXPECT_FALSE(parse::try_unsigned("5", 0, 4));
  EXPECT_FALSE(parse::try_unsigned("3", 4, 9));
  EXPECT_THROW(parse::unsigned_integer("x", "--n", 0, 9), Error);
}

TEST(util_parse_test, integer_handles_both_ends) {
  EXPECT_EQ(parse::try_integer("-9223372036854775808", INT64_MIN, INT64_MAX), INT64_MIN);
  EXPECT_EQ(parse::try_integer("9223372036854775807", INT64_MIN, INT64_MAX), INT64_MAX);
  EXPECT_FALSE(parse::try_integer("9223372036854775808", INT64_MIN, INT64_MAX));
  EXPECT_FALSE(parse::try_integer("-9223372036854775809", INT64_MIN, INT64_MAX));
  EXPECT_FALSE(parse::try_integer("-", -5, 5));
}

TEST(util_parse_test, reals_are_plain_finite_decimals) {
  EXPECT_DOUBLE_EQ(*parse::try_real("12.5", 0, 100), 12.5);
  EXPECT_DOUBLE_EQ(*parse::try_real(".5", 0, 1), 0.5);
  EXPECT_DOUBLE_EQ(*parse::try_real("-2", -5, 5), -2);
  for (const char* bad : {"nan", "inf", "-inf", "1e3", "0x1p3", "", ".", "-", "1.2.3", " 1", "1 "})
    EXPECT_FALSE(parse::try_real(bad, -1e9, 1e9)) << bad;
  EXPECT_FALSE(parse::try_real("101", 0, 100));
  EXPECT_FALSE(parse::try_real(std::string(100, '1'), 0, 1e300));
}

TEST(util_parse_test, fixed_point_is_exact) {
  EXPECT_EQ(parse::try_fixed("612.5", 3, UINT64_MAX), 612500u);
  EXPECT_EQ(parse::try_fixed("0.001", 3, UINT64_MAX), 1u);
  EXPECT_EQ(parse::try_fixed("4295617.296", 3, UINT64_MAX), 4295617296ull);
  EXPECT_FALSE(parse::try_fixed("1.0001", 3, UINT64_MAX));
  EXPECT_FALSE(parse::try_fixed("18446744073709552", 3, UINT64_MAX));  // × 1000 overflows
  EXPECT_EQ(parse::try_fixed("18446744073709551.615", 3, UINT64_MAX), UINT64_MAX);
  EXPECT_FALSE(parse::try_fixed("18446744073709551.616", 3, UINT64_MAX));
}

TEST(util_parse_test, sizes_durations_percentages) {
  EXPECT_EQ(parse::try_size("48K", 1ull << 40), 49152u);
  EXPECT_EQ(parse::try_size("2MiB", 1ull << 40), 2u << 20);
  EXPECT_FALSE(parse::try_size("17179869184G", UINT64_MAX));  // 2^34 GiB overflows 64 bits
  EXPECT_FALSE(parse::try_size("1T", UINT64_MAX));
  EXPECT_DOUBLE_EQ(*parse::try_duration_seconds("250ms", 3600), 0.25);
  EXPECT_DOUBLE_EQ(*parse::try_duration_seconds("2m", 3600), 120);
  EXPECT_FALSE(parse::try_duration_seconds("0", 3600));
  EXPECT_FALSE(parse::try_duration_seconds("2h", 3600));
  EXPECT_DOUBLE_EQ(*parse::try_duration_seconds("1h", 3600), 3600);
  // 10ms and 0.01 are the same double, so a range's bound holds whichever way it is typed.
  EXPECT_EQ(*parse::try_duration_seconds("10ms", 1), *parse::try_duration_seconds("0.01", 1));
  EXPECT_DOUBLE_EQ(*parse::try_percent("50%"), 0.5);
  EXPECT_FALSE(parse::try_percent("101"));
}

TEST(util_parse_test, one_duration_for_every_option_names_value_and_range) {
  EXPECT_DOUBLE_EQ(parse::duration_seconds("1h", "--duration", 1, 3600, "30s"), 3600);
  EXPECT_DOUBLE_EQ(parse::duration_seconds("90", "--duration", 1, 3600, "30s"), 90);
  EXPECT_DOUBLE_EQ(parse::duration_seconds("10ms", "-d", 0.01, 1, "1"), 0.01);
  try {
    parse::duration_seconds("2d", "--history", 60, 7 * 86400, "1h");
    FAIL() << "2d accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_argument);
    EXPECT_STREQ(e.what(), "bad --history '2d'");
    EXPECT_NE(e.hint().find("from 1m to 168h, e.g. 1h"), std::string::npos) << e.hint();
  }
  EXPECT_THROW(parse::duration_seconds("0.5s", "--duration", 1, 3600, "30s"), Error);
  EXPECT_THROW(parse::duration_seconds("61m", "--duration", 1, 3600, "30s"), Error);
  EXPECT_THROW(parse::duration_seconds("nan", "--duration", 1, 3600, "30s"), Error);
  EXPECT_EQ(parse::duration_text(0.01), "10ms");
  EXPECT_EQ(parse::duration_text(90), "90s");
  EXPECT_EQ(parse::duration_text(3600), "1h");
}

TEST(util_parse_test, quote_cuts_long_values_and_hides_control_characters) {
  EXPECT_EQ(parse::quote("abc"), "abc");
  EXPECT_EQ(parse::quote("a\nb\x1b"), "a?b?");
  const auto q = parse::quote(std::string(30000, 'x'));
  EXPECT_LT(q.size(), 120u);
  EXPECT_NE(q.find("30000 chars"), std::string::npos);
}

TEST(util_glob_test, matches_like_a_shell) {
  EXPECT_TRUE(glob::match("*", ""));
  EXPECT_TRUE(glob::match("a*c", "abbbc"));
  EXPECT_TRUE(glob::match("a?c", "abc"));
  EXPECT_FALSE(glob::match("a?c", "ac"));
  EXPECT_TRUE(glob::match("[a-c]x", "bx"));
  EXPECT_FALSE(glob::match("[!a-c]x", "bx"));
  EXPECT_TRUE(glob::match("[]]", "]"));
  EXPECT_TRUE(glob::search("tiled", "void tiled<4>(float*)"));
  EXPECT_FALSE(glob::search("tiled", "void gemm(float*)"));
  EXPECT_TRUE(glob::search("spill<300>", "void spill<300>(float*)"));
}

TEST(util_glob_test, long_names_take_bounded_work) {
  const std::string name(30000, 'x');
  std::string pattern;
  for (int i = 0; i < 200; ++i) pattern += "*x";
  pattern += "*y";
  EXPECT_FALSE(glob::match(pattern, name));  // O(pattern × name), no recursion
  EXPECT_THROW(glob::check(std::string(2000, 'a'), "--kernel"), Error);
  EXPECT_THROW(glob::check("[abc", "--kernel"), Error);
  EXPECT_NO_THROW(glob::check("k[0-9]*", "--kernel"));
}

class UtilFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/gpuclk-util-file.XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    [[maybe_unused]] const int rc = std::system(("rm -rf " + dir_).c_str());
  }
  std::string dir_;
};

TEST_F(UtilFileTest, refuses_what_is_not_a_regular_file) {
  EXPECT_THROW(file::read_bounded("/dev/zero", "profile"), Error);
  EXPECT_THROW(file::read_bounded(dir_, "profile"), Error);
  const auto fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(file::read_bounded(fifo, "profile"), Error);  // returns at once: no writer needed
  EXPECT_THROW(file::LineReader(fifo, "batch"), Error);
  EXPECT_THROW(file::read_bounded(dir_ + "/missing", "profile"), Error);
}

TEST_F(UtilFileTest, caps_the_size_and_the_line_length) {
  const auto path = dir_ + "/f";
  std::ofstream(path) << std::string(5000, 'a') << "\nb\n";
  EXPECT_THROW(file::read_bounded(path, "profile", 4096), Error);
  EXPECT_EQ(file::read_bounded(path, "profile", 8192).size(), 5003u);
  file::LineReader short_lines(path, "batch", 100);
  std::string line;
  EXPECT_THROW(short_lines.next(line), Error);
  file::LineReader lines(path, "batch", 8192);
  ASSERT_TRUE(lines.next(line));
  EXPECT_EQ(line.size(), 5000u);
  ASSERT_TRUE(lines.next(line));
  EXPECT_EQ(line, "b");
  EXPECT_FALSE(lines.next(line));
  EXPECT_EQ(lines.line_number(), 2u);
}

}  // namespace
}  // namespace gpuclk
