// The readings' table (telemetry/field_table.h): every name a reading goes by is there once, and
// the service protocol and /metrics's names follow from it.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "serve/protocol.h"
#include "telemetry/field_table.h"

namespace gpuclk::telemetry {
namespace {

bool ends_with(std::string_view s, std::string_view end) {
  return s.size() >= end.size() && s.substr(s.size() - end.size()) == end;
}

TEST(telemetry_field_table_test, every_name_is_unique_and_well_formed) {
  std::set<std::string_view> keys, queries, columns, metrics;
  int rows = 0;
  for_each_fast_field([&](const auto& f) {
    ++rows;
    SCOPED_TRACE(std::string(f.key));
    EXPECT_TRUE(keys.insert(f.key).second);
    EXPECT_TRUE(queries.insert(f.query).second);
    EXPECT_TRUE(columns.insert(f.dmon_column).second);
    EXPECT_FALSE(f.dmon_column.empty());
    EXPECT_LE(f.dmon_column.size(), 6u);  // dmon's column width
    EXPECT_FALSE(f.dmon_unit.empty());
    EXPECT_FALSE(is_slow(f.tier));
    if (f.metric.empty()) {
      EXPECT_TRUE(f.help.empty());
      return;
    }
    EXPECT_TRUE(metrics.insert(f.metric).second);
    EXPECT_EQ(f.metric.substr(0, 11), "gpuclk_gpu_");
    EXPECT_FALSE(f.help.empty());
    // Prometheus's base units: the metric's suffix says which.
    EXPECT_TRUE(ends_with(f.metric, "_hertz") || ends_with(f.metric, "_watts") ||
                ends_with(f.metric, "_celsius") || ends_with(f.metric, "_ratio") ||
                ends_with(f.metric, "_bytes"))
        << f.metric;
    EXPECT_EQ(ends_with(f.metric, "_hertz"), f.metric_scale == fields::kMegahertz);
  });
  EXPECT_EQ(rows, 15);
}

// The service protocol carries every reading under its key and gives back the same sample.
TEST(telemetry_field_table_test, the_protocol_carries_every_reading) {
  FastSample s;
  double v = 1;
  for_each_fast_field([&](const auto& f) {
    using Q = typename std::decay_t<decltype(f)>::quantity_type;
    s.*f.member = Q(v);
    v += 1;
  });
  const auto now = TimePoint{} + std::chrono::seconds(100);
  s.time = now;
  const auto j = serve::to_json(s, now);
  const auto back = serve::fast_sample_from_json(j, now);
  v = 1;
  for_each_fast_field([&](const auto& f) {
    SCOPED_TRACE(std::string(f.key));
    ASSERT_TRUE(j.contains(std::string(f.key)));
    EXPECT_DOUBLE_EQ(j.at(std::string(f.key)).template get<double>(), v);
    ASSERT_TRUE((back.*f.member).has_value());
    EXPECT_DOUBLE_EQ((back.*f.member)->value(), v);
    v += 1;
  });
}

TEST(telemetry_field_table_test, slow_rows_are_unique_counters_in_base_units) {
  std::set<std::string_view> keys, columns;
  std::set<std::pair<std::string_view, std::string_view>> series;
  int rows = 0;
  for_each_slow_field([&](const auto& f) {
    ++rows;
    SCOPED_TRACE(std::string(f.key));
    EXPECT_TRUE(keys.insert(f.key).second);
    if (!f.dmon_column.empty()) {
      EXPECT_TRUE(columns.insert(f.dmon_column).second);
    }
    EXPECT_TRUE(is_slow(f.tier));
    EXPECT_TRUE(series.insert({f.metric, f.label_value}).second);
    EXPECT_EQ(f.label_name.empty(), f.label_value.empty());
    EXPECT_FALSE(f.help.empty());
    // A counter's family ends in _total; a gauge's does not.
    EXPECT_EQ(ends_with(f.metric, "_total"), f.kind == MetricKind::counter) << f.metric;
  });
  EXPECT_EQ(rows, 8);
  std::set<std::string_view> engines;
  for (const auto& g : fields::kGpm) EXPECT_TRUE(engines.insert(g.key).second) << g.key;
}

// The protocol carries every counter and engine and gives back the same sample: counts exactly,
// durations in seconds.
TEST(telemetry_field_table_test, the_protocol_carries_every_counter) {
  SlowSample s;
  s.energy = Joules(123456.5);
  s.power_violation = std::chrono::milliseconds(2500);
  s.thermal_violation = std::chrono::milliseconds(750);
  s.ecc_corrected = 7;
  s.ecc_uncorrected = 1;
  s.pcie_replay = (std::uint64_t{1} << 40) + 3;
  s.pcie_rx = BytesPerSecond(1.5e9);
  s.pcie_tx = BytesPerSecond(2.5e8);
  GpmActivity gpm;
  double v = 0.1;
  for (const auto& g : fields::kGpm) {
    gpm.*g.member = Ratio(v);
    v += 0.1;
  }
  s.gpm = gpm;
  const auto now = TimePoint{} + std::chrono::seconds(100);
  s.time = now;
  const auto j = serve::to_json(s, now);
  EXPECT_DOUBLE_EQ(j.at("power_violation_seconds").get<double>(), 2.5);
  EXPECT_EQ(j.at("pcie_replay").get<std::uint64_t>(), (std::uint64_t{1} << 40) + 3);
  const auto back = serve::slow_sample_from_json(j, now);
  for_each_slow_field([&](const auto& f) {
    SCOPED_TRACE(std::string(f.key));
    ASSERT_TRUE(j.contains(std::string(f.key)));
    ASSERT_TRUE((back.*f.member).has_value());
    EXPECT_DOUBLE_EQ(number_of(*(back.*f.member)), number_of(*(s.*f.member)));
  });
  ASSERT_TRUE(back.gpm.has_value());
  for (const auto& g : fields::kGpm) {
    SCOPED_TRACE(std::string(g.key));
    ASSERT_TRUE(((*back.gpm).*g.member).has_value());
    EXPECT_DOUBLE_EQ(((*back.gpm).*g.member)->value(), ((*s.gpm).*g.member)->value());
  }
}

}  // namespace
}  // namespace gpuclk::telemetry
