// The readings' table (telemetry/field_table.h): every name a reading goes by is there once, and
// the service protocol and /metrics's names follow from it; the NVLink counters' rows, their
// round trip through the protocol and the packing, and the one NVLink rate.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "serve/protocol.h"
#include "telemetry/field_table.h"
#include "telemetry/packed_sample.h"

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
    EXPECT_EQ(f.label_name.empty(), f.label_value.empty());
    if (f.metric.empty()) {  // a rate dmon shows and /metrics has as a counter
      EXPECT_TRUE(f.help.empty());
      EXPECT_FALSE(f.dmon_column.empty());
      return;
    }
    EXPECT_TRUE(series.insert({f.metric, f.label_value}).second);
    EXPECT_FALSE(f.help.empty());
    // A counter's family ends in _total; a gauge's does not.
    EXPECT_EQ(ends_with(f.metric, "_total"), f.kind == MetricKind::counter) << f.metric;
  });
  EXPECT_EQ(rows, 10);
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
  s.nvlink_rx_rate = BytesPerSecond(4.25e10);
  s.nvlink_tx_rate = BytesPerSecond(0.5);
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

// Every NvLinkSample counter is a row: names unique, every row read from its own counter of the
// device's reading, per-link families that are counters.
TEST(telemetry_field_table_test, nvlink_rows_are_unique_counters) {
  std::set<std::string_view> keys, queries;
  std::set<std::pair<std::string_view, std::string_view>> series;
  gpu::NvLinkCounters c;
  std::uint64_t v = 1;
  for (auto& e : c.errors) e = gpu::Reading<std::uint64_t>(v++);
  c.tx_bytes = gpu::Reading<std::uint64_t>(v++);
  c.rx_bytes = gpu::Reading<std::uint64_t>(v++);
  std::set<std::uint64_t> read;
  for (const auto& f : fields::kNvLink) {
    SCOPED_TRACE(std::string(f.key));
    EXPECT_TRUE(keys.insert(f.key).second);
    EXPECT_TRUE(queries.insert(f.query).second);
    EXPECT_EQ(f.query.substr(0, 7), "nvlink.");
    EXPECT_TRUE(series.insert({f.metric, f.label_value}).second);
    EXPECT_EQ(f.metric.substr(0, 14), "gpuclk_nvlink_");
    EXPECT_TRUE(ends_with(f.metric, "_total"));
    EXPECT_FALSE(f.help.empty());
    // Error rows carry a type label; the data rows none.
    EXPECT_EQ(f.error, !f.label_value.empty());
    ASSERT_TRUE(f.reading(c).optional().has_value());
    EXPECT_TRUE(read.insert(*f.reading(c).optional()).second) << "two rows read one counter";
  }
  EXPECT_EQ(read.size(), 6u);
}

SlowSample with_links(double seconds, std::uint64_t base) {
  SlowSample s;
  s.time =
      TimePoint{} + std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
  for (unsigned k = 0; k < 3; ++k) {
    NvLinkSample l;
    l.link = k;
    l.active = k != 1;
    std::uint64_t n = base + k;
    for (const auto& f : fields::kNvLink) l.*f.member = n++ * 1000;
    s.nvlinks.push_back(l);
  }
  return s;
}

// The protocol and the packing carry every link counter back exactly.
TEST(telemetry_field_table_test, link_counters_come_back_through_the_protocol_and_packing) {
  auto s = with_links(100, (std::uint64_t{1} << 40));
  s.nvlinks[2].crc.reset();
  s.nvlink_errors_fresh = false;
  s.nvlink_data_fresh = false;
  const auto now = s.time;
  const auto j = serve::to_json(s, now);
  EXPECT_EQ(j.at("nvlinks").at(0).at("tx_bytes").get<std::uint64_t>(), *s.nvlinks[0].tx_bytes);
  EXPECT_TRUE(j.at("nvlink_errors_cached").get<bool>());
  EXPECT_TRUE(j.at("nvlink_data_cached").get<bool>());
  for (const auto& back : {serve::slow_sample_from_json(j, now), PackedSlowSample(s).unpack()}) {
    ASSERT_EQ(back.nvlinks.size(), 3u);
    EXPECT_FALSE(back.nvlink_errors_fresh);
    EXPECT_FALSE(back.nvlink_data_fresh);
    for (std::size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(back.nvlinks[k].link, s.nvlinks[k].link);
      EXPECT_EQ(back.nvlinks[k].active, s.nvlinks[k].active);
      for (const auto& f : fields::kNvLink)
        EXPECT_EQ(back.nvlinks[k].*f.member, s.nvlinks[k].*f.member) << f.key << " link " << k;
    }
  }
}

// One rate for dmon and the dcgm-exporter names: the rows summed over the links, per second.
TEST(telemetry_field_table_test, nvlink_rate_is_the_links_sum_over_time) {
  const auto a = with_links(10, 0), b = with_links(12.5, 7);
  // Each link's counter grew by 7000: 3 links over 2.5 s.
  ASSERT_TRUE(nvlink_rate(a, b, {fields::nvlink_tx}).has_value());
  EXPECT_DOUBLE_EQ(*nvlink_rate(a, b, {fields::nvlink_tx}), 3 * 7000 / 2.5);
  EXPECT_DOUBLE_EQ(*nvlink_rate(a, b, {fields::nvlink_tx, fields::nvlink_rx}), 2 * 3 * 7000 / 2.5);
  EXPECT_EQ(link_sum(a.nvlinks, fields::nvlink_rx), (5 + 6 + 7) * 1000u);
  // No time passed, the counters went back (the driver reloaded), no links, a counter no link has.
  EXPECT_FALSE(nvlink_rate(a, a, {fields::nvlink_tx}).has_value());
  EXPECT_FALSE(nvlink_rate(b, a, {fields::nvlink_tx}).has_value());
  EXPECT_FALSE(nvlink_rate(SlowSample{}, b, {fields::nvlink_tx}).has_value());
  auto c = b;
  for (auto& l : c.nvlinks) l.rx_bytes.reset();
  EXPECT_FALSE(nvlink_rate(a, c, {fields::nvlink_tx, fields::nvlink_rx}).has_value());
  EXPECT_TRUE(nvlink_rate(a, c, {fields::nvlink_tx}).has_value());
  EXPECT_FALSE(link_sum(c.nvlinks, fields::nvlink_rx).has_value());
}

}  // namespace
}  // namespace gpuclk::telemetry
