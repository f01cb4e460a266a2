// gpuclk-serve's work: the node service (serve::Node) on the node `gpuclk serve` resolved,
// until a stop signal.
#pragma once

#include "serve/daemon_args.h"

namespace gpuclk::daemon {

// Checks serve's options (Error, exit 2, naming the option), opens NVML, builds and starts the
// Node, waits for a signal that ends a process (util/stop_signal.h), then stops it in order.
// Returns the exit code.
int run_serve(const serve::DaemonArgs& args);

}  // namespace gpuclk::daemon
