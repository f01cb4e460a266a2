// serve/exposition.h: values written as the text format asks, a series' extra label written as
// `with` would have, and a Families kept between builds giving the same text as a fresh one.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "serve/exposition.h"

namespace gpuclk::serve {
namespace {

std::string value(double v) {
  std::string out;
  append_value(out, v);
  return out;
}

TEST(serve_exposition_test, values_are_written_as_the_text_format_asks) {
  EXPECT_EQ(value(1410000000), "1410000000");
  EXPECT_EQ(value(0), "0");
  EXPECT_EQ(value(-0.0), "-0");
  EXPECT_EQ(value(-42), "-42");
  EXPECT_EQ(value(999999999999999), "999999999999999");
  EXPECT_EQ(value(1e15), "1000000000000000");  // past the integer path: fmt's shortest form
  EXPECT_EQ(value(1e16), "1e+16");
  EXPECT_EQ(value(0.25), "0.25");
  EXPECT_EQ(value(312.456), "312.456");
  EXPECT_EQ(value(1.5e-05), "1.5e-05");
  EXPECT_EQ(value(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(value(-std::numeric_limits<double>::infinity()), "-Inf");
  // Shortest exact form: it reads back as the same double.
  EXPECT_EQ(std::stod(value(0.1 + 0.2)), 0.1 + 0.2);
}

void build(Families& f, double watts) {
  const Labels gpu{{"gpu", "0"}, {"uuid", "GPU-a\"b"}};
  f.gauge("gpuclk_gpu_power_watts", "Board power", gpu, watts);
  f.gauge("gpuclk_gpu_clock_event_reason", "Reason", gpu, Label{"reason", "sw_power_cap"}, 1);
  f.counter("gpuclk_nvlink_errors_total", "Errors", with(gpu, "link", "3"), Label{"type", "crc\"x"},
            7);
  f.gauge("gpuclk_gpu_clock_event_reason", "Reason", gpu, Label{"reason", "gpu_idle"}, 0);
  f.gauge("gpuclk_up", "Up", {}, Label{"job", "a"}, 1);
}

TEST(serve_exposition_test, an_extra_label_is_written_as_with_would_and_families_stay_grouped) {
  Families f;
  build(f, 312.5);
  EXPECT_EQ(
      f.take(),
      "# HELP gpuclk_gpu_power_watts Board power\n"
      "# TYPE gpuclk_gpu_power_watts gauge\n"
      "gpuclk_gpu_power_watts{gpu=\"0\",uuid=\"GPU-a\\\"b\"} 312.5\n"
      "# HELP gpuclk_gpu_clock_event_reason Reason\n"
      "# TYPE gpuclk_gpu_clock_event_reason gauge\n"
      "gpuclk_gpu_clock_event_reason{gpu=\"0\",uuid=\"GPU-a\\\"b\",reason=\"sw_power_cap\"} 1\n"
      "gpuclk_gpu_clock_event_reason{gpu=\"0\",uuid=\"GPU-a\\\"b\",reason=\"gpu_idle\"} 0\n"
      "# HELP gpuclk_nvlink_errors_total Errors\n"
      "# TYPE gpuclk_nvlink_errors_total counter\n"
      "gpuclk_nvlink_errors_total{gpu=\"0\",uuid=\"GPU-a\\\"b\",link=\"3\",type=\"crc\\\"x\"} 7\n"
      "# HELP gpuclk_up Up\n"
      "# TYPE gpuclk_up gauge\n"
      "gpuclk_up{job=\"a\"} 1\n");
}

TEST(serve_exposition_test, a_families_kept_between_builds_writes_what_a_fresh_one_does) {
  Families kept;
  build(kept, 100);
  kept.take();
  kept.clear();
  build(kept, 200);
  Families fresh;
  build(fresh, 200);
  EXPECT_EQ(kept.take(), fresh.take());
  // A family without series in this build is left out, not written empty.
  kept.clear();
  kept.gauge("gpuclk_up", "Up", {}, 1);
  EXPECT_EQ(kept.take(), "# HELP gpuclk_up Up\n# TYPE gpuclk_up gauge\ngpuclk_up 1\n");
}

}  // namespace
}  // namespace gpuclk::serve
