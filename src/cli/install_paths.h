// Where gpuclk finds what is not in its binary: the simulator (libnvml-sim.so) and its scenarios.
// In a build tree they lie beside the executable (build/release/libnvml-sim.so, scenarios/); once
// installed (cmake --install, the Debian packages) they are where cmake/Install.cmake put them:
// ${libdir}/gpuclk (lib/x86_64-linux-gnu/gpuclk) and ${datadir}/gpuclk/scenarios (the gpuclk-sim
// component). The installed
// places are found relative to the executable, so a DESTDIR staging root or a moved prefix works
// as the real one does. gpuclk-serve is beside gpuclk in both layouts (serve_exec.cpp).
#pragma once

#include <filesystem>

namespace gpuclk::cli::install {

// libnvml-sim.so: beside the executable, else in the installed library folder. When neither
// exists, the installed place (for the error message: simulator_missing).
std::filesystem::path sim_library();

// The simulator's scenarios folder: beside the executable, else the installed data folder (also
// when neither exists: a name is then unknown, and the error lists none).
std::filesystem::path scenarios_dir();

// True when sim_library() exists.
bool simulator_installed();

// The error (exit 12) for --sim on an installation without the simulator, naming where it looked
// and how to get it.
[[noreturn]] void simulator_missing();

}  // namespace gpuclk::cli::install
