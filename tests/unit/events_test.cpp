// gpu::EventWatcher over libnvml-sim.so: the faults node's GPU 2 falls off the bus at 60 s (one
// Xid 79), its GPU 3 counts corrected ECC errors (single-bit ECC events). Time is frozen and
// advanced by hand, so every wait is deterministic.
#include "gpu/events.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "gpu/device.h"
#include "nvml/api.h"
#include "sim_abi_fixture.h"

namespace gpuclk::sim::testing {
namespace {

using gpu::EventKind;

// Every GPU of the child's simulated node watched, time frozen (ScaledClock 0).
struct SimWatcher {
  std::unique_ptr<nvml::Api> api =
      nvml::Api::open(std::string(GPUCLK_BINARY_DIR) + "/libnvml-sim.so");
  gpu::DeviceSet set{*api};
  ScaledClock clock{0};
  gpu::EventWatcher watcher{set.all(), clock};
};

bool has(const gpu::Reading<std::vector<EventKind>>& r, EventKind k) {
  return r && std::find(r->begin(), r->end(), k) != r->end();
}

TEST_F(sim_abi_test, event_watcher_returns_the_xid_of_a_lost_gpu_once) {
  expect_passed(in_child(frozen("faults", "55"), [](Nvml& n) {
    SimWatcher sim;
    gpu::EventWatcher& watcher = sim.watcher;
    ASSERT_TRUE(watcher.any_watched());
    for (unsigned g = 0; g < 4; ++g) {
      EXPECT_TRUE(has(watcher.watched(g), EventKind::xid)) << "GPU " << g;
      EXPECT_TRUE(has(watcher.watched(g), EventKind::double_bit_ecc)) << "GPU " << g;
    }
    // Before the loss: nothing.
    EXPECT_FALSE(watcher.wait(std::chrono::milliseconds(20)));
    ASSERT_EQ(n.advance(6), 0);  // t = 61 s: GPU 2 is lost
    std::optional<gpu::GpuEvent> xid;
    for (int i = 0; i < 4 && !xid; ++i) {
      auto e = watcher.wait(std::chrono::milliseconds(20));
      if (e && e->kind == EventKind::xid) xid = e;
    }
    ASSERT_TRUE(xid);
    EXPECT_EQ(xid->gpu, 2u);
    EXPECT_EQ(xid->xid, 79u);
    // Raised once: later waits see no other Xid.
    for (int i = 0; i < 3; ++i) {
      auto e = watcher.wait(std::chrono::milliseconds(20));
      EXPECT_FALSE(e && e->kind == EventKind::xid);
    }
    EXPECT_EQ(watcher.last_error(), 0);
  }));
}

// The wait blocks for its timeout, as the driver's does, and an event that another thread's
// call raises ends it at once: a wait of 30 s returns with the Xid soon after the other thread
// moved the node past the loss (generous bounds: the machine may be loaded).
TEST_F(sim_abi_test, event_wait_blocks_until_its_timeout_or_an_event_another_thread_raises) {
  expect_passed(in_child(frozen("faults", "55"), [](Nvml& n) {
    SimWatcher sim;
    gpu::EventWatcher& watcher = sim.watcher;
    ASSERT_TRUE(watcher.any_watched());
    using Steady = std::chrono::steady_clock;
    auto t0 = Steady::now();
    EXPECT_FALSE(watcher.wait(std::chrono::milliseconds(300)));
    EXPECT_GE(Steady::now() - t0, std::chrono::milliseconds(300));

    t0 = Steady::now();
    auto waited = std::async(std::launch::async, [&] {
      std::optional<gpu::GpuEvent> e;
      while (!e || e->kind != EventKind::xid) {
        e = watcher.wait(std::chrono::seconds(30));
        if (Steady::now() - t0 > std::chrono::seconds(30)) break;
      }
      return e;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_EQ(n.advance(6), 0);  // t = 61 s: GPU 2 is lost
    const auto xid = waited.get();
    ASSERT_TRUE(xid);
    EXPECT_EQ(xid->kind, EventKind::xid);
    EXPECT_EQ(xid->gpu, 2u);
    EXPECT_LT(Steady::now() - t0, std::chrono::seconds(15));
  }));
}

TEST_F(sim_abi_test, event_watcher_reports_corrected_ecc_errors_as_single_bit_events) {
  expect_passed(in_child(frozen("faults", "5"), [](Nvml& n) {
    SimWatcher sim;
    gpu::EventWatcher& watcher = sim.watcher;
    // 120 corrected errors an hour on GPU 3: one or two in 50 s (GPU 2 is lost only at 60 s).
    ASSERT_EQ(n.advance(50), 0);
    std::optional<gpu::GpuEvent> sbe;
    for (int i = 0; i < 4 && !sbe; ++i) sbe = watcher.wait(std::chrono::milliseconds(20));
    ASSERT_TRUE(sbe);
    EXPECT_EQ(sbe->gpu, 3u);
    EXPECT_EQ(sbe->kind, EventKind::single_bit_ecc);
    EXPECT_EQ(sbe->xid, 0u);
    EXPECT_EQ(gpu::to_string(sbe->kind), "single_bit_ecc");
  }));
}

TEST_F(sim_abi_test, event_watcher_leaves_out_a_gpu_lost_before_it_registers) {
  expect_passed(in_child(frozen("faults", "70"), [](Nvml&) {
    SimWatcher sim;
    gpu::EventWatcher& watcher = sim.watcher;
    EXPECT_TRUE(watcher.any_watched());
    EXPECT_TRUE(has(watcher.watched(0), EventKind::xid));
    const auto lost = watcher.watched(2);
    EXPECT_EQ(lost.status(), gpu::ReadStatus::error);
    EXPECT_EQ(lost.error_code(), NVML_ERROR_GPU_IS_LOST);
    EXPECT_FALSE(watcher.wait(std::chrono::milliseconds(20)));
  }));
}

TEST(event_watcher_test, with_nothing_to_watch_it_says_not_supported_and_only_times_out) {
  ScaledClock clock;
  gpu::EventWatcher watcher({}, clock);
  EXPECT_FALSE(watcher.any_watched());
  EXPECT_EQ(watcher.watched(0).status(), gpu::ReadStatus::not_supported);
  EXPECT_FALSE(watcher.wait(std::chrono::milliseconds(5)));
  EXPECT_EQ(watcher.last_error(), 0);
}

}  // namespace
}  // namespace gpuclk::sim::testing
