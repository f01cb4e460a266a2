#include <gtest/gtest.h>

#include <memory>

#include "control/restore.h"
#include "control_fake_gpu.h"

namespace gpuclk::control {
namespace {

using testing::FakeGpu;

class control_restore_test : public ::testing::Test {
 protected:
  void SetUp() override {
    for (unsigned i = 0; i < 2; ++i) gpus.push_back(std::make_unique<FakeGpu>(i, events));
    gpus[1]->power_mw = 650000;  // an original that is not the default
  }
  PersistJournal persist() {
    return [this](const Journal&) { ++saves; };
  }
  std::vector<GpuControl*> present() {
    std::vector<GpuControl*> out;
    for (auto& g : gpus) out.push_back(g.get());
    return out;
  }
  void change_everything() {
    Settings s;
    s.persistence_mode = false;
    s.application_clocks = ApplicationClocks{1593, 1500};
    s.locked_gpu_clocks =
        ClockLock::range(ClockBound::megahertz(1500), ClockBound::megahertz(1500));
    s.power_limit_mw = units::Milliwatts(500000);
    std::vector<GpuChange> changes;
    for (auto& g : gpus) changes.push_back({g.get(), s});
    ASSERT_EQ(apply_changes(changes, journal, persist(), {"set"}).exit, ExitCode::ok);
  }

  std::vector<std::string> events;
  std::vector<std::unique_ptr<FakeGpu>> gpus;
  Journal journal;
  int saves = 0;
};

TEST_F(control_restore_test, returns_the_exact_original_state) {
  change_everything();
  auto report = restore(present(), journal, persist(), {"restore"});
  EXPECT_EQ(report.exit, ExitCode::ok);
  for (auto& g : gpus) {
    EXPECT_TRUE(g->persistence);
    EXPECT_EQ(g->app, (ApplicationClocks{2619, 1980}));
    EXPECT_FALSE(g->gpu_lock.locked);
  }
  EXPECT_EQ(gpus[0]->power_mw, 700000u);
  EXPECT_EQ(gpus[1]->power_mw, 650000u);
  EXPECT_TRUE(journal.clean());
}

TEST_F(control_restore_test, waits_once_for_all_gpus_after_writing_them_all) {
  change_everything();
  RunOptions options{"restore"};
  int settles = 0;
  bool all_written_before_the_wait = false;
  options.settle = [&] {
    ++settles;
    // Persistence mode is each GPU's last write: every GPU is written when the wait starts.
    all_written_before_the_wait = gpus[0]->persistence && gpus[1]->persistence;
  };
  auto report = restore(present(), journal, persist(), options);
  EXPECT_EQ(report.exit, ExitCode::ok);
  EXPECT_EQ(settles, 1);
  EXPECT_TRUE(all_written_before_the_wait);
  EXPECT_TRUE(journal.clean());
}

TEST_F(control_restore_test, persistence_mode_is_restored_last) {
  change_everything();
  events.clear();
  restore(present(), journal, persist(), {"restore"});
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[3], "gpu0.set_persistence_mode");
  EXPECT_EQ(events[0], "gpu0.set_power_limit");
}

TEST_F(control_restore_test, is_idempotent) {
  change_everything();
  restore(present(), journal, persist(), {"restore"});
  events.clear();
  auto again = restore(present(), journal, persist(), {"restore"});
  EXPECT_EQ(again.exit, ExitCode::ok);
  EXPECT_TRUE(again.settings.empty());
  EXPECT_TRUE(events.empty());
}

TEST_F(control_restore_test, after_an_interrupted_change_undoes_what_was_pending) {
  // A crash after the journal was saved and one GPU written: the journal lists both GPUs with
  // pending settings and nothing applied.
  Settings s;
  s.locked_gpu_clocks = ClockLock::range(ClockBound::megahertz(1500), ClockBound::megahertz(1500));
  s.power_limit_mw = units::Milliwatts(500000);
  std::vector<GpuChange> changes;
  for (auto& g : gpus) changes.push_back({g.get(), s});
  Journal on_disk;
  RunOptions o{"set"};
  o.after_write = [](std::size_t n) {
    if (n == 2) throw std::runtime_error("killed");
  };
  EXPECT_THROW(apply_changes(
                   changes, journal, [&](const Journal& j) { on_disk = j; }, o),
               std::runtime_error);
  // (WriteSequence undid the writes on the way out; a real kill -9 would not, so redo them.)
  gpus[0]->gpu_lock = *s.locked_gpu_clocks;
  gpus[0]->power_mw = 500000;
  auto report = restore(present(), on_disk, persist(), {"restore"});
  EXPECT_EQ(report.exit, ExitCode::ok);
  EXPECT_FALSE(gpus[0]->gpu_lock.locked);
  EXPECT_EQ(gpus[0]->power_mw, 700000u);
  EXPECT_EQ(gpus[1]->power_mw, 650000u);
  EXPECT_TRUE(on_disk.clean());
}

TEST_F(control_restore_test, a_failure_keeps_what_is_left_and_exits_partial) {
  change_everything();
  gpus[1]->fail_on["set_power_limit"] = ExitCode::other;
  auto report = restore(present(), journal, persist(), {"restore"});
  EXPECT_EQ(report.exit, ExitCode::partial);
  EXPECT_NE(report.error.find("GPU 0: restored"), std::string::npos);
  EXPECT_NE(report.error.find("GPU 1: not restored"), std::string::npos);
  ASSERT_EQ(journal.gpus.size(), 1u);
  EXPECT_EQ(journal.gpus[0].touched, std::set<Setting>{Setting::power_limit});
  gpus[1]->fail_on.clear();
  EXPECT_EQ(restore(present(), journal, persist(), {"restore"}).exit, ExitCode::ok);
  EXPECT_EQ(gpus[1]->power_mw, 650000u);
}

TEST_F(control_restore_test, a_missing_gpu_stays_journaled) {
  change_everything();
  auto only_first = std::vector<GpuControl*>{gpus[0].get()};
  auto report = restore(only_first, journal, persist(), {"restore"});
  EXPECT_EQ(report.exit, ExitCode::partial);
  ASSERT_EQ(journal.gpus.size(), 1u);
  EXPECT_EQ(journal.gpus[0].uuid, gpus[1]->facts().uuid);
}

TEST_F(control_restore_test, permission_denied_everywhere_keeps_exit_4) {
  change_everything();
  for (auto& g : gpus) g->fail_on["set_power_limit"] = ExitCode::no_permission;
  auto report = restore(present(), journal, persist(), {"restore"});
  EXPECT_EQ(report.exit, ExitCode::no_permission);
}

}  // namespace
}  // namespace gpuclk::control
