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
  const InjectedJob& job = *find_job(d, id);
  EXPECT_TRUE(job.running);
  model.step(6);
  EXPECT_FALSE(job.running);
  EXPECT_TRUE(job.completed);
  EXPECT_DOUBLE_EQ(job.done, 6810e12);
  EXPECT_NEAR(job.end_s - job.start_s, 10.0, 0.2);
  // Alone on its GPU, it drew all the GPU's energy while it ran.
  EXPECT_GT(job.energy_j, 6000);
  EXPECT_NEAR(job.busy_s, 10.0, 0.2);
  model.step(0.1);
  EXPECT_FALSE(d.context_active);  // the job's process is gone: idle again
}

TEST(sim_job_test, compute_bound_job_rate_follows_a_locked_clock) {
  NodeModel model = idle_node();
  ASSERT_EQ(model.lock_gpu_clocks(0, 990, 990), Status::ok);
  std::uint64_t id = 0;
  ASSERT_EQ(model.start_job(0, "gemm-fp32", 0, 4, 0, id), Status::ok);
  model.step(5);
  const InjectedJob& job = *find_job(model.gpu(0).dynamics, id);
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
  model.step(1);
  EXPECT_EQ(model.stop_job(0, id + 1), Status::invalid_argument);
  ASSERT_EQ(model.stop_job(0, id), Status::ok);
  const InjectedJob& job = *find_job(model.gpu(0).dynamics, id);
  EXPECT_FALSE(job.running);
  EXPECT_NEAR(job.end_s, 1.0, 1e-9);
  EXPECT_NEAR(job.done / 1e12, 3.0, 0.1);  // the copy's ~3 TB/s
  // Four share a GPU; a fifth waits.
  std::uint64_t other = 0;
  for (int k = 0; k < kMaxJobs; ++k) {
    ASSERT_EQ(model.start_job(0, "fma", 0, 10, 0, other), Status::ok);
    EXPECT_EQ(other, id + 1 + static_cast<std::uint64_t>(k));
  }
  EXPECT_EQ(model.start_job(0, "fma", 0, 10, 0, other), Status::in_use);
  EXPECT_EQ(find_job(model.gpu(0).dynamics, id), nullptr);  // its slot went to a new job
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

TEST(sim_job_test, jobs_on_one_gpu_share_its_time_and_energy) {
  NodeModel model = idle_node();
  // Two copies, one of twice the other's bytes: while both run each gets half the GPU, so the
  // small one ends after 2 × its alone-time and the large one runs alone after that.
  std::uint64_t small = 0, large = 0;
  ASSERT_EQ(model.start_job(0, "mem-copy", 3e12, 0, 101, small), Status::ok);
  ASSERT_EQ(model.start_job(0, "mem-copy", 6e12, 0, 102, large), Status::ok);
  const double e0 = model.gpu(0).dynamics.energy_j;
  model.step(5);
  const GpuDynamics& d = model.gpu(0).dynamics;
  const InjectedJob& a = *find_job(d, small);
  const InjectedJob& b = *find_job(d, large);
  ASSERT_FALSE(a.running);
  ASSERT_FALSE(b.running);
  EXPECT_NEAR(a.end_s - a.start_s, 2.0, 0.1);  // ~3 TB/s alone, half of it shared
  EXPECT_NEAR(b.end_s - b.start_s, 3.0, 0.1);
  // Same kind, same power: the small one's share is its GPU time, half of 2 s of 3 s.
  const double busy_energy = a.energy_j + b.energy_j;
  EXPECT_NEAR(a.energy_j / busy_energy, 1.0 / 3.0, 0.01);
  // Nothing lost: the jobs drew the GPU's energy while they ran (the rest is idle after).
  const double idle_w = d.power_w;  // idle again at the end
  EXPECT_NEAR(busy_energy + idle_w * (5 - 3.0), d.energy_j - e0, 0.02 * (d.energy_j - e0));
  // Samples every 0.25 s: the small job ran half of each period it shared.
  int full = 0;
  for (int k = 0; k < kJobSamples; ++k) {
    if (a.samples.end_s[k] > 0 && a.samples.end_s[k] <= 1.99) {
      EXPECT_NEAR(a.samples.sm[k], 0.5, 0.02);
      ++full;
    }
  }
  EXPECT_EQ(full, 7);
}

TEST(sim_job_test, a_gemm_draws_more_of_a_shared_gpus_energy_than_a_copy) {
  NodeModel model = idle_node();
  std::uint64_t gemm = 0, copy = 0;
  ASSERT_EQ(model.start_job(0, "gemm-bf16", 0, 4, 201, gemm), Status::ok);
  ASSERT_EQ(model.start_job(0, "mem-copy", 0, 4, 202, copy), Status::ok);
  model.step(5);
  const GpuDynamics& d = model.gpu(0).dynamics;
  const InjectedJob& g = *find_job(d, gemm);
  const InjectedJob& c = *find_job(d, copy);
  EXPECT_NEAR(g.busy_s, c.busy_s, 0.1);  // the same GPU time
  EXPECT_GT(g.energy_j, 1.1 * c.energy_j);
}

}  // namespace
}  // namespace gpuclk::sim
