// Occupancy of the kernels read from a binary or a ptxas log: which SASS runs on the target
// architecture, and how many of its blocks an SM holds at a given (or the best) block size.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "occupancy/arch_limits.h"
#include "occupancy/calculator.h"
#include "occupancy/resource_usage.h"

namespace gpuclk::occupancy {

struct KernelReportOptions {
  const ArchLimits* target = nullptr;  // nullptr: each SASS for its own architecture
  // A shell-style pattern (util/glob.h) searched in the mangled and the demangled name.
  std::optional<std::string> name_filter;
  std::optional<int> threads_per_block;          // nullopt: the best size (sweep)
  std::optional<int> launch_bounds_max_threads;  // caps the sweep; not in the tools' reports
  std::int64_t dynamic_shared_bytes = 0;         // per block, not in the binary
  std::optional<int> carveout_percent;
};

struct KernelReport {
  KernelResources resources;              // as the tool reported them
  std::string display_name;               // demangled
  const ArchLimits* sass_arch = nullptr;  // the SASS's architecture
  const ArchLimits* run_arch = nullptr;   // where it runs: the target, else sass_arch
  KernelConfig kernel;                    // what occupancy was computed for
  bool best_block_size = false;           // threads came from the sweep
  Occupancy occupancy;
};

struct KernelReports {
  std::vector<KernelReport> kernels;
  std::vector<std::string> notes;  // kernels left out and why ("no SASS that runs on sm_90")
};

// Throws gpuclk::Error(bad_argument) when a dump names no architecture (a lone cubin) and no
// target was given, or when the filter leaves no kernel.
KernelReports report_kernels(const std::vector<KernelResources>& resources,
                             const KernelReportOptions& options);

}  // namespace gpuclk::occupancy
