// telemetry/packed_sample.h: the history rings' forms of a FastSample and a SlowSample give back
// every reading, bit for bit, and every absent one as absent.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

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

// Bit for bit: a double's bits, so -0 and NaN compare as themselves.
template <class Q>
std::optional<std::uint64_t> bits(const std::optional<Q>& q) {
  if (!q) return std::nullopt;
  return std::bit_cast<std::uint64_t>(q->value());
}

void expect_same(const SlowSample& a, const SlowSample& b) {
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(bits(a.energy), bits(b.energy));
  EXPECT_EQ(bits(a.pcie_rx), bits(b.pcie_rx));
  EXPECT_EQ(bits(a.pcie_tx), bits(b.pcie_tx));
  EXPECT_EQ(bits(a.nvlink_rx_rate), bits(b.nvlink_rx_rate));
  EXPECT_EQ(bits(a.nvlink_tx_rate), bits(b.nvlink_tx_rate));
  EXPECT_EQ(a.nvlink_data_fresh, b.nvlink_data_fresh);
  ASSERT_EQ(a.gpm.has_value(), b.gpm.has_value());
  if (a.gpm) {
    EXPECT_EQ(bits(a.gpm->graphics), bits(b.gpm->graphics));
    EXPECT_EQ(bits(a.gpm->sm), bits(b.gpm->sm));
    EXPECT_EQ(bits(a.gpm->sm_occupancy), bits(b.gpm->sm_occupancy));
    EXPECT_EQ(bits(a.gpm->tensor), bits(b.gpm->tensor));
    EXPECT_EQ(bits(a.gpm->dram), bits(b.gpm->dram));
    EXPECT_EQ(bits(a.gpm->fp64), bits(b.gpm->fp64));
    EXPECT_EQ(bits(a.gpm->fp32), bits(b.gpm->fp32));
    EXPECT_EQ(bits(a.gpm->fp16), bits(b.gpm->fp16));
  }
  EXPECT_EQ(a.gpm_window_start, b.gpm_window_start);
  EXPECT_EQ(a.ecc_corrected, b.ecc_corrected);
  EXPECT_EQ(a.ecc_uncorrected, b.ecc_uncorrected);
  EXPECT_EQ(a.pcie_replay, b.pcie_replay);
  EXPECT_EQ(a.power_violation, b.power_violation);
  EXPECT_EQ(a.thermal_violation, b.thermal_violation);
  EXPECT_EQ(a.nvlink_errors_fresh, b.nvlink_errors_fresh);
  ASSERT_EQ(a.nvlinks.size(), b.nvlinks.size());
  for (std::size_t i = 0; i < a.nvlinks.size(); ++i) {
    const NvLinkSample &x = a.nvlinks[i], &y = b.nvlinks[i];
    EXPECT_EQ(x.link, y.link) << i;
    EXPECT_EQ(x.active, y.active) << i;
    EXPECT_EQ(x.replay, y.replay) << i;
    EXPECT_EQ(x.recovery, y.recovery) << i;
    EXPECT_EQ(x.crc, y.crc) << i;
    EXPECT_EQ(x.ecc, y.ecc) << i;
    EXPECT_EQ(x.tx_bytes, y.tx_bytes) << i;
    EXPECT_EQ(x.rx_bytes, y.rx_bytes) << i;
  }
  ASSERT_EQ(a.processes.has_value(), b.processes.has_value());
  if (a.processes) {
    ASSERT_EQ(a.processes->size(), b.processes->size());
    for (std::size_t i = 0; i < a.processes->size(); ++i) {
      EXPECT_EQ((*a.processes)[i].pid, (*b.processes)[i].pid) << i;
      EXPECT_EQ(bits((*a.processes)[i].memory), bits((*b.processes)[i].memory)) << i;
    }
  }
  ASSERT_EQ(a.process_utilization.size(), b.process_utilization.size());
  for (std::size_t i = 0; i < a.process_utilization.size(); ++i) {
    const gpu::ProcessUtilization &x = a.process_utilization[i], &y = b.process_utilization[i];
    EXPECT_EQ(x.pid, y.pid) << i;
    EXPECT_EQ(x.time_us, y.time_us) << i;
    EXPECT_EQ(std::bit_cast<std::uint64_t>(x.sm.value()),
              std::bit_cast<std::uint64_t>(y.sm.value()));
    EXPECT_EQ(std::bit_cast<std::uint64_t>(x.memory.value()),
              std::bit_cast<std::uint64_t>(y.memory.value()));
  }
}

