// The notes and verdicts of a bench nccl report (nccl_report.h): what the figures mean on this
// node (one GPU, all-to-all without ncclAlltoAll), then causes of a shortfall — wrong results,
// NCCL settings in the environment, NVLinks down, peer access off, PCIe below its maximum, GPUs
// on different NUMA nodes, throttled clocks — then operations short of their peak with no cause
// found, the latency-bound, and the worst send/recv pair. Pure.
#pragma once

#include <string>
#include <vector>

#include "bench/nccl_report.h"

namespace gpuclk::bench::nccl {

std::vector<std::string> report_notes(const NcclReport& report);
std::vector<std::string> report_verdicts(const NcclReport& report);

// "all-reduce reaches 41% of its peak at 8 GiB (196.10 of 478.12 GB/s) …": one operation's
// shortfall line, or "" when it is not short (or cannot be judged).
std::string shortfall_verdict(const OperationReport& operation);

}  // namespace gpuclk::bench::nccl
