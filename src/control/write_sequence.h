// WriteSequence: the GPU writes of one run, in order, each with the value that undoes it.
// RAII for a multi-GPU change: destroyed while still armed (an exception between two writes),
// it undoes them in reverse order; commit() keeps them, rollback() undoes them and reports.
#pragma once

#include <string>
#include <vector>

#include "control/gpu_control.h"

namespace gpuclk::control {

class WriteSequence {
 public:
  struct Write {
    std::size_t change = 0;  // position of the GPU in the run
    GpuControl* gpu = nullptr;
    Setting setting = Setting::persistence_mode;
    Settings undo;  // holds `setting` as it was before the write
  };
  struct Undone {
    Write write;
    bool ok = false;
    std::string error;  // why the undo failed
  };

  WriteSequence() = default;
  WriteSequence(const WriteSequence&) = delete;
  WriteSequence& operator=(const WriteSequence&) = delete;
  ~WriteSequence();

  void record(const Write& write) { writes_.push_back(write); }
  const std::vector<Write>& writes() const { return writes_; }

  // Undoes every recorded write, newest first, going on past failures. Disarms.
  std::vector<Undone> rollback();
  // Keeps the writes. Disarms.
  void commit() { armed_ = false; }

 private:
  std::vector<Write> writes_;
  bool armed_ = true;
};

}  // namespace gpuclk::control
