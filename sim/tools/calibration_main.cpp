// gpuclk_sim_calibration [SCENARIO.toml]: runs the H100 calibration scenario through the model
// and prints the calibration table (sim vs docs/calibration.md) as markdown, for docs/simulator.md.
// gpuclk_sim_calibration --gemm-dtypes [SCENARIO.toml [RESULTS.json]]: the same for the GEMMs per
// data type and shape (h100-gemm-dtypes.toml against
// docs/results/raw/gemm_power_by_dtype_h100.json).
// gpuclk_sim_calibration --power-by-data [SCENARIO.toml [RESULTS.json]]: perf/power_by_data.py's
// cases (data kinds, GEMM shapes; h100-power-by-data.toml against power_by_data_h100.json).
// gpuclk_sim_calibration --mixed [SCENARIO.toml [RESULTS.json]]: perf/power_by_data.py --mixed's
// held-out cases (h200-power-mixed.toml against power_mixed_h200.json).
// Exit code 1 if any row is outside its tolerance, 2 on a bad argument or file.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string_view>
#include <vector>

#include "calibration.h"
#include "scenario.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  namespace sim = gpuclk::sim;
  enum class Table { calibration, gemm_dtypes, power_by_data, mixed };
  Table table = Table::calibration;
  int first = 1;
  if (argc > 1 && std::string_view(argv[1]) == "--gemm-dtypes") {
    table = Table::gemm_dtypes;
    first = 2;
  } else if (argc > 1 && std::string_view(argv[1]) == "--power-by-data") {
    table = Table::power_by_data;
    first = 2;
  } else if (argc > 1 && std::string_view(argv[1]) == "--mixed") {
    table = Table::mixed;
    first = 2;
  }
  const int max_args = first + (table == Table::calibration ? 1 : 2);
  if (argc > max_args || (argc > first && argv[first][0] == '-')) {
    std::fprintf(stderr,
                 "usage: gpuclk_sim_calibration [SCENARIO.toml]\n"
                 "       gpuclk_sim_calibration --gemm-dtypes [SCENARIO.toml [RESULTS.json]]\n"
                 "       gpuclk_sim_calibration --power-by-data [SCENARIO.toml [RESULTS.json]]\n"
                 "       gpuclk_sim_calibration --mixed [SCENARIO.toml [RESULTS.json]]\n");
    return 2;
  }
  const char* default_scenario = table == Table::gemm_dtypes     ? "h100-gemm-dtypes.toml"
                                 : table == Table::power_by_data ? "h100-power-by-data.toml"
                                 : table == Table::mixed         ? "h200-power-mixed.toml"
                                                                 : "h100-calibration.toml";
  const char* default_results = table == Table::power_by_data ? "power_by_data_h100.json"
                                : table == Table::mixed       ? "power_mixed_h200.json"
                                                              : "gemm_power_by_dtype_h100.json";
  const fs::path scenario =
      argc > first ? fs::path(argv[first]) : fs::path(GPUCLK_SIM_SCENARIOS) / default_scenario;
  const fs::path results = argc > first + 1 ? fs::path(argv[first + 1])
                                            : fs::path(GPUCLK_RESULTS) / "raw" / default_results;
  try {
    const sim::Scenario s = sim::load_scenario(scenario, {scenario.parent_path()});
    std::vector<sim::CalibrationRow> rows;
    switch (table) {
      case Table::calibration:
        rows = sim::h100_calibration_table(s);
        break;
      case Table::gemm_dtypes:
        rows = sim::gemm_dtype_table(s, sim::load_gemm_measurements(results));
        break;
      case Table::power_by_data:
        rows = sim::power_by_data_table(s, sim::load_power_by_data(results));
        break;
      case Table::mixed:
        rows = sim::mixed_phase_table(s, sim::load_power_mixed(results));
        break;
    }
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
