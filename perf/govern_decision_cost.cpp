// What one governor decision costs in CPU time, per GPU: Governor::step (classify, policy,
// hysteresis) for each policy over a workload that changes class, plus building the signals from
// a sampler snapshot. The budget (docs/govern.md) is 50 µs per GPU at a 20 ms interval; the
// peer measured in the same run is the sampler's own cost of building a snapshot of the same GPU
// (what every consumer of the sampler pays). Run by perf/govern_decision_cost.sh.
//   gpuclk-govern-decision-cost [DECISIONS]
#include <fmt/format.h>
#include <time.h>

#include <chrono>
#include <cstdlib>
#include <vector>

#include "govern/governor.h"
#include "govern/sampler_signals.h"

namespace {

using namespace gpuclk;
using namespace gpuclk::govern;

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// A snapshot as the sampler fills it: fast fields and a GPM slow sample.
telemetry::GpuSnapshot snapshot(int i) {
  telemetry::GpuSnapshot g;
  telemetry::FastSample f;
  f.time = telemetry::TimePoint(std::chrono::milliseconds(20 * i));
  f.sm_clock = units::Megahertz(1980 - (i % 7) * 15);
  f.memory_clock = units::Megahertz(2619);
  f.power = units::Watts(300 + i % 200);
  f.gpu_utilization = units::Ratio(i % 5 == 0 ? 0 : 1);
  f.clock_reasons = gpu::ClockReasons(i % 11 == 0 ? gpu::ClockReasons::sw_power_cap : 0);
  g.fast = f;
  telemetry::SlowSample s;
  s.time = f.time;
  telemetry::GpmActivity a;
  const int kind = (i / 13) % 3;  // memory-bound, compute-bound, idle stretches
  a.sm = units::Ratio(kind == 2 ? 0 : 0.97);
  a.tensor = units::Ratio(kind == 1 ? 0.89 : 0);
  a.dram = units::Ratio(kind == 0 ? 0.89 : kind == 1 ? 0.24 : 0);
  a.fp32 = a.fp64 = a.fp16 = units::Ratio(0);
  s.gpm = a;
  g.slow = s;
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 200000;
  std::vector<telemetry::GpuSnapshot> snaps;
  for (int i = 0; i < 1000; ++i) snaps.push_back(snapshot(i));
  const auto ladder =
      ClockLadder::uniform(Megahertz(345), Megahertz(1980), Megahertz(15), Megahertz(1590));
  const double budget_us = 50;

  // Peer: copying a snapshot of one GPU (what Sampler::snapshot() does per GPU, without locks).
  double sink = 0;
  double t0 = cpu_seconds();
  for (int i = 0; i < n; ++i) {
    const telemetry::GpuSnapshot copy = snaps[static_cast<std::size_t>(i) % snaps.size()];
    sink += copy.fast->sm_clock->value();
  }
  const double peer_us = (cpu_seconds() - t0) / n * 1e6;
  fmt::print("{:<10} {:>14} {:>12} {:>14}\n", "policy", "us/decision", "x budget", "x snapshot");
  fmt::print("{:<10} {:>14.3f} {:>12.4f} {:>14.2f}\n", "snapshot", peer_us, peer_us / budget_us,
             1.0);
  for (const auto& name : policy_names()) {
    PolicyOptions options;
    Governor governor(make_policy(name, options), ladder);
    const auto started = telemetry::TimePoint{};
    t0 = cpu_seconds();
    for (int i = 0; i < n; ++i) {
      const auto& snap = snaps[static_cast<std::size_t>(i) % snaps.size()];
      const auto step =
          governor.step(signals_from(snap, started, std::chrono::milliseconds(60), true));
      sink += step.write ? 1 : 0;
    }
    const double us = (cpu_seconds() - t0) / n * 1e6;
    fmt::print("{:<10} {:>14.3f} {:>12.4f} {:>14.2f}\n", name, us, us / budget_us, us / peer_us);
  }
  fmt::print(
      "# {} decisions per policy; budget {} us per GPU per 20 ms interval (checksum {:.0f})\n", n,
      budget_us, sink);
  return 0;
}
