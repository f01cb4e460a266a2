#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "control/transaction.h"
#include "control_fake_gpu.h"

namespace gpuclk::control {
namespace {

using testing::FakeGpu;

class control_transaction_test : public ::testing::Test {
 protected:
  void make_gpus(unsigned n) {
    for (unsigned i = 0; i < n; ++i) gpus.push_back(std::make_unique<FakeGpu>(i, events));
  }
  PersistJournal persist() {
    return [this](const Journal& j) {
      events.push_back("journal saved");
      saved.push_back(j);
    };
  }
  std::vector<GpuChange> all(const Settings& target) {
    std::vector<GpuChange> out;
    for (auto& g : gpus) out.push_back({g.get(), target});
    return out;
  }
  ChangeReport run(const Settings& target, RunOptions options = {"set"}) {
    return apply_changes(all(target), journal, persist(), options);
  }
  static Settings lock_and_power(unsigned mhz, std::uint32_t mw) {
    Settings s;
    s.locked_gpu_clocks = ClockLock::range(ClockBound::megahertz(mhz), ClockBound::megahertz(mhz));
    s.power_limit_mw = units::Milliwatts(mw);
    return s;
  }
  std::size_t position(const std::string& event) const {
    return static_cast<std::size_t>(std::find(events.begin(), events.end(), event) -
                                    events.begin());
  }

  std::vector<std::string> events;
  std::vector<std::unique_ptr<FakeGpu>> gpus;
  Journal journal;
  std::vector<Journal> saved;
};

TEST_F(control_transaction_test, journal_is_saved_before_the_first_write) {
  make_gpus(2);
  auto report = run(lock_and_power(1500, 600000));
  EXPECT_EQ(report.exit, ExitCode::ok);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front(), "journal saved");
  // The first save already lists both GPUs, their originals and every pending setting.
  ASSERT_GE(saved.size(), 2u);
  const auto& first = saved.front();
  ASSERT_EQ(first.gpus.size(), 2u);
  EXPECT_EQ(first.gpus[0].original.power_limit_mw->count(), 700000u);
  EXPECT_FALSE(first.gpus[0].original.locked_gpu_clocks->locked);
  EXPECT_TRUE(first.gpus[0].assumed.count(Setting::locked_gpu_clocks));
  EXPECT_TRUE(first.gpus[1].pending.has(Setting::power_limit));
  EXPECT_EQ(first.gpus[1].touched.size(), 2u);
}

TEST_F(control_transaction_test, success_records_applied_and_reads_back) {
  make_gpus(2);
  auto report = run(lock_and_power(1500, 600000));
  EXPECT_EQ(report.count(Outcome::changed), 4u);
  EXPECT_EQ(gpus[1]->power_mw, 600000u);
  const auto* e = journal.find(gpus[1]->facts().uuid);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->pending.empty());
  EXPECT_EQ(e->applied.power_limit_mw->count(), 600000u);
  // Power reads back through NVML; a lock has no getter, so the live clock is shown.
  auto power_row = std::find_if(report.settings.begin(), report.settings.end(),
                                [](const auto& s) { return s.setting == Setting::power_limit; });
  EXPECT_EQ(power_row->read_back, "600 W");
  EXPECT_EQ(report.settings[0].read_back, "SM 1500 MHz now");
  EXPECT_FALSE(journal.history.empty());
}

TEST_F(control_transaction_test, second_identical_run_writes_nothing) {
  make_gpus(2);
  run(lock_and_power(1500, 600000));
  events.clear();
  auto report = run(lock_and_power(1500, 600000));
  EXPECT_EQ(report.count(Outcome::changed), 0u);
  EXPECT_EQ(report.count(Outcome::unchanged), 4u);
  EXPECT_TRUE(events.empty());  // not even a journal save
}

TEST_F(control_transaction_test, dry_run_writes_nothing) {
  make_gpus(2);
  RunOptions o{"set"};
  o.dry_run = true;
  auto report = run(lock_and_power(1500, 600000), o);
  EXPECT_EQ(report.count(Outcome::would_change), 4u);
  EXPECT_TRUE(events.empty());
  EXPECT_TRUE(journal.clean());
}

