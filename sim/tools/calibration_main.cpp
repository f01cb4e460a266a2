// gpuclk_sim_calibration [SCENARIO.toml]: runs the H100 calibration scenario through the model
// and prints the calibration table (sim vs docs/calibration.md) as markdown, for docs/simulator.md.
// Exit code 1 if any row is outside its tolerance.
#include <cstdio>
#include <exception>
#include <filesystem>

#include "calibration.h"
#include "scenario.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  const fs::path scenario =
      argc > 1 ? fs::path(argv[1]) : fs::path(GPUCLK_SIM_SCENARIOS) / "h100-calibration.toml";
  try {
    const gpuclk::sim::Scenario s = gpuclk::sim::load_scenario(scenario, {scenario.parent_path()});
    const auto rows = gpuclk::sim::h100_calibration_table(s);
    std::fputs(gpuclk::sim::format_calibration_table(rows).c_str(), stdout);
    for (const auto& r : rows) {
      if (!r.ok()) return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuclk_sim_calibration: %s\n", e.what());
    return 2;
  }
}
