// The progress line of `gpuclk bench` on a terminal: one line on stderr, redrawn in place, with
// each GPU's phase, repetition and latest rate. Thread-safe: run_concurrent() reports from one
// thread per GPU.
#pragma once

#include <chrono>
#include <iosfwd>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "bench/workload.h"

namespace gpuclk::bench {

struct DeviceProgress {
  int device = -1;  // CUDA ordinal
  enum class State { preparing, warming_up, measuring, checking } state = State::preparing;
  int repetition = 0, repetitions = 0;  // repetitions done, planned
  double rate = 0;                      // latest repetition, in the workload's unit
};

// "gemm bf16 8192x8192x8192 | cuda0 12/30 681.20 TFLOP/s | cuda1 warm-up" (no line control).
std::string progress_text(const std::string& label, RateUnit unit,
                          std::span<const DeviceProgress> devices);

// Show a progress line only on a terminal and for runs expected to last at least `min_seconds`.
bool should_show_progress(bool stderr_is_terminal, double expected_seconds, double min_seconds = 3);

class ProgressLine {
 public:
  // Draws on `out` when `enabled`; otherwise every call does nothing.
  ProgressLine(std::ostream& out, bool enabled) : out_(out), enabled_(enabled) {}
  ~ProgressLine() { clear(); }

  void begin(const WorkloadSpec& spec, std::span<const int> devices);
  void phase(int device, Phase phase);
  void repetition(const Progress& progress);
  void clear();  // erases the line (before the report is printed)

 private:
  void draw(bool force);  // with mutex_ held; at most every 100 ms unless forced
  DeviceProgress* find(int device);

  std::ostream& out_;
  bool enabled_;
  std::mutex mutex_;
  std::string label_;
  RateUnit unit_ = RateUnit::flop_per_second;
  std::vector<DeviceProgress> devices_;
  std::chrono::steady_clock::time_point last_draw_{};
  bool drawn_ = false;
};

// One line redrawn in place on `out` (bench p2p's and bench nccl's progress on a terminal):
// show() replaces the last line, clear() erases it; when not `enabled` nothing is drawn.
class StatusLine {
 public:
  StatusLine(std::ostream& out, bool enabled) : out_(out), enabled_(enabled) {}
  ~StatusLine() { clear(); }
  StatusLine(const StatusLine&) = delete;
  StatusLine& operator=(const StatusLine&) = delete;

  bool enabled() const { return enabled_; }
  void show(const std::string& line);
  void clear();

 private:
  std::ostream& out_;
  bool enabled_;
  std::size_t width_ = 0;
};

}  // namespace gpuclk::bench
