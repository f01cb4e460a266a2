// gpuclk_sim_calibration [SCENARIO.toml]: runs the H100 calibration scenario through the model
// and prints the calibration table (sim vs docs/calibration.md) as markdown, for docs/simulator.md.
// gpuclk_sim_calibration --gemm-dtypes [SCENARIO.toml [RESULTS.json]]: the same for the GEMMs per
// data type and shape (h100-gemm-dtypes.toml against
// docs/results/raw/gemm_power_by_dtype_h100.json). Exit code 1 if any row is outside its tolerance,
// 2 on a bad argument or file.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string_view>

#include "calibration.h"
#include "scenario.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  namespace sim = gpuclk::sim;
  const bool gemm = argc > 1 && std::string_view(argv[1]) == "--gemm-dtypes";
  const int first = gemm ? 2 : 1;
  if (argc > first + (gemm ? 2 : 1) || (argc > first && argv[first][0] == '-')) {
    std::fprintf(stderr,
                 "usage: gpuclk_sim_calibration [SCENARIO.toml]\n"
                 "       gpuclk_sim_calibration --gemm-dtypes [SCENARIO.toml [RESULTS.json]]\n");
    return 2;
  }
  const fs::path scenario = argc > first
                                ? fs::path(argv[first])
                                : fs::path(GPUCLK_SIM_SCENARIOS) /
                                      (gemm ? "h100-gemm-dtypes.toml" : "h100-calibration.toml");
  const fs::path results = argc > first + 1
                               ? fs::path(argv[first + 1])
                               : fs::path(GPUCLK_RESULTS) / "raw" / "gemm_power_by_dtype_h100.json";
  try {
    const sim::Scenario s = sim::load_scenario(scenario, {scenario.parent_path()});
    const auto rows = gemm ? sim::gemm_dtype_table(s, sim::load_gemm_measurements(results))
                           : sim::h100_calibration_table(s);
    std::fputs(sim::format_calibration_table(rows).c_str(), stdout);
    for (const auto& r : rows) {
      if (!r.ok()) return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuclk_sim_calibration: %s\n", e.what());
    return 2;
  }
}
