#include <gtest/gtest.h>

#include "control/consistency.h"
#include "control_fake_gpu.h"

namespace gpuclk::control {
namespace {

GpuSettingsView view(unsigned i, std::uint32_t power_mw, std::string model = "H100") {
  GpuSettingsView v{i, "GPU-" + std::to_string(i), std::move(model), {}};
  v.settings.power_limit_mw = units::Milliwatts(power_mw);
  v.settings.locked_gpu_clocks = ClockLock::none();
  return v;
}

TEST(control_consistency_test, flags_the_gpu_that_differs_from_the_majority) {
  auto d = settings_that_differ({view(0, 700000), view(1, 700000), view(2, 600000)});
  ASSERT_EQ(d.size(), 1u);
  ASSERT_EQ(d["GPU-2"].size(), 1u);
  EXPECT_EQ(d["GPU-2"][0].setting, Setting::power_limit);
  EXPECT_EQ(d["GPU-2"][0].value, "600 W");
  EXPECT_EQ(d["GPU-2"][0].majority, "700 W");
}

TEST(control_consistency_test, compares_only_gpus_of_one_model) {
  EXPECT_TRUE(settings_that_differ({view(0, 700000, "H100"), view(1, 300000, "L4")}).empty());
}

TEST(control_consistency_test, journal_locks_fill_in_what_nvml_cannot_read) {
  Journal j;
  auto& e = j.entry_for(testing::h100_facts(0), Settings{}, "t");
  e.applied.locked_gpu_clocks =
      ClockLock::range(ClockBound::megahertz(1500), ClockBound::megahertz(1500));
  Settings s;
  add_journal_locks(s, j, e.uuid);
  EXPECT_EQ(describe(s, Setting::locked_gpu_clocks), "1500 MHz");
  Settings other;
  add_journal_locks(other, j, "GPU-never-changed");
  EXPECT_EQ(describe(other, Setting::locked_gpu_clocks), "unlocked");
  e.pending.locked_memory_clocks = ClockLock::none();
  Settings pending;
  add_journal_locks(pending, j, e.uuid);
  EXPECT_FALSE(pending.has(Setting::locked_memory_clocks));
}

TEST(control_consistency_test, applied_summary_marks_interrupted_writes) {
  JournalEntry e;
  e.applied.power_limit_mw = units::Milliwatts(600000);
  e.pending.locked_gpu_clocks = ClockLock::range(ClockBound::tdp(), ClockBound::tdp());
  EXPECT_EQ(applied_summary(e), "GPU lock tdp (interrupted), power 600 W");
}

}  // namespace
}  // namespace gpuclk::control