TEST_F(control_transaction_test, failure_on_gpu_k_rolls_back_the_others) {
  make_gpus(4);
  gpus[2]->fail_on["lock_gpu_clocks"] = ExitCode::other;
  auto report = run(lock_and_power(1500, 600000));
  EXPECT_EQ(report.exit, ExitCode::other);
  EXPECT_NE(report.error.find("GPU 2"), std::string::npos);
  EXPECT_NE(report.error.find("rolled back"), std::string::npos);
  for (auto& g : gpus) {
    EXPECT_EQ(g->power_mw, 700000u) << g->facts().index;
    EXPECT_FALSE(g->gpu_lock.locked) << g->facts().index;
  }
  // Undone newest first.
  EXPECT_LT(position("gpu1.set_power_limit"), position("gpu2.lock_gpu_clocks FAILED"));
  EXPECT_EQ(report.count(Outcome::rolled_back), 4u);
  EXPECT_EQ(report.count(Outcome::failed), 1u);
  EXPECT_EQ(report.count(Outcome::not_attempted), 3u);
  // Every GPU is as before, so the journal is as before: nothing to restore.
  EXPECT_TRUE(journal.clean());
}

TEST_F(control_transaction_test, failed_rollback_reports_each_gpu_and_exits_partial) {
  make_gpus(4);
  gpus[2]->fail_on["lock_gpu_clocks"] = ExitCode::other;
  gpus[1]->fail_on["reset_gpu_locked_clocks"] = ExitCode::other;
  auto report = run(lock_and_power(1500, 600000));
  EXPECT_EQ(report.exit, ExitCode::partial);
  EXPECT_NE(report.error.find("GPU 0: as before (rolled back)"), std::string::npos);
  EXPECT_NE(report.error.find("GPU 1: locked GPU clocks still 1500 MHz"), std::string::npos);
  EXPECT_NE(report.error.find("GPU 2: unchanged (its write failed)"), std::string::npos);
  EXPECT_NE(report.error.find("GPU 3: unchanged (not attempted)"), std::string::npos);
  EXPECT_TRUE(gpus[1]->gpu_lock.locked);
  EXPECT_EQ(gpus[1]->power_mw, 700000u);  // its power limit was undone
  // The stuck GPU stays journaled with the lock in force, so restore can retry it.
  const auto* e = journal.find(gpus[1]->facts().uuid);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->touched.count(Setting::locked_gpu_clocks));
  EXPECT_TRUE(e->applied.locked_gpu_clocks->locked);
  EXPECT_EQ(journal.find(gpus[0]->facts().uuid), nullptr);
  // Its power limit was rolled back: not listed as applied (issue 32: `journal` said "applied").
  EXPECT_FALSE(e->touched.count(Setting::power_limit));
  EXPECT_FALSE(e->applied.has(Setting::power_limit));
}

TEST_F(control_transaction_test, permission_error_keeps_its_exit_code_and_changes_nothing) {
  make_gpus(2);
  gpus[0]->fail_on["set_power_limit"] = ExitCode::no_permission;
  Settings s;
  s.power_limit_mw = units::Milliwatts(600000);
  auto report = run(s);
  EXPECT_EQ(report.exit, ExitCode::no_permission);
  EXPECT_NE(report.error.find("nothing was changed"), std::string::npos);
  EXPECT_TRUE(journal.clean());
}

TEST_F(control_transaction_test, a_signal_between_writes_rolls_back) {
  make_gpus(2);
  RunOptions o{"set"};
  std::size_t writes = 0;
  o.after_write = [&](std::size_t n) { writes = n; };
  o.interrupted = [&] { return writes >= 1; };
  auto report = run(lock_and_power(1500, 600000), o);
  EXPECT_NE(report.exit, ExitCode::ok);
  EXPECT_NE(report.error.find("interrupted"), std::string::npos);
  EXPECT_FALSE(gpus[0]->gpu_lock.locked);
}

TEST_F(control_transaction_test, journal_save_failure_stops_before_any_write) {
  make_gpus(1);
  auto failing = [](const Journal&) { throw Error(ExitCode::no_permission, "cannot write"); };
  EXPECT_THROW(apply_changes(all(lock_and_power(1500, 600000)), journal, failing, {"set"}), Error);
  EXPECT_TRUE(events.empty());
}

TEST_F(control_transaction_test, original_is_kept_from_the_first_change) {
  make_gpus(1);
  Settings s;
  s.power_limit_mw = units::Milliwatts(600000);
  run(s);
  s.power_limit_mw = units::Milliwatts(500000);
  run(s);
  EXPECT_EQ(journal.gpus[0].original.power_limit_mw->count(), 700000u);
  EXPECT_EQ(journal.gpus[0].applied.power_limit_mw->count(), 500000u);
}

TEST_F(control_transaction_test, default_application_clocks_use_the_reset_call) {
  make_gpus(1);
  gpus[0]->app = {2619, 1500};
  Settings s;
  s.application_clocks = ApplicationClocks{2619, 1980};
  run(s);
  EXPECT_NE(std::find(events.begin(), events.end(), "gpu0.reset_application_clocks"), events.end());
}

}  // namespace
}  // namespace gpuclk::control
