// attribution::Attribution over scripted slow and fast samples: how a GPU's energy counter delta is
// split between its processes (SM samples, memory, equal parts, one alone, none), that the parts
// always add up to the delta, and what processes, owners and users accumulate.
#include "attribution/attribution.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace gpuclk::attribution {
namespace {

using namespace std::chrono_literals;
using telemetry::FastSample;
using telemetry::ProcessSample;
using telemetry::SlowSample;
using telemetry::TimePoint;

TimePoint at(double seconds) {
  return TimePoint(
      std::chrono::duration_cast<telemetry::Duration>(std::chrono::duration<double>(seconds)));
}

SlowSample slow(double t, double energy_j, std::vector<ProcessSample> processes,
                std::vector<gpu::ProcessUtilization> samples = {}) {
  SlowSample s;
  s.time = at(t);
  s.energy = units::Joules(energy_j);
  s.processes = std::move(processes);
  s.process_utilization = std::move(samples);
  return s;
}

ProcessSample process(unsigned pid, std::optional<double> memory = std::nullopt) {
  ProcessSample p;
  p.pid = pid;
  if (memory) p.memory = units::Bytes(*memory);
  return p;
}

gpu::ProcessUtilization sm(unsigned pid, double fraction) {
  return {pid, 0, units::Ratio(fraction), units::Ratio(0)};
}

// Ten fast samples over [t0, t1): this clock, utilization and reasons.
std::vector<FastSample> fast(double t0, double t1, double mhz, double busy, std::uint64_t reasons) {
  std::vector<FastSample> out;
  for (int k = 0; k < 10; ++k) {
    FastSample f;
    f.time = at(t0 + (t1 - t0) * k / 10);
    f.sm_clock = units::Megahertz(mhz);
    f.gpu_utilization = units::Ratio(busy);
    f.clock_reasons = gpu::ClockReasons(reasons);
    out.push_back(f);
  }
  return out;
}

// Owners as the service would find them: 10 and 11 in Slurm job 77 of alice, 12 in a pod of
// bob, anything else invisible (another PID namespace).
ProcessIdentity identify(unsigned pid) {
  if (pid == 10 || pid == 11)
    return {host::Owner{host::OwnerKind::slurm_job, "77", "alice"}, "python"};
  if (pid == 12) return {host::Owner{host::OwnerKind::kubernetes_pod, "3f2a", "bob"}, "trainer"};
  return {};
}

double booked(const GpuBooks& b) {
  double sum = b.idle_j + b.unknown_j;
  for (double j : b.split_j) sum += j;
  return sum;
}

const ProcessUse& find(const AttributionView& v, std::size_t gpu, unsigned pid) {
  for (const auto& p : v.processes) {
    if (p.gpu == gpu && p.pid == pid) return p;
  }
  throw std::runtime_error("no such process");
}

TEST(attribution_test, sm_samples_split_the_counter_delta_and_nothing_is_lost) {
  Attribution a({0, 1}, identify);
  const auto s0 = slow(0, 1000, {process(10), process(12)});
  // 3 s of samples: 10 ran 3 × 0.6, 12 ran 3 × 0.2: 75 % and 25 % of the 400 J.
  const auto s1 =
      slow(1, 1400, {process(10), process(12)},
           {sm(10, 0.6), sm(12, 0.2), sm(10, 0.6), sm(12, 0.2), sm(10, 0.6), sm(12, 0.2)});
  const auto f = fast(0, 1, 1500, 0.8, gpu::ClockReasons::sw_power_cap);
  a.add(0, s0, s1, f);
  const AttributionView v = a.view();
  EXPECT_NEAR(find(v, 0, 10).usage.energy_j, 300, 1e-9);
  EXPECT_NEAR(find(v, 0, 12).usage.energy_j, 100, 1e-9);
  EXPECT_EQ(find(v, 0, 10).split, Split::sm);
  EXPECT_NEAR(find(v, 0, 10).power_w, 300, 1e-9);  // 400 J in 1 s, 75 % of it
  EXPECT_NEAR(v.gpus[0].counted_j, 400, 1e-9);
  EXPECT_NEAR(booked(v.gpus[0]), v.gpus[0].counted_j, 1e-9);
  // Busy time is its share of the GPU's: 0.8 s × 75 %; context the whole second.
  EXPECT_NEAR(find(v, 0, 10).usage.busy_s, 0.6, 1e-9);
  EXPECT_NEAR(find(v, 0, 10).usage.context_s, 1.0, 1e-9);
  EXPECT_NEAR(*find(v, 0, 10).usage.mean_sm_mhz(), 1500, 1e-9);
  EXPECT_NEAR(find(v, 0, 12).usage.held_s[2], 1.0, 1e-9);  // sw_power_cap, bit 2, all along
  EXPECT_NEAR(find(v, 0, 12).usage.held_s[0], 0.0, 1e-9);
}

TEST(attribution_test, without_samples_memory_then_equal_parts_one_alone_takes_all) {
  Attribution a({0}, identify);
  // No utilization samples: by memory (3:1).
  a.add(0, slow(0, 0, {process(10, 3e9), process(11, 1e9)}),
        slow(2, 200, {process(10, 3e9), process(11, 1e9)}), {});
  // One memory unknown: equal parts.
  a.add(0, slow(2, 200, {process(10, 3e9), process(11)}),
        slow(4, 300, {process(10, 3e9), process(11)}), {});
  // 11 ended during the interval: listed at its start, it still shares it (equal parts: its
  // memory is unknown), and its context time counts half.
  a.add(0, slow(4, 300, {process(10, 3e9), process(11)}), slow(6, 500, {process(10, 3e9)}), {});
  // Nobody: idle. Processes not read: unknown.
  a.add(0, slow(6, 500, {}), slow(8, 600, {}), {});
  SlowSample unread = slow(10, 650, {});
  unread.processes.reset();
  a.add(0, slow(8, 600, {}), unread, {});
  const AttributionView v = a.view();
  const ProcessUse& p10 = find(v, 0, 10);
  const ProcessUse& p11 = find(v, 0, 11);
  EXPECT_NEAR(p10.usage.energy_j, 150 + 50 + 100, 1e-9);
  EXPECT_NEAR(p11.usage.energy_j, 50 + 50 + 100, 1e-9);
  EXPECT_FALSE(p11.running);
  EXPECT_NEAR(p11.usage.context_s, 2 + 2 + 1, 1e-9);  // the last interval at one end only
  const GpuBooks& b = v.gpus[0];
  EXPECT_NEAR(b.split_j[static_cast<int>(Split::memory)], 200, 1e-9);
  EXPECT_NEAR(b.split_j[static_cast<int>(Split::equal)], 100 + 200, 1e-9);
  EXPECT_NEAR(b.idle_j, 100, 1e-9);
  EXPECT_NEAR(b.unknown_j, 50, 1e-9);
  EXPECT_NEAR(booked(b), 650, 1e-9);
}

TEST(attribution_test, owners_and_users_add_up_their_processes_across_gpus) {
  Attribution a({0, 3}, identify);
  a.add(0, slow(0, 0, {process(10)}), slow(1, 500, {process(10)}), {});
  a.add(1, slow(0, 0, {process(11), process(99)}), slow(1, 600, {process(11), process(99)}), {});
  a.add(1, slow(1, 600, {process(12)}), slow(2, 900, {process(12)}), {});
  const AttributionView v = a.view();
  ASSERT_EQ(v.owners.size(), 3u);
  const auto owner = [&](std::string_view key) -> const OwnerUse& {
    for (const auto& o : v.owners) {
      if (host::owner_key(o.owner) == key) return o;
    }
    throw std::runtime_error("no such owner");
  };
  const OwnerUse& job = owner("slurm:77");
  EXPECT_NEAR(job.usage.energy_j, 500 + 300, 1e-9);  // 10 alone on GPU 0, 11 half of GPU 3
  EXPECT_NEAR(job.by_gpu.at(0).energy_j, 500, 1e-9);
  EXPECT_NEAR(job.by_gpu.at(3).energy_j, 300, 1e-9);  // GPU position 1 is NVML index 3
  EXPECT_EQ(job.pids, (std::vector<unsigned>{10, 11}));
  EXPECT_TRUE(job.running);  // 11 left GPU 3, but 10 is still on GPU 0
  EXPECT_FALSE(find(v, 1, 11).running);
  EXPECT_NEAR(owner("process:99").usage.energy_j, 300, 1e-9);  // invisible: its own owner
  EXPECT_NEAR(v.users.at("alice").energy_j, 800, 1e-9);
  EXPECT_NEAR(v.users.at("bob").energy_j, 300, 1e-9);
  EXPECT_NEAR(v.users.at("").energy_j, 300, 1e-9);
  EXPECT_EQ(find(v, 1, 12).name, "trainer");
}

TEST(attribution_test, ended_processes_and_owners_are_forgotten_after_their_time) {
  Attribution a({0}, identify);
  a.add(0, slow(0, 0, {process(10)}), slow(1, 100, {process(10)}), {});
  a.add(0, slow(1, 100, {}), slow(2, 150, {}), {});
  a.prune(at(2) + 5min);
  EXPECT_EQ(a.view().processes.size(), 1u);
  a.prune(at(2) + 11min);
  EXPECT_TRUE(a.view().processes.empty());
  EXPECT_EQ(a.view().owners.size(), 1u);  // kept for `stat --job` a day
  a.prune(at(2) + 25h);
  EXPECT_TRUE(a.view().owners.empty());
  EXPECT_NEAR(a.view().users.at("alice").energy_j, 100, 1e-9);  // user totals stay
}

}  // namespace
}  // namespace gpuclk::attribution
