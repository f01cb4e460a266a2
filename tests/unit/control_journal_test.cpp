#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "control/journal.h"
#include "control/journal_store.h"
#include "control_fake_gpu.h"

namespace gpuclk::control {
namespace {

namespace fs = std::filesystem;

Journal sample() {
  Journal j;
  j.boot_id = "boot";
  Settings before;
  before.persistence_mode = true;
  before.application_clocks = ApplicationClocks{2619, 1980};
  before.power_limit_mw = units::Milliwatts(700000);
  auto& e = j.entry_for(testing::h100_facts(1), before, "2024-01-01T00:00:00Z");
  e.touched = {Setting::locked_gpu_clocks, Setting::power_limit};
  e.applied.locked_gpu_clocks = ClockLock::range(ClockBound::tdp(), ClockBound::unlimited());
  e.pending.power_limit_mw = units::Milliwatts(612500);
  j.add_history(
      {"2024-01-01T00:00:00Z", 42, "set", 1, e.uuid, "power_limit", "700 W", "612.500 W", "ok"});
  return j;
}

fs::path temp_dir() {
  auto dir = fs::temp_directory_path() / ("gpuclk-journal-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

TEST(control_journal_test, json_round_trip_keeps_everything) {
  const auto j = sample();
  const auto back = journal_from_json(to_json(j));
  ASSERT_EQ(back.gpus.size(), 1u);
  const auto& e = back.gpus[0];
  EXPECT_EQ(e.uuid, j.gpus[0].uuid);
  EXPECT_EQ(e.original.application_clocks, j.gpus[0].original.application_clocks);
  EXPECT_EQ(e.original.locked_gpu_clocks, ClockLock::none());
  EXPECT_TRUE(e.assumed.count(Setting::locked_gpu_clocks));
  EXPECT_EQ(e.touched, j.gpus[0].touched);
  EXPECT_EQ(e.applied.locked_gpu_clocks, j.gpus[0].applied.locked_gpu_clocks);
  EXPECT_EQ(e.pending.power_limit_mw->count(), 612500u);
  EXPECT_EQ(back.history.size(), 1u);
  EXPECT_EQ(back.boot_id, "boot");
}

TEST(control_journal_test, rejects_other_files) {
  EXPECT_THROW(journal_from_json("{"), std::runtime_error);
  EXPECT_THROW(journal_from_json(R"({"format":"x"})"), std::runtime_error);
  EXPECT_THROW(journal_from_json(R"({"format":"gpuclk-journal","version":99,"gpus":[]})"),
               std::runtime_error);
}

TEST(control_journal_test, history_is_bounded) {
  Journal j;
  for (std::size_t i = 0; i < Journal::kHistoryLimit + 10; ++i) j.add_history({std::to_string(i)});
  EXPECT_EQ(j.history.size(), Journal::kHistoryLimit);
  EXPECT_EQ(j.history.front().time, "10");
}

TEST(control_journal_test, store_saves_atomically_and_loads) {
  const auto dir = temp_dir();
  JournalStore store(dir);
  EXPECT_TRUE(store.load().clean());  // no file yet
  auto lock = store.lock();
  store.save(sample());
  EXPECT_TRUE(fs::exists(store.file()));
  // No temporary file is left behind.
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir))
    files += e.path().filename().string().rfind(".journal", 0) == 0;
  EXPECT_EQ(files, 0u);
  EXPECT_EQ(store.load().gpus.size(), 1u);
  fs::remove_all(dir);
}

TEST(control_journal_test, corrupt_journal_is_an_error_naming_the_file) {
  const auto dir = temp_dir();
  fs::create_directories(dir);
  std::ofstream(dir / "journal.json") << "garbage";
  JournalStore store(dir);
  try {
    store.load();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("journal.json"), std::string::npos);
  }
  EXPECT_FALSE(store.try_load());
  fs::remove_all(dir);
}

TEST(control_journal_test, lock_is_exclusive_between_processes) {
  const auto dir = temp_dir();
  JournalStore store(dir);
  auto lock = store.lock();
  // A child process must wait: with the lock held, its non-blocking attempt calls `waiting`.
  pid_t child = ::fork();
  if (child == 0) {
    bool waited = false;
    auto l = JournalStore(dir).lock([&](long holder) {
      waited = holder == static_cast<long>(::getppid());
      _exit(waited ? 0 : 1);  // blocked on us, naming us: that is the assertion
    });
    _exit(2);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  fs::remove_all(dir);
}

TEST(control_journal_test, unwritable_state_dir_is_exit_4) {
  if (::geteuid() == 0) GTEST_SKIP() << "root can write anywhere";
  JournalStore store("/proc/gpuclk-cannot-exist");
  try {
    store.lock();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::no_permission);
  }
}

}  // namespace
}  // namespace gpuclk::control
