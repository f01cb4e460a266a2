// The progress line's text and when it is shown.
#include <gtest/gtest.h>

#include <sstream>

#include "bench/progress.h"

namespace gpuclk::bench {
namespace {

TEST(bench_progress_test, text_shows_each_gpu_phase_and_latest_rate) {
  const std::vector<DeviceProgress> devices = {
      {0, DeviceProgress::State::measuring, 12, 30, 681.2e12},
      {1, DeviceProgress::State::warming_up, 0, 0, 0}};
  EXPECT_EQ(progress_text("gemm bf16 8192x8192x8192", RateUnit::flop_per_second, devices),
            "gemm bf16 8192x8192x8192 | cuda0 12/30 681.20 TFLOP/s | cuda1 warm-up");
  const std::vector<DeviceProgress> copy = {{2, DeviceProgress::State::measuring, 3, 40, 3.0e12}};
  EXPECT_EQ(progress_text("mem copy", RateUnit::byte_per_second, copy),
            "mem copy | cuda2 3/40 3000.0 GB/s");
}

TEST(bench_progress_test, shown_only_on_a_terminal_for_runs_of_a_few_seconds) {
  EXPECT_TRUE(should_show_progress(true, 4));
  EXPECT_FALSE(should_show_progress(true, 1));
  EXPECT_FALSE(should_show_progress(false, 60));
}

TEST(bench_progress_test, a_disabled_line_writes_nothing) {
  std::ostringstream out;
  {
    ProgressLine line(out, false);
    const int devices[] = {0};
    line.begin(FmaSpec{}, devices);
    line.repetition(Progress{0, 0, 10, 0.1, 60e12, 0.1});
  }
  EXPECT_EQ(out.str(), "");
}

TEST(bench_progress_test, an_enabled_line_redraws_in_place_and_is_erased) {
  std::ostringstream out;
  {
    ProgressLine line(out, true);
    const int devices[] = {0};
    line.begin(FmaSpec{}, devices);
    line.phase(0, Phase::warmed_up);
    line.clear();
  }
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("\r\x1b[Kfma fp32 2048 iterations | cuda0 preparing", 0), 0u) << text;
  EXPECT_NE(text.find("\r\x1b[Kfma fp32 2048 iterations | cuda0 measuring"), std::string::npos)
      << text;
  EXPECT_EQ(text.substr(text.size() - 4), "\r\x1b[K");
}

// bench p2p's and bench nccl's line: each show() overwrites the last (padded over a longer one),
// clear() erases it; disabled, nothing is written.
TEST(bench_progress_test, a_status_line_overwrites_its_last_text_and_erases_it) {
  std::ostringstream out;
  {
    StatusLine line(out, true);
    line.show("bench nccl | all-reduce | 8 B (1/31)");
    line.show("bench nccl | pair");
  }
  EXPECT_EQ(out.str(),
            "\rbench nccl | all-reduce | 8 B (1/31)"
            "\rbench nccl | pair" +
                std::string(19, ' ') + "\r" + std::string(17, ' ') + "\r");
  std::ostringstream quiet;
  {
    StatusLine line(quiet, false);
    line.show("anything");
  }
  EXPECT_EQ(quiet.str(), "");
}

}  // namespace
}  // namespace gpuclk::bench
