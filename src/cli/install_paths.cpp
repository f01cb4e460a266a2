#include "cli/install_paths.h"

#include <fmt/format.h>

#include <system_error>

#include "cli/build_config.h"  // generated: the install layout
#include "cli/context.h"
#include "util/error.h"

namespace gpuclk::cli::install {
namespace {

namespace fs = std::filesystem;

bool present(const fs::path& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

fs::path exe_dir() { return Context::executable_dir(); }

// The installed place, relative to the executable's folder (bindir), normalised so messages
// name /usr/lib/x86_64-linux-gnu/gpuclk rather than /usr/bin/../lib/x86_64-linux-gnu/gpuclk.
fs::path installed(const char* relative_to_bindir) {
  return (exe_dir() / relative_to_bindir).lexically_normal();
}

}  // namespace

fs::path sim_library() {
  auto beside = exe_dir() / "libnvml-sim.so";
  if (present(beside)) return beside;
  return installed(GPUCLK_SIM_LIBDIR_FROM_BINDIR) / "libnvml-sim.so";
}

fs::path scenarios_dir() {
  auto beside = exe_dir() / "scenarios";
  if (present(beside)) return beside;
  return installed(GPUCLK_SCENARIOS_FROM_BINDIR);
}

bool simulator_installed() { return present(sim_library()); }

void simulator_missing() {
  throw Error(ExitCode::nvml_not_found,
              fmt::format("the simulator is not installed: no libnvml-sim.so beside {} nor at {}",
                          exe_dir().string(), sim_library().string()),
              "install the gpuclk-sim package (or `cmake --install BUILD --component gpuclk-sim`), "
              "or name an NVML library with --nvml-lib");
}

}  // namespace gpuclk::cli::install
