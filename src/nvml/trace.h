// GPUCLK_NVML_TRACE=FILE: how many times each NVML entry point was called and how long the calls
// took, written to FILE when the library is closed. Where a command's time goes on a real
// driver (docs/results/cli_latency_h100.md): wall time per call, not CPU, since a driver call
// mostly waits for the kernel module and the GPU. Off unless the variable is set; process-wide.
#pragma once

#include <chrono>

namespace gpuclk::nvml {

class Api;

namespace trace {

// Wraps every entry point `api` resolved (its function pointers then point at timing
// trampolines) when GPUCLK_NVML_TRACE names a file; `opened` is the time dlopen and the
// symbol lookups took. Returns whether tracing is on.
bool install(Api& api, std::chrono::nanoseconds opened);
// Writes the table (entry point, calls, total ms, mean µs, max µs; by total time) to the file.
void write();

}  // namespace trace
}  // namespace gpuclk::nvml
