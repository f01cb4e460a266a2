// Jobs injected on demand (sim/model/job.h): they take over the GPU, progress at the roofline
// rate of the clocks the settings and the power cap allow, end when done, stopped or out of
// time, and the scenario's workload resumes where it was.
#include <gtest/gtest.h>

#include <cmath>

#include "node_model.h"
#include "sim_test_support.h"

namespace gpuclk::sim {
namespace {

using testing::one_gpu;

NodeModel idle_node() { return NodeModel(std::make_shared<const Scenario>(one_gpu({}))); }

TEST(sim_job_test, bf16_job_runs_at_the_power_capped_clock_and_completes) {
  NodeModel model = idle_node();
  std::uint64_t id = 0;
  // 681 TFLOP/s × 10 s at the 1410 MHz the 700 W cap allows (the calibration point).
  ASSERT_EQ(model.start_job(0, "gemm-bf16", 6810e12, 0, 77, id), Status::ok);
  EXPECT_EQ(id, 1u);
  model.step(5);
  const GpuDynamics& d = model.gpu(0).dynamics;
  EXPECT_NEAR(d.sm_mhz, 1410, 15);
  EXPECT_TRUE(d.context_active);
  EXPECT_TRUE(d.job.running);
  model.step(6);
  EXPECT_FALSE(d.job.running);
  EXPECT_TRUE(d.job.completed);
  EXPECT_DOUBLE_EQ(d.job.done, 6810e12);
  EXPECT_NEAR(d.job.end_s - d.job.start_s, 10.0, 0.2);
  model.step(0.1);
  EXPECT_FALSE(d.context_active);  // the job's process is gone: idle again
}

TEST(sim_job_test, compute_bound_job_rate_follows_a_locked_clock) {
  NodeModel model = idle_node();
  ASSERT_EQ(model.lock_gpu_clocks(0, 990, 990), Status::ok);
  std::uint64_t id = 0;
  ASSERT_EQ(model.start_job(0, "gemm-fp32", 0, 4, 0, id), Status::ok);
  model.step(5);
  const InjectedJob& job = model.gpu(0).dynamics.job;
  EXPECT_FALSE(job.running);
  EXPECT_FALSE(job.completed);  // out of time, not done
  EXPECT_NEAR(job.end_s - job.start_s, 4.0, 1e-9);
  // FP32: 51.8 TFLOP/s at 1980 MHz (calibration), so half of it at 990 MHz.
  EXPECT_NEAR(job.done / 4 / 1e12, 51.8 / 2, 0.5);
}

TEST(sim_job_test, stop_ends_the_job_and_errors_are_reported) {
  NodeModel model = idle_node();
  std::uint64_t id = 0;
  EXPECT_EQ(model.start_job(0, "gemm-int3", 1e12, 0, 0, id), Status::invalid_argument);
  EXPECT_EQ(model.start_job(0, "mem-copy", -1, 0, 0, id), Status::invalid_argument);
  EXPECT_EQ(model.start_job(0, "mem-copy", 0, 0, 0, id), Status::invalid_argument);
  ASSERT_EQ(model.start_job(0, "mem-copy", 0, 100, 0, id), Status::ok);
  std::uint64_t other = 0;
  EXPECT_EQ(model.start_job(0, "fma", 1e12, 0, 0, other), Status::in_use);
  model.step(1);
  EXPECT_EQ(model.stop_job(0, id + 1), Status::invalid_argument);
  ASSERT_EQ(model.stop_job(0, id), Status::ok);
  const InjectedJob& job = model.gpu(0).dynamics.job;
  EXPECT_FALSE(job.running);
  EXPECT_NEAR(job.end_s, 1.0, 1e-9);
  EXPECT_NEAR(job.done / 1e12, 3.0, 0.1);  // the copy's ~3 TB/s
  EXPECT_EQ(model.start_job(0, "fma", 1e12, 0, 0, other), Status::ok);
  EXPECT_EQ(other, id + 1);
}

TEST(sim_job_test, the_scenario_workload_pauses_and_resumes) {
  NodeModel model(std::make_shared<const Scenario>(
      one_gpu({testing::compute(DataType::fp32, 1e6, 400)}, false)));
  model.step(1);
  const double before = model.gpu(0).dynamics.phase_done;
  EXPECT_GT(before, 0);
  std::uint64_t id = 0;
  ASSERT_EQ(model.start_job(0, "mem-copy", 0, 2, 0, id), Status::ok);
  model.step(2);
  EXPECT_DOUBLE_EQ(model.gpu(0).dynamics.phase_done, before);
  model.step(1);
  EXPECT_GT(model.gpu(0).dynamics.phase_done, before);
}

}  // namespace
}  // namespace gpuclk::sim