// An H100 of an NVLink node at one slow sample, as the simulator's reads give it.
SlowSample h100_slow_sample() {
  SlowSample s;
  s.time = TimePoint(std::chrono::seconds(3600) + std::chrono::nanoseconds(17));
  s.energy = Joules(1234567.891);
  s.pcie_rx = BytesPerSecond(123456789.0);
  s.pcie_tx = BytesPerSecond(0.5);
  s.gpm = GpmActivity{Ratio(0.91), Ratio(0.875), std::nullopt, Ratio(0.333),
                      Ratio(0),    Ratio(0),     Ratio(0.01),  Ratio(0.6)};
  s.gpm_window_start = s.time - std::chrono::milliseconds(1000);
  s.ecc_corrected = 0;
  s.ecc_uncorrected = 0;
  s.pcie_replay = 3;
  s.power_violation = std::chrono::nanoseconds(98765432101234);
  s.thermal_violation = std::chrono::nanoseconds(0);
  for (unsigned l = 0; l < 18; ++l) {
    s.nvlinks.push_back({l, true, 0, 0, l == 5 ? 7U : 0U, 0, 1000000000000ULL * (l + 1),
                         999999999999ULL * (l + 2)});
  }
  s.nvlink_errors_fresh = false;
  s.nvlink_data_fresh = false;
  s.nvlink_rx_rate = BytesPerSecond(3.75e10);
  s.nvlink_tx_rate = BytesPerSecond(1.0 / 3);
  s.processes = std::vector<ProcessSample>{{4242, Bytes(80.0 * (1ULL << 30))}, {77, std::nullopt}};
  s.process_utilization = {{4242, 1764620000123456ULL, Ratio(0.97), Ratio(0.41)}};
  return s;
}

TEST(telemetry_packed_sample_test, a_slow_sample_comes_back_exactly) {
  const SlowSample s = h100_slow_sample();
  const PackedSlowSample packed(s);
  expect_same(s, packed.unpack());
  // The reason it exists: an 18-link sample in a fifth of its unpacked size.
  const std::size_t unpacked = sizeof(SlowSample) + s.nvlinks.size() * sizeof(NvLinkSample);
  EXPECT_LT(sizeof(PackedSlowSample) + packed.packed_size(), unpacked / 4)
      << packed.packed_size() << " packed bytes";
}

TEST(telemetry_packed_sample_test, a_slow_samples_odd_values_come_back_exactly) {
  SlowSample s = h100_slow_sample();
  s.energy = Joules(-0.0);
  s.pcie_rx = BytesPerSecond(std::numeric_limits<double>::quiet_NaN());
  s.pcie_tx = BytesPerSecond(std::numeric_limits<double>::infinity());
  s.gpm->dram = Ratio(0x1p53);  // a whole number too large for the short form
  s.gpm->fp64 = Ratio(-3);
  s.gpm_window_start = TimePoint::max();  // any two time points
  s.ecc_corrected = std::numeric_limits<std::uint64_t>::max();
  s.power_violation = std::chrono::nanoseconds(std::numeric_limits<std::int64_t>::min());
  s.thermal_violation = std::chrono::nanoseconds(-1);
  s.nvlinks[3].active = false;
  s.nvlinks[4].active.reset();
  s.nvlinks[4].tx_bytes.reset();
  s.nvlinks[4].link = 4000000000U;
  s.nvlink_errors_fresh = true;
  s.processes->back().pid = std::numeric_limits<unsigned>::max();
  expect_same(s, PackedSlowSample(s).unpack());
}

TEST(telemetry_packed_sample_test, a_slow_samples_absent_readings_stay_absent) {
  expect_same(SlowSample{}, PackedSlowSample(SlowSample{}).unpack());
  expect_same(SlowSample{}, PackedSlowSample{}.unpack());
  SlowSample s;
  s.time = TimePoint(std::chrono::seconds(5));
  s.gpm = GpmActivity{};                       // read, every fraction absent
  s.processes = std::vector<ProcessSample>{};  // read: none running
  s.nvlink_errors_fresh = false;
  const SlowSample back = PackedSlowSample(s).unpack();
  expect_same(s, back);
  EXPECT_FALSE(back.energy);
  ASSERT_TRUE(back.processes);
  EXPECT_TRUE(back.processes->empty());
}

}  // namespace
}  // namespace gpuclk::telemetry
