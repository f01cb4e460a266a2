// Writes as the driver takes them (every error path), their effect on the clocks, and the state's
// round trip through bytes.
#include <gtest/gtest.h>

#include "node_model.h"
#include "sim_test_support.h"

namespace gpuclk::sim {
namespace {

using testing::one_gpu;

NodeModel busy_gpu(bool privileged = true) {
  return NodeModel(std::make_shared<const Scenario>(
      one_gpu({testing::compute(DataType::fp32, 1e6, 400)}, false, privileged)));
}

TEST(sim_node_model_test, locked_clocks_hold_the_clock_and_reset_releases_it) {
  NodeModel model = busy_gpu();
  model.step(1);
  EXPECT_EQ(model.gpu(0).dynamics.sm_mhz, 1980u);
  ASSERT_EQ(model.lock_gpu_clocks(0, 1200, 1200), Status::ok);
  model.step(0.1);
  EXPECT_EQ(model.gpu(0).dynamics.sm_mhz, 1200u);
  EXPECT_TRUE(model.gpu(0).dynamics.event_reasons & reason::applications_clocks);
  ASSERT_EQ(model.reset_gpu_locked_clocks(0), Status::ok);
  model.step(0.1);
  EXPECT_EQ(model.gpu(0).dynamics.sm_mhz, 1980u);
}

TEST(sim_node_model_test, locked_clocks_error_paths) {
  NodeModel model = busy_gpu();
  EXPECT_EQ(model.lock_gpu_clocks(0, 1500, 1200), Status::invalid_argument);  // min > max
  EXPECT_EQ(model.lock_gpu_clocks(0, 100, 1200), Status::invalid_argument);   // below the lowest
  EXPECT_EQ(model.lock_gpu_clocks(0, 1200, 2500), Status::invalid_argument);  // above the highest
  EXPECT_EQ(model.lock_gpu_clocks(0, 1400, 1400), Status::invalid_argument);  // no supported clock
  EXPECT_EQ(model.lock_gpu_clocks(0, 1400, 1420), Status::ok);                // 1410 is in range
  EXPECT_EQ(model.lock_gpu_clocks(0, kClockLimitTdp, kClockLimitTdp), Status::ok);
  EXPECT_EQ(model.gpu(0).settings.locked_sm_max_mhz, model.config(0).spec->sm_base_mhz);
  EXPECT_EQ(model.lock_gpu_clocks(0, 345, kClockLimitUnlimited), Status::ok);
  EXPECT_EQ(model.gpu(0).settings.locked_sm_max_mhz, 1980u);
}

TEST(sim_node_model_test, idle_gpu_drops_to_the_lock_minimum) {
  NodeModel model(std::make_shared<const Scenario>(one_gpu({})));  // no process at all
  model.step(0.5);
  EXPECT_EQ(model.gpu(0).dynamics.sm_mhz, 345u);
  EXPECT_EQ(model.gpu(0).dynamics.event_reasons, reason::gpu_idle);
  ASSERT_EQ(model.lock_gpu_clocks(0, 1005, 1500), Status::ok);
  model.step(0.5);
  EXPECT_EQ(model.gpu(0).dynamics.sm_mhz, 1005u);
}

TEST(sim_node_model_test, applications_clocks_must_be_a_supported_pair) {
  NodeModel model = busy_gpu();
  EXPECT_EQ(model.set_applications_clocks(0, 2619, 1411), Status::invalid_argument);
  EXPECT_EQ(model.set_applications_clocks(0, 2000, 1410), Status::invalid_argument);
  ASSERT_EQ(model.set_applications_clocks(0, 1593, 1410), Status::ok);
  model.step(0.5);
  EXPECT_EQ(model.gpu(0).dynamics.sm_mhz, 1410u);
  EXPECT_EQ(model.gpu(0).dynamics.memory_mhz, 1593u);
  // A lock supersedes the application clocks.
  ASSERT_EQ(model.lock_gpu_clocks(0, 1800, 1800), Status::ok);
  model.step(0.1);
  EXPECT_EQ(model.gpu(0).dynamics.sm_mhz, 1800u);
  ASSERT_EQ(model.reset_gpu_locked_clocks(0), Status::ok);
  ASSERT_EQ(model.reset_applications_clocks(0), Status::ok);
  model.step(0.1);
  EXPECT_EQ(model.gpu(0).dynamics.sm_mhz, 1980u);
  EXPECT_EQ(model.gpu(0).dynamics.memory_mhz, 2619u);
}

TEST(sim_node_model_test, memory_locked_clocks_are_not_supported_on_hopper) {
  NodeModel model = busy_gpu();
  EXPECT_EQ(model.lock_memory_clocks(0, 1593, 2619), Status::not_supported);
  EXPECT_EQ(model.reset_memory_locked_clocks(0), Status::not_supported);
}

TEST(sim_node_model_test, memory_locked_clocks_where_supported) {
  Scenario s = one_gpu({testing::compute(DataType::fp32, 1e6, 400)});
  s.gpus[0].spec = load_gpu_spec(testing::scenarios_dir() / "models" / "l4.toml");
  s.gpus[0].app_sm_mhz = 2040;
  s.gpus[0].app_memory_mhz = 6251;
  s.gpus[0].power_limit_mw = 72000;
  s.gpus[0].pcie_generation = 4;
  NodeModel model(std::make_shared<const Scenario>(s));
  EXPECT_EQ(model.lock_memory_clocks(0, 500, 6000), Status::invalid_argument);  // none in range
  EXPECT_EQ(model.lock_memory_clocks(0, 6251, 405), Status::invalid_argument);
  ASSERT_EQ(model.lock_memory_clocks(0, 405, 405), Status::ok);
  model.step(0.1);
  EXPECT_EQ(model.gpu(0).dynamics.memory_mhz, 405u);
  ASSERT_EQ(model.reset_memory_locked_clocks(0), Status::ok);
  model.step(0.1);
  EXPECT_EQ(model.gpu(0).dynamics.memory_mhz, 6251u);
}

TEST(sim_node_model_test, power_limit_must_be_within_the_constraints_and_binds) {
  NodeModel model = busy_gpu();
  EXPECT_EQ(model.set_power_limit(0, 199999), Status::invalid_argument);
  EXPECT_EQ(model.set_power_limit(0, 700001), Status::invalid_argument);
  ASSERT_EQ(model.set_power_limit(0, 300000), Status::ok);
  model.step(2);
  const GpuDynamics& d = model.gpu(0).dynamics;
  EXPECT_LE(d.power_w, 300.0);
  EXPECT_LT(d.sm_mhz, 1980u);
  EXPECT_TRUE(d.event_reasons & reason::sw_power_cap);
  EXPECT_GT(d.violation_ns[static_cast<int>(Policy::power)], 1'000'000'000ull);
  // One 15 MHz step higher would not fit.
  EXPECT_EQ((model.gpu(0).dynamics.sm_mhz - 345) % 15, 0u);
}

TEST(sim_node_model_test, persistence_mode_round_trips) {
  NodeModel model = busy_gpu();
  ASSERT_EQ(model.set_persistence_mode(0, false), Status::ok);
  EXPECT_EQ(model.gpu(0).settings.persistence_mode, 0u);
  ASSERT_EQ(model.set_persistence_mode(0, true), Status::ok);
  EXPECT_EQ(model.gpu(0).settings.persistence_mode, 1u);
}

TEST(sim_node_model_test, every_write_needs_privilege) {
  NodeModel model = busy_gpu(false);
  EXPECT_EQ(model.lock_gpu_clocks(0, 1200, 1200), Status::no_permission);
  EXPECT_EQ(model.reset_gpu_locked_clocks(0), Status::no_permission);
  EXPECT_EQ(model.set_applications_clocks(0, 2619, 1410), Status::no_permission);
  EXPECT_EQ(model.reset_applications_clocks(0), Status::no_permission);
  EXPECT_EQ(model.set_power_limit(0, 300000), Status::no_permission);
  EXPECT_EQ(model.set_persistence_mode(0, false), Status::no_permission);
  EXPECT_EQ(model.lock_memory_clocks(0, 1593, 1593),
            Status::not_supported);  // Hopper: no such feature
}

TEST(sim_node_model_test, a_lost_gpu_refuses_writes_and_stops) {
  Scenario s = one_gpu({testing::compute(DataType::fp32, 1e6, 400)});
  s.gpus[0].lost_at_s = 1.0;
  NodeModel model(std::make_shared<const Scenario>(s));
  model.step(2);
  EXPECT_TRUE(model.gpu(0).dynamics.lost);
  const double energy = model.gpu(0).dynamics.energy_j;
  model.step(2);
  EXPECT_EQ(model.gpu(0).dynamics.energy_j, energy);
  EXPECT_EQ(model.lock_gpu_clocks(0, 1200, 1200), Status::gpu_lost);
  EXPECT_EQ(model.set_power_limit(0, 300000), Status::gpu_lost);
  EXPECT_EQ(model.lock_memory_clocks(0, 1593, 1593), Status::gpu_lost);
}

TEST(sim_node_model_test, state_round_trips_and_refuses_other_scenarios) {
  NodeModel a = busy_gpu();
  ASSERT_EQ(a.lock_gpu_clocks(0, 1500, 1500), Status::ok);
  a.step(3.3);
  NodeModel b = busy_gpu();
  ASSERT_TRUE(b.deserialize(a.serialize()));
  EXPECT_EQ(b.tick(), a.tick());
  a.step(1);
  b.step(1);
  EXPECT_EQ(a.serialize(), b.serialize());

  Scenario other = one_gpu({});
  other.fingerprint = 43;
  NodeModel c(std::make_shared<const Scenario>(other));
  EXPECT_FALSE(c.deserialize(a.serialize()));
  EXPECT_FALSE(c.deserialize("short"));
  EXPECT_EQ(c.tick(), 0u);
}

TEST(sim_node_model_test, long_gaps_are_crossed_quickly_and_stay_sane) {
  NodeModel model(std::make_shared<const Scenario>(
      one_gpu({testing::compute(DataType::bf16, 300), testing::wait(PhaseKind::off, 2)}, true)));
  model.advance_to(24 * 3600.0);  // a day in 1 s steps, the last minute in 10 ms ticks
  const GpuDynamics& d = model.gpu(0).dynamics;
  EXPECT_EQ(model.tick(), 24u * 3600u * 100u);
  EXPECT_GT(d.iterations, 1000u);
  EXPECT_LT(d.die_c, 95);
  EXPECT_GT(d.energy_j / (24 * 3600.0), 100);  // average power of a busy GPU
}

}  // namespace
}  // namespace gpuclk::sim
