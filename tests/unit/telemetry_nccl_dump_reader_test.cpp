// telemetry::nccl::DumpReader (src/telemetry/nccl_dump_reader.h) over a temporary root holding a
// recorded NCCL Inspector file (tests/data/nccl_inspector/) written in pieces: each poll reads
// what the file gained, a line cut in two is read once whole, files of job directories one level
// down are found, lines that are not records are counted, and a file whose process is gone is
// forgotten once idle and never read twice.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "telemetry/nccl_dump_reader.h"

namespace gpuclk::telemetry::nccl {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string recorded(const std::string& file) {
  std::ifstream in(std::string(GPUCLK_SOURCE_DIR) + "/tests/data/nccl_inspector/" + file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void append(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::app) << text;
}

struct DumpReaderTest : ::testing::Test {
  fs::path root = fs::temp_directory_path() / ("gpuclk-dump-" + std::to_string(::getpid()));
  void SetUp() override { fs::create_directories(root); }
  void TearDown() override { fs::remove_all(root); }
  static bool alive(unsigned) { return true; }
};

std::size_t count(const std::vector<DumpBatch>& batches) {
  std::size_t n = 0;
  for (const auto& b : batches) n += b.records.size();
  return n;
}

TEST_F(DumpReaderTest, reads_what_files_gain_and_a_cut_line_once) {
  const std::string text = recorded("late_rank_4gpu/vm-pid4373.log");  // 20 lines
  const auto cut = text.find('\n', text.size() / 2) + 40;              // inside a line
  const auto file = root / "4242" / "vm-pid4373.log";
  DumpReader reader(root.string());
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(reader.poll(t0, alive).empty());
  append(file, text.substr(0, cut));
  const auto first = reader.poll(t0, alive);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].directory, (root / "4242").string());
  const auto before = first[0].records.size();
  EXPECT_GT(before, 5u);
  EXPECT_EQ(first[0].records.front().pid, 4373u);
  EXPECT_TRUE(reader.poll(t0, alive).empty());  // nothing new: the cut line waits
  append(file, text.substr(cut));
  EXPECT_EQ(before + count(reader.poll(t0, alive)), 20u);
  EXPECT_EQ(reader.errors(), 0u);
  EXPECT_EQ(reader.records(), 20u);
  EXPECT_EQ(reader.files(), 1u);
}

TEST_F(DumpReaderTest, counts_bad_lines_and_ignores_other_files) {
  append(root / "vm-pid7.log", "not json\n");
  append(root / "notes.txt", "{}\n");
  append(root / "a" / "b" / "vm-pid8.log", recorded("late_rank_4gpu/vm-pid4373.log"));  // too deep
  DumpReader reader(root.string());
  EXPECT_TRUE(reader.poll(std::chrono::steady_clock::now(), alive).empty());
  EXPECT_EQ(reader.errors(), 1u);
  ASSERT_EQ(reader.last_problems().size(), 1u);
  EXPECT_NE(reader.last_problems()[0].find("vm-pid7.log:1: "), std::string::npos);
  EXPECT_EQ(reader.files(), 1u);
}

TEST_F(DumpReaderTest, follows_no_link_and_waits_on_no_fifo) {
  append(root / "secret.json", recorded("late_rank_4gpu/vm-pid4373.log"));
  fs::create_directories(root / "5");
  fs::create_symlink(root / "secret.json", root / "5" / "vm-pid9.log");
  ASSERT_EQ(::mkfifo((root / "5" / "vm-pid10.log").c_str(), 0600), 0);
  DumpReader reader(root.string());
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(reader.poll(t0, alive).empty());
  EXPECT_EQ(reader.errors(), 1u);  // the link (the FIFO is not listed: not a regular file)
  EXPECT_NE(reader.last_problems().at(0).find("vm-pid9.log: a symbolic link, not read"),
            std::string::npos);
  EXPECT_TRUE(reader.poll(t0, alive).empty());
  EXPECT_EQ(reader.errors(), 1u);  // said once
}

TEST_F(DumpReaderTest, forgets_idle_files_of_gone_processes_without_reading_them_again) {
  const auto file = root / "9" / "vm-pid4373.log";
  append(file, recorded("late_rank_4gpu/vm-pid4373.log"));
  DumpReaderOptions o;
  o.forget_after = 60s;
  DumpReader reader(root.string(), o);
  const auto t0 = std::chrono::steady_clock::now();
  const auto gone = [](unsigned) { return false; };
  EXPECT_EQ(count(reader.poll(t0, gone)), 20u);
  reader.poll(t0 + 30s, gone);
  EXPECT_EQ(reader.directories().size(), 1u);  // idle, but not long enough
  reader.poll(t0 + 61s, alive);
  EXPECT_EQ(reader.directories().size(), 1u);  // idle long enough, but its process runs
  EXPECT_TRUE(reader.poll(t0 + 62s, gone).empty());
  EXPECT_TRUE(reader.directories().empty());
  EXPECT_TRUE(reader.poll(t0 + 63s, gone).empty());  // not read again
  EXPECT_EQ(reader.files(), 0u);
  // A forgotten file that grows again is followed from where it was.
  append(file, recorded("late_rank_4gpu/vm-pid4373.log").substr(0, 10));
  append(file, recorded("late_rank_4gpu/vm-pid4373.log").substr(10));
  EXPECT_EQ(count(reader.poll(t0 + 64s, gone)), 20u);
}

}  // namespace
}  // namespace gpuclk::telemetry::nccl
