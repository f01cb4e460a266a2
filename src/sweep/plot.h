// Plots of a sweep with gnuplot (Debian gnuplot-nox): throughput, power, energy per unit of work
// and energy-delay product against the clock lock or power limit, one series per GPU, the best
// points marked (with several GPUs, each GPU's own on its curve) and named with their settings in
// the key below each panel, never by text inside the plot. Writes the data (sweep.dat,
// best.dat) and the script (sweep.gp) into a directory, then runs gnuplot on it: sweep.png
// (pngcairo) and sweep.svg, 1200×900 each.
#pragma once

#include <filesystem>
#include <vector>

#include "sweep/report.h"

namespace gpuclk::sweep {

inline constexpr int kPlotWidth = 1200, kPlotHeight = 900;

// The files written. Throws Error: not_supported (3) when gnuplot is not installed (the data
// and script are written first), other (255) when gnuplot fails, naming its exit status.
std::vector<std::filesystem::path> write_plots(const Report& report,
                                               const std::filesystem::path& dir);

}  // namespace gpuclk::sweep
