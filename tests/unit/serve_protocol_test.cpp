// serve::protocol: what travels between the service and a read command comes back identical
// (so the same printer prints the same bytes), and errors have the documented shape.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "output/printer.h"
#include "output/value.h"
#include "serve/protocol.h"

namespace gpuclk::serve {
namespace {

using units::Celsius;
using units::Megahertz;
using units::Ratio;
using units::Watts;

TEST(serve_protocol, status_snapshot_round_trips_every_kind_of_reading) {
  gpu::StatusSnapshot s;
  s.index = 3;
  s.name = "NVIDIA H100 80GB HBM3";
  s.uuid = "GPU-cba78776-3017-caf5-5d64-a73aee97faac";
  s.pstate = 0;
  s.sm_clock = Megahertz(1755);
  s.sm_max = Megahertz(1980);
  s.memory_clock = gpu::Reading<Megahertz>::error(15);
  s.power_draw = Watts(0.1 + 0.2);  // not exactly representable: must round-trip exactly
  s.power_limit = Watts(700);
  s.temperature = Celsius(61);
  s.utilization = gpu::Utilization{Ratio(0.97), Ratio(1.0 / 3)};
  s.clock_reasons = gpu::ClockReasons(gpu::ClockReasons::sw_power_cap | 0x1000);
  s.persistence_mode = false;
  s.pcie_link = gpu::PcieLink{3, 8};
  s.pcie_max = gpu::PcieLink{5, 16};
  s.retired_pages = gpu::RetiredPages{2, 1, true};

  auto back = status_from_json(json::parse(to_json(s).dump()));
  EXPECT_EQ(back.index, 3u);
  EXPECT_EQ(back.uuid, s.uuid);
  EXPECT_EQ(*back.pstate, 0);
  EXPECT_EQ(back.sm_clock->value(), 1755);
  EXPECT_EQ(back.memory_clock.status(), gpu::ReadStatus::error);
  EXPECT_EQ(back.memory_clock.error_code(), 15);
  EXPECT_EQ(back.app_sm_clock.status(), gpu::ReadStatus::not_supported);
  EXPECT_EQ(back.power_draw->value(), 0.1 + 0.2);
  EXPECT_EQ(back.utilization->memory.value(), 1.0 / 3);
  EXPECT_EQ(back.clock_reasons->bits(), gpu::ClockReasons::sw_power_cap | 0x1000);
  EXPECT_FALSE(*back.persistence_mode);
  EXPECT_EQ(back.pcie_link->width, 8u);
  ASSERT_TRUE(back.retired_pages);
  EXPECT_EQ(back.retired_pages->multiple_sbe, 2u);
  EXPECT_EQ(back.retired_pages->dbe, 1u);
  EXPECT_TRUE(back.retired_pages->pending);
  EXPECT_EQ(back.pcie_max->generation, 5u);
}

TEST(serve_protocol, values_round_trip_with_unit_and_precision) {
  const output::Value values[] = {output::na(),
                                  output::text("P0"),
                                  output::flag(true),
                                  output::integer(1980, "MHz"),
                                  output::number(75.97, "W", 2),
                                  output::number(1.0 / 7, "", 3)};
  for (const auto& v : values) {
    auto back = value_from_json(json::parse(to_json(v).dump()));
    EXPECT_EQ(back.content, v.content);
    EXPECT_EQ(back.unit, v.unit);
    EXPECT_EQ(back.precision, v.precision);
    EXPECT_EQ(output::to_text(back), output::to_text(v));
  }
}

TEST(serve_protocol, report_tree_and_table_round_trip_to_the_same_printed_bytes) {
  output::Node root;
  auto& gpus = root.section("gpus", "GPUs", true);
  auto& g = gpus.section("gpu", "GPU 0: H100");
  g.add("index", "Index", output::integer(0));
  auto& clocks = g.section("clocks", "Clocks");
  clocks.add("sm", "SM", output::integer(1980, "MHz"));
  clocks.add("video", "Video", output::na());
  output::Table table;
  table.columns = {{"gpu", "", true}, {"power", "Power W", false, "W"}};
  table.rows = {{output::text("GPU0"), output::number(412.5, "W", 1)}};
  for (auto kind :
       {output::Format::Kind::table, output::Format::Kind::csv, output::Format::Kind::json}) {
    std::ostringstream a, b;
    auto pa = output::make_printer(output::Format{kind}, a);
    auto pb = output::make_printer(output::Format{kind}, b);
    pa->print_tree(root);
    pb->print_tree(node_from_json(json::parse(to_json(root).dump())));
    pa->print_table(table);
    pb->print_table(table_from_json(json::parse(to_json(table).dump())));
    EXPECT_EQ(a.str(), b.str());
    EXPECT_NE(a.str().find("1980"), std::string::npos);
  }
}

TEST(serve_protocol, kept_events_round_trip_with_their_time_and_kind) {
  const telemetry::TimePoint now(std::chrono::seconds(1000));
  gpu::GpuEvent xid;
  xid.gpu = 2;
  xid.kind = gpu::EventKind::xid;
  xid.xid = 79;
  xid.time = now - std::chrono::milliseconds(4125);
  const auto j = to_json(xid, now);
  EXPECT_EQ(j.at("kind"), "xid");
  EXPECT_EQ(j.at("xid"), 79);
  EXPECT_DOUBLE_EQ(j.at("t").get<double>(), -4.125);
  const auto back = event_from_json(json::parse(j.dump()), 2, now);
  EXPECT_EQ(back.gpu, 2u);
  EXPECT_EQ(back.kind, gpu::EventKind::xid);
  EXPECT_EQ(back.xid, 79u);
  EXPECT_EQ(back.time, xid.time);

  gpu::GpuEvent ecc;
  ecc.kind = gpu::EventKind::double_bit_ecc;
  ecc.time = now;
  const auto ecc_json = to_json(ecc, now);
  EXPECT_FALSE(ecc_json.contains("xid"));  // only an Xid has a code
  EXPECT_EQ(event_from_json(ecc_json, 0, now).kind, gpu::EventKind::double_bit_ecc);
  EXPECT_THROW(event_from_json(json{{"t", 0}, {"kind", "pstate"}}, 0, now), std::invalid_argument);
}

TEST(serve_protocol, history_samples_round_trip_with_their_time) {
  const telemetry::TimePoint now(std::chrono::seconds(1000));
  telemetry::FastSample f;
  f.time = now - std::chrono::milliseconds(2500);
  f.sm_clock = Megahertz(1410);
  f.power = Watts(0.1 + 0.2);
  f.gpu_utilization = Ratio(1.0 / 3);
  f.clock_reasons = gpu::ClockReasons(gpu::ClockReasons::sw_power_cap);
  f.memory_used = units::Bytes(62.5 * (1 << 30));
  f.pstate = 0;
  f.bar1_used = units::Bytes(5 << 20);
  f.encoder = Ratio(0.25);  // dmon -s u and -s m through the stream
  const auto back = fast_sample_from_json(json::parse(to_json(f, now).dump()), now);
  EXPECT_EQ(back.time, f.time);
  EXPECT_EQ(back.sm_clock->value(), 1410);
  EXPECT_EQ(back.power->value(), 0.1 + 0.2);
  EXPECT_EQ(back.gpu_utilization->value(), 1.0 / 3);
  EXPECT_EQ(back.clock_reasons->bits(), gpu::ClockReasons::sw_power_cap);
  EXPECT_EQ(back.memory_used->value(), f.memory_used->value());
  EXPECT_EQ(*back.pstate, 0);
  EXPECT_EQ(back.bar1_used->value(), 5 << 20);
  EXPECT_EQ(back.encoder->value(), 0.25);
  EXPECT_FALSE(back.ofa);
  EXPECT_FALSE(back.memory_clock);  // absent stays absent
  EXPECT_FALSE(back.gpu_temperature);

  telemetry::SlowSample s;
  s.time = now;
  s.energy = units::Joules(123456.5);
  s.gpm = telemetry::GpmActivity{};
  s.gpm->sm = Ratio(0.85);
  s.gpm->tensor = Ratio(0.4);
  s.power_violation = std::chrono::seconds(3);
  const auto slow = slow_sample_from_json(json::parse(to_json(s, now).dump()), now);
  EXPECT_EQ(slow.time, now);
  EXPECT_EQ(slow.energy->value(), 123456.5);
  EXPECT_EQ(slow.gpm->sm->value(), 0.85);
  EXPECT_EQ(slow.gpm->tensor->value(), 0.4);
  EXPECT_FALSE(slow.gpm->dram);
  EXPECT_EQ(*slow.power_violation, std::chrono::seconds(3));
  EXPECT_FALSE(slow.thermal_violation);
}

TEST(serve_protocol, change_reports_round_trip_every_outcome) {
  control::ChangeReport r;
  for (auto o :
       {control::Outcome::unchanged, control::Outcome::would_change, control::Outcome::changed,
        control::Outcome::failed, control::Outcome::not_attempted, control::Outcome::rolled_back,
        control::Outcome::rollback_failed})
    r.settings.push_back({1, "GPU-x", control::Setting::locked_gpu_clocks, "unlocked", "1755 MHz",
                          "SM 1755 MHz now", o, o == control::Outcome::failed ? "denied" : ""});
  r.notes = {"GPU 1: snapped 1750 -> 1755 MHz"};
  r.exit = ExitCode::partial;
  r.error = "GPU 1 in between";
  r.hint = "gpuclk restore";
  const auto back = change_report_from_json(json::parse(to_json(r).dump()));
  ASSERT_EQ(back.settings.size(), r.settings.size());
  for (std::size_t i = 0; i < r.settings.size(); ++i) {
    EXPECT_EQ(back.settings[i].outcome, r.settings[i].outcome);
    EXPECT_EQ(back.settings[i].setting, r.settings[i].setting);
    EXPECT_EQ(back.settings[i].read_back, r.settings[i].read_back);
    EXPECT_EQ(back.settings[i].error, r.settings[i].error);
  }
  EXPECT_EQ(back.notes, r.notes);
  EXPECT_EQ(back.exit, ExitCode::partial);
  EXPECT_EQ(back.hint, "gpuclk restore");
  auto bad = to_json(r);
  bad["settings"][0]["result"] = "exploded";
  EXPECT_ANY_THROW(change_report_from_json(bad));
}

TEST(serve_protocol, error_response_carries_message_and_exit_code) {
  auto r = error_response("no GPU with index 9", 6);
  EXPECT_EQ(r["v"], kProtocolVersion);
  EXPECT_EQ(r["ok"], false);
  EXPECT_EQ(r["code"], 6);
  EXPECT_EQ(r["error"], "no GPU with index 9");
}

TEST(serve_protocol, socket_path_prefers_option_then_environment) {
  ::setenv("GPUCLK_SOCKET", "/tmp/from-env.sock", 1);
  EXPECT_EQ(socket_path("/tmp/given.sock"), "/tmp/given.sock");
  EXPECT_EQ(socket_path(), "/tmp/from-env.sock");
  ::unsetenv("GPUCLK_SOCKET");
  EXPECT_FALSE(socket_path().empty());
}

TEST(serve_protocol, users_who_named_no_socket_also_look_for_the_system_service) {
  ::unsetenv("GPUCLK_SOCKET");
  EXPECT_EQ(client_socket_paths("/tmp/given.sock", 1000),
            std::vector<std::string>{"/tmp/given.sock"});
  const auto user = client_socket_paths("", 1000);
  ASSERT_EQ(user.size(), 2u);
  EXPECT_EQ(user.back(), kSystemSocket);
  ::setenv("GPUCLK_SOCKET", "/tmp/from-env.sock", 1);
  EXPECT_EQ(client_socket_paths("", 1000), std::vector<std::string>{"/tmp/from-env.sock"});
  ::unsetenv("GPUCLK_SOCKET");
  if (::geteuid() == 0) {
    EXPECT_EQ(client_socket_paths("", 0), std::vector<std::string>{kSystemSocket});
  }
}

}  // namespace
}  // namespace gpuclk::serve
