// telemetry/packed_sample.h: the history rings' form of a FastSample gives back every reading,
// bit for bit, and every absent one as absent.
#include <gtest/gtest.h>

#include "telemetry/field_table.h"
#include "telemetry/packed_sample.h"

namespace gpuclk::telemetry {
namespace {

// Every reading of `a` and `b` equal, bit for bit where present, both absent otherwise.
void expect_same(const FastSample& a, const FastSample& b) {
  EXPECT_EQ(a.time, b.time);
  for_each_fast_field([&](const auto& row) {
    const auto& x = a.*row.member;
    const auto& y = b.*row.member;
    ASSERT_EQ(x.has_value(), y.has_value()) << row.key;
    if (x) {
      EXPECT_EQ(x->value(), y->value()) << row.key;  // exact: no rounding on the way
    }
  });
  ASSERT_EQ(a.clock_reasons.has_value(), b.clock_reasons.has_value());
  if (a.clock_reasons) {
    EXPECT_EQ(a.clock_reasons->bits(), b.clock_reasons->bits());
  }
  EXPECT_EQ(a.pstate, b.pstate);
}

TEST(telemetry_packed_sample_test, every_reading_comes_back_exactly) {
  FastSample s;
  s.time = TimePoint(std::chrono::nanoseconds(123456789012345));
  double v = 0.1;
  for_each_fast_field([&](const auto& row) {
    using Q = typename std::decay_t<decltype(row)>::quantity_type;
    s.*row.member = Q(v * 699.123);  // values no float could hold
    v += 0.37;
  });
  s.clock_reasons = gpu::ClockReasons(0x8000000000000004ULL);
  s.pstate = 0;  // present and zero is not absent
  expect_same(s, PackedFastSample(s).unpack());
  EXPECT_LT(sizeof(PackedFastSample), sizeof(FastSample) * 6 / 10);
}

TEST(telemetry_packed_sample_test, absent_readings_stay_absent) {
  FastSample s;
  s.power = Watts(0);  // present and zero
  s.memory_used = Bytes(141.0 * (1ULL << 30));
  const FastSample back = PackedFastSample(s).unpack();
  expect_same(s, back);
  EXPECT_FALSE(back.sm_clock);
  EXPECT_FALSE(back.clock_reasons);
  EXPECT_FALSE(back.pstate);
  expect_same(FastSample{}, PackedFastSample(FastSample{}).unpack());
}

}  // namespace
}  // namespace gpuclk::telemetry
