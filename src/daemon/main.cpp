// gpuclk-serve: the node service's own program, run by `gpuclk serve` (src/cli/serve_exec.cpp),
// which parses the command line and resolves the node; they reach this program as JSON in
// GPUCLK_SERVE_ARGS (serve/daemon_args.h). It links the service and the layers below it, no
// command code (scripts/ci/check-rules.sh checks its symbols).
#include <iostream>

#include "daemon/serve_run.h"
#include "util/error.h"

namespace {

int report(const gpuclk::Error& e) {
  std::cout.flush();
  std::cerr << "gpuclk: error: " << e.what() << '\n';
  if (!e.hint().empty()) std::cerr << "gpuclk: " << e.hint() << '\n';
  return static_cast<int>(e.code());
}

}  // namespace

int main() {
  try {
    const auto args = gpuclk::serve::daemon_args_from_environment();
    return gpuclk::daemon::run_serve(args);
  } catch (const gpuclk::Error& e) {
    return report(e);
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "gpuclk: internal error: " << e.what() << '\n';
    return static_cast<int>(gpuclk::ExitCode::other);
  }
}
