// Checks a Request against one GPU before anything is written: clocks against the GPU's
// supported lists, power against its constraints, each setting against what the GPU and driver
// support. The result is the exact target to write, or the problems, each naming the value and
// the nearest valid ones.
#pragma once

#include <string>
#include <vector>

#include "control/gpu_control.h"
#include "control/request.h"
#include "util/error.h"

namespace gpuclk::control {

struct Problem {
  unsigned gpu = 0;
  ExitCode code = ExitCode::bad_argument;  // bad_argument, or not_supported for this GPU
  std::string message;
  std::string hint;
};

struct GpuTarget {
  Settings target;                 // only the settings the request names
  std::vector<std::string> notes;  // "snapped 1234 → 1230 MHz", "nothing to reset on Hopper"
  std::vector<Problem> problems;   // empty when the target may be written
};

// `snap`: round clocks to the nearest supported value and clamp power into range (with a note)
// instead of refusing.
GpuTarget validate(const Request& request, const GpuFacts& facts, bool snap);

// One Error for every problem (all GPUs): the exit code of the first, every message in the text.
[[noreturn]] void throw_problems(const std::vector<Problem>& problems);

// One GPU of a change: what is asked of it and what it is.
struct GpuCheck {
  Request request;
  GpuFacts facts;
};

// Every GPU's targets, once all of them passed.
struct CheckedGpus {
  std::vector<Settings> targets;   // one per GPU, in order (empty: nothing to write there)
  std::vector<std::string> notes;  // "GPU 1: graphics clock … snapped to …", GPU by GPU
};

// Checks every GPU (validate()) before anything is written, then fails once for all of them
// (throw_problems: every GPU's problems in one Error), so nothing is written unless all can be.
CheckedGpus validate_all(const std::vector<GpuCheck>& gpus, bool snap);

// Supported values below and above `value` in `sorted_values` (either may be missing).
std::string nearest_text(const std::vector<unsigned>& values, unsigned value);

}  // namespace gpuclk::control
