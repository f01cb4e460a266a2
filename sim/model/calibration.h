// Runs a scenario's workload through the model and measures each phase the way
// bench_power.json (docs/calibration.md) measured the real card; compares with those measurements.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "scenario.h"

namespace gpuclk::sim {

struct PhaseMeasurement {
  std::string name;
  std::size_t phase_index = 0;
  double start_s = 0;
  double duration_s = 0;
  double average_power_w = 0;  // energy / duration
  double median_sm_mhz = 0;
  double min_sm_mhz = 0;
  double max_sm_mhz = 0;
  double flops_per_s = 0;
  double dram_bytes_per_s = 0;
  double power_capped_fraction = 0;  // of the phase's ticks with the SW power cap reason
  double die_start_c = 0;
  double die_after_6s_c = 0;  // as far into the phase as bench_power.json ran
  double die_end_c = 0;
  double max_power_w = 0;     // highest instant power of any tick
  double memory_power_w = 0;  // NVML's memory scope, energy / duration
  double mean_sm_mhz = 0;
  double flops = 0;  // FLOPs done in the phase
};

// Steps GPU `gpu` of `scenario` from power-on to `until_s` and measures every phase it ran
// (a phase that repeats is measured per occurrence, in order).
std::vector<PhaseMeasurement> measure_phases(const Scenario& scenario, std::size_t gpu,
                                             double until_s);

// One row of the calibration table: what the H100 did, what the model does, within tolerance?
struct CalibrationRow {
  std::string workload;
  std::string quantity;  // "power W", "SM clock MHz", "rate TFLOP/s", …
  double measured = 0;
  double simulated = 0;
  double tolerance = 0;  // absolute, in the quantity's unit
  bool ok() const;
};

// The table for the h100-calibration scenario (its phases by name: idle, gemm_fp32, gemm_tf32,
// gemm_bf16, copy_1GiB, gap). Throws std::runtime_error if a phase is missing.
std::vector<CalibrationRow> h100_calibration_table(const Scenario& h100_calibration);

// One GEMM of docs/results/raw/gemm_power_by_dtype_h100.json (perf/gemm_power_by_dtype.py on
// the card): a data type at a shape, what it achieved under the card's power cap.
struct GemmMeasurement {
  std::string dtype;  // fp16, bf16, tf32, fp32, fp8
  std::string shape;  // square-8192, square-4096, skinny-k512
  long long m = 0, n = 0, k = 0;
  double rate_tflops = 0;
  double power_w = 0;  // energy counter difference / window
  double median_sm_mhz = 0;
  double power_capped_fraction = 0;
  double temperature_c = 0;  // at the end of the window
};

// The rows of that JSON file that ran (a row with "error", a data type torch did not offer, is
// skipped). Throws std::runtime_error naming the file and the field on anything malformed.
std::vector<GemmMeasurement> load_gemm_measurements(const std::filesystem::path& json);

// Rate, median SM clock and power of each measured GEMM against the scenario's phase named
// "<dtype>_<shape>" (h100-gemm-dtypes.toml), each within 5 %. Throws std::runtime_error if a
// phase is missing.
std::vector<CalibrationRow> gemm_dtype_table(const Scenario& scenario,
                                             const std::vector<GemmMeasurement>& measured);

// One case of docs/results/raw/power_by_data_h100.json (perf/power_by_data.py on the card):
// a kernel on one kind of input, what the card did over its 4 s window.
struct PowerByDataCase {
  std::string name;   // "copy 1 GiB (dst.copy_(src))", "gemm bf16 8192^3", …
  std::string input;  // zeros, constant, pattern, normal, bits; "-" for idle
  std::string kind;   // idle, copy, elementwise, reduction, gemm
  double rate = 0;    // FLOP/s or bytes/s; 0 for idle
  double sm_mhz = 0;
  double power_w = 0;
  double memory_power_w = -1;  // NVML's memory scope, average; < 0: not read
  bool held_out = false;       // kept out of sim/tools/fit_power.py's fit
};

// The cases of that file, in the order they ran; held_out from fit_power.py's list. Throws
// std::runtime_error naming the file and the field on anything malformed.
std::vector<PowerByDataCase> load_power_by_data(const std::filesystem::path& json);

// Rate, median SM clock and power of each case against the phase "caseNN" (NN its position) of
// h100-power-by-data.toml, each within 5 %; the memory scope's power is listed, not checked.
std::vector<CalibrationRow> power_by_data_table(const Scenario& scenario,
                                                const std::vector<PowerByDataCase>& cases);

// One case of docs/results/raw/power_mixed_h200.json (perf/power_by_data.py --mixed): phases
// alternating in 1 s cycles, the card's means over its 8 s window after 2 s of warm-up.
struct MixedCase {
  std::string name;
  std::string kind;    // idle, mixed
  double rate = 0;     // FLOP/s over the window, gaps included; 0 for idle
  double power_w = 0;  // mean of the 1 s power average's samples (median for idle)
  double sm_mhz = 0;   // mean SM clock of the samples (median for idle)
  double memory_power_w = -1;
};
std::vector<MixedCase> load_power_mixed(const std::filesystem::path& json);

// Each case against the phases named "caseNN" of h200-power-mixed.toml: the window's GEMM rate,
// mean power, mean SM clock (the first 2 s of a mixed case are warm-up) and memory scope,
// within 5 % each. Held out: no fit reads these cases.
std::vector<CalibrationRow> mixed_phase_table(const Scenario& scenario,
                                              const std::vector<MixedCase>& cases);

// Markdown table of the rows.
std::string format_calibration_table(const std::vector<CalibrationRow>& rows);

}  // namespace gpuclk::sim
