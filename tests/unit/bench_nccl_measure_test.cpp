// bench nccl with the sampler alongside (bench/nccl_measure.h): a scripted run (two operations,
// then the pairs) and scripted GPUs; each operation's telemetry is its own window's. Real time
// (about a second): the sampler runs its own threads.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "bench/nccl_measure.h"
#include "telemetry_fakes.h"
#include "util/error.h"

namespace gpuclk::bench::nccl {
namespace {

using namespace std::chrono_literals;
using telemetry::testing::ScriptedSource;
using Steady = std::chrono::steady_clock;

// A GPU whose SM clock is `first_mhz` until `switch_at`, then `then_mhz`, and whose NVLinks
// each send 100 GB/s while the test runs.
// The runner's thread sets the switch while the sampler's reads it: an atomic count of the
// clock's ticks.
using Switch = std::shared_ptr<std::atomic<telemetry::Duration::rep>>;
Switch never() {
  return std::make_shared<std::atomic<telemetry::Duration::rep>>(
      telemetry::Duration::max().count());
}

std::unique_ptr<telemetry::GpuSource> gpu_source(double first_mhz, double then_mhz,
                                                 Switch switch_at) {
  auto source = std::make_unique<ScriptedSource>();
  source->fast = [=](telemetry::TimePoint t, telemetry::FastSample& s) {
    s.sm_clock =
        units::Megahertz(t.time_since_epoch().count() < switch_at->load() ? first_mhz : then_mhz);
    s.power = units::Watts(300);
  };
  source->slow = [](telemetry::TimePoint t, telemetry::SlowSample& s) {
    const double seconds = std::chrono::duration<double>(t.time_since_epoch()).count();
    for (unsigned link = 0; link < 4; ++link) {
      telemetry::NvLinkSample l;
      l.link = link;
      l.active = true;
      l.tx_bytes = std::uint64_t(seconds * 100e9);
      l.rx_bytes = std::uint64_t(seconds * 50e9);
      s.nvlinks.push_back(l);
    }
  };
  return source;
}

TEST(bench_nccl_measure_test, each_operation_gets_the_telemetry_of_its_own_run) {
  ScaledClock clock;
  const Switch switch_at = never();
  std::vector<std::unique_ptr<telemetry::GpuSource>> sources;
  sources.push_back(gpu_source(1980, 1410, switch_at));
  sources.push_back(gpu_source(1755, 1755, switch_at));
  RunOptions options;
  options.operations = {Operation::all_reduce, Operation::all_gather};
  options.sizes = {1 << 20};
  const Runner runner = [&](const RunOptions& o) {
    RunResult r;
    r.ordinals = {0, 1};
    for (Operation op : o.operations) {
      OperationResult result;
      result.operation = op;
      result.start = Steady::now();
      std::this_thread::sleep_for(1200ms);
      result.end = Steady::now();
      r.operations.push_back(result);
      // From now on GPU 0's clock drops: the second operation ran at 1410 MHz.
      switch_at->store(clock.now().time_since_epoch().count());
    }
    PairResult p;
    p.start = Steady::now();
    std::this_thread::sleep_for(300ms);
    p.end = Steady::now();
    r.pairs = {p};
    return r;
  };
  const Measured m = measure(runner, options, std::move(sources), {4, 6}, clock, 20ms);
  ASSERT_EQ(m.run.operations.size(), 2u);
  ASSERT_EQ(m.telemetry.size(), 2u);
  ASSERT_EQ(m.telemetry[0].size(), 2u);
  EXPECT_EQ(m.telemetry[0][0].gpu, 4u);  // NVML indexes, in rank order
  EXPECT_EQ(m.telemetry[0][1].gpu, 6u);
  EXPECT_DOUBLE_EQ(*m.telemetry[0][0].sm_clock_mhz, 1980);
  EXPECT_DOUBLE_EQ(*m.telemetry[1][0].sm_clock_mhz, 1410);
  EXPECT_DOUBLE_EQ(*m.telemetry[1][1].sm_clock_mhz, 1755);
  // Four links at 100 GB/s each, read every 500 ms.
  ASSERT_TRUE(m.telemetry[0][0].nvlink_tx_bytes_per_second);
  EXPECT_NEAR(*m.telemetry[0][0].nvlink_tx_bytes_per_second, 400e9, 4e9);
  EXPECT_NEAR(*m.telemetry[0][0].nvlink_rx_bytes_per_second, 200e9, 2e9);
  EXPECT_EQ(m.pairs_telemetry.size(), 2u);
}

TEST(bench_nccl_measure_test, an_operation_shorter_than_the_interval_gets_the_nearest_samples) {
  ScaledClock clock;
  std::vector<std::unique_ptr<telemetry::GpuSource>> sources;
  sources.push_back(gpu_source(1755, 1755, never()));
  RunOptions options;
  options.operations = {Operation::all_reduce};
  options.sizes = {8};
  const Runner runner = [](const RunOptions&) {
    std::this_thread::sleep_for(300ms);  // samples before it
    RunResult r;
    OperationResult o;
    o.start = Steady::now();
    std::this_thread::sleep_for(5ms);  // far shorter than the 100 ms interval
    o.end = Steady::now();
    r.operations = {o};
    std::this_thread::sleep_for(300ms);
    return r;
  };
  const Measured m = measure(runner, options, std::move(sources), {0}, clock, 100ms);
  ASSERT_EQ(m.telemetry.size(), 1u);
  ASSERT_TRUE(m.telemetry[0][0].sm_clock_mhz);
  EXPECT_DOUBLE_EQ(*m.telemetry[0][0].sm_clock_mhz, 1755);
}

TEST(bench_nccl_measure_test, a_failed_run_stops_the_sampler_and_passes_the_error_on) {
  ScaledClock clock;
  std::vector<std::unique_ptr<telemetry::GpuSource>> sources;
  sources.push_back(gpu_source(1980, 1980, never()));
  const Runner runner = [](const RunOptions&) -> RunResult {
    throw Error(ExitCode::other, "ncclCommInitAll: unhandled cuda error (NCCL error 1)");
  };
  EXPECT_THROW(measure(runner, RunOptions{}, std::move(sources), {0}, clock, 20ms), Error);
}

TEST(bench_nccl_measure_test, nvlink_counters_are_sampled) {
  EXPECT_TRUE(sampled_fields().has(telemetry::Field::nvlink));
  EXPECT_TRUE(sampled_fields().has(telemetry::Field::sm_clock));
  EXPECT_TRUE(sampled_fields().has(telemetry::Field::energy));
}

}  // namespace
}  // namespace gpuclk::bench::nccl
