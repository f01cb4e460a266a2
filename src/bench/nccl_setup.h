// What `gpuclk bench nccl` settles before it runs: the plan from its options (operations, sizes,
// iterations, the pair size, the sampling interval; exit 2 for a bad one), the selected GPUs'
// links, the sizes fitted to their free memory, and the NCCL_* variables NCCL will read.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bench/nccl.h"
#include "bench/nccl_plan.h"
#include "bench/nccl_report.h"
#include "gpu/device.h"
#include "telemetry/sample.h"

namespace gpuclk::bench::nccl {

// The options as the command line gives them (the defaults are bench nccl's).
struct PlanOptions {
  std::string ops = "all";
  std::string sizes = "8:8G";
  int factor = 2;
  int iterations = 20, warmup = 1;
  bool no_check = false;
  std::string pair_size = "1G";
  std::string interval = "100ms";
};

struct Plan {
  RunOptions run;
  bool sizes_given = false;  // --sizes on the command line: too big is an error, not clamped
  telemetry::Duration interval{};
};

// Throws gpuclk::Error (exit 2) naming the bad option and what is valid.
Plan make_plan(const PlanOptions& o, bool sizes_given);

// The NCCL_* variables NCCL will read in this process.
std::map<std::string, std::string> nccl_environment();

// The devices' links (bench p2p's facts) and the direct NVLinks between each pair;
// `ordinals[i]` is devices[i]'s CUDA ordinal.
Topology topology(const std::vector<gpu::Device*>& devices, const std::vector<int>& ordinals);

// Fits the sizes to the GPUs' free memory (`memory[i]` is NVML GPU `gpus[i]`'s): explicit --sizes
// that do not fit are an error (exit 2); the default range is cut at the largest size that fits,
// and the note saying so is returned (empty when all fit). The pair size is cut too.
std::string fit_memory(Plan& p, const std::vector<DeviceMemory>& memory,
                       const std::vector<unsigned>& gpus);

}  // namespace gpuclk::bench::nccl
