// Changes to a kernel or its launch that raise its occupancy (or make an invalid launch
// possible), each with the occupancy it leads to: "≤ 40 registers per thread → 75 %",
// "block 256 instead of 192", "shared memory ≤ 56 KiB per block → 4 blocks".
#pragma once

#include <string>
#include <vector>

#include "occupancy/arch_limits.h"
#include "occupancy/calculator.h"

namespace gpuclk::occupancy {

enum class AdviceKind {
  fewer_registers,     // registers per thread (__launch_bounds__ min blocks, -maxrregcount)
  less_shared_memory,  // shared memory per block
  larger_carveout,     // drop a carveout preference that leaves too little shared memory
  block_size,          // another block size
  whole_warps,         // a multiple of 32 threads: same occupancy, no idle lanes
};
std::string_view to_string(AdviceKind kind);  // "fewer_registers", …

struct Advice {
  AdviceKind kind;
  KernelConfig changed;  // the kernel with the change applied
  Occupancy result;      // its occupancy
  std::string text;      // one line, e.g. "≤ 40 registers per thread → 75 % (6 blocks per SM)"
};

// Advice for `kernel`, whose occupancy is `current` (from calculate()). For each resource, the
// smallest change that raises occupancy and, if further changes of it raise it more, the one
// that raises it most. Empty when occupancy is 100 % or nothing the kernel controls helps.
std::vector<Advice> advise(const ArchLimits& arch, const KernelConfig& kernel,
                           const Occupancy& current);

// "48 KiB" for whole KiB, else "49280 bytes".
std::string format_bytes(std::int64_t bytes);
// "75 %", "93.8 %".
std::string format_percent(double ratio);

}  // namespace gpuclk::occupancy
