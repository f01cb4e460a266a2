// The report tree and the JSON file it becomes. The committed fixtures of `bench compare`
// (tests/cli/fixtures/bench_*.json) are this writer's output for recorded runs, checked here
// byte for byte, so the fixtures and the writer cannot drift apart.
// GPUCLK_UPDATE_FIXTURES=1 rewrites them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/report_view.h"
#include "bench_report_samples.h"
#include "output/printer.h"

namespace gpuclk::bench {
namespace {

using testing::h100_facts;
using testing::h100_result;
using testing::load_h100_phase;

Environment fixed_environment(const std::string& host, const std::string& uuid_suffix) {
  Environment env;
  env.gpuclk_version = "0.1.0";
  env.hostname = host;
  env.started_at = "2026-11-21T12:00:00Z";
  env.command_line = "gpuclk bench gemm --dtype bf16,tf32,fp32 --json run.json";
  env.driver_version = "580.159.04";
  env.nvml_version = "13.580.159.04";
  env.cuda_driver_version = 13000;
  env.cuda_runtime_version = 13000;
  GpuSettings gpu;
  gpu.facts = h100_facts(0);
  gpu.facts.uuid += uuid_suffix;
  gpu.compute_capability = "9.0";
  gpu.default_power_limit = units::Watts(700);
  gpu.app_sm_clock = gpu.default_app_sm_clock = units::Megahertz(1980);
  gpu.app_memory_clock = gpu.default_app_memory_clock = units::Megahertz(2619);
  gpu.persistence_mode = true;
  gpu.temperature_at_start = units::Celsius(34);
  env.gpus.push_back(gpu);
  return env;
}

struct Phase {
  const char* name;
  WorkloadSpec spec;
  double rate, seconds;  // bench_power.json "results" (docs/calibration.md)
};
const Phase kCalibration[] = {
    {"gemm_bf16", GemmSpec{GemmDtype::bf16}, 680.647766e12, 6.009},
    {"gemm_tf32", GemmSpec{GemmDtype::tf32}, 356.547085e12, 6.013},
    {"gemm_fp32", GemmSpec{GemmDtype::fp32}, 51.9237332e12, 6.141},
    {"copy_1GiB", MemSpec{MemKind::copy}, 2.99953570e12, 6.007},
};

// The calibration run as gpuclk bench would report it; `scale` multiplies each rate (by phase
// name), for a second, made-up run to compare against.
BenchRun calibration_run(const std::string& host, const std::string& uuid_suffix,
                         const std::map<std::string, double>& scale = {}) {
  BenchRun run;
  run.environment = fixed_environment(host, uuid_suffix);
  run.seconds = 6;
  run.warmup_seconds = 1;
  run.sample_interval_ms = 50;
  for (const Phase& p : kCalibration) {
    auto it = scale.find(p.name);
    if (!scale.empty() && it == scale.end()) continue;
    const double factor = it == scale.end() ? 1 : it->second;
    const auto phase = load_h100_phase(p.name);
    GpuFacts facts = h100_facts(0);
    facts.uuid += uuid_suffix;
    run.reports.push_back(make_report(p.spec, h100_result(p.spec, p.rate * factor, p.seconds),
                                      facts, &phase.summary));
  }
  return run;
}

std::string json_text(const BenchRun& run) {
  std::ostringstream out;
  output::make_printer(output::Format{output::Format::Kind::json}, out)
      ->print_tree(bench_tree(run, {true, true}));
  return out.str();
}

void expect_fixture(const std::string& name, const std::string& text) {
  const std::string path = std::string(GPUCLK_SOURCE_DIR) + "/tests/cli/fixtures/" + name;
  if (const char* update = std::getenv("GPUCLK_UPDATE_FIXTURES"); update && *update == '1') {
    std::ofstream(path) << text;
  }
  std::ifstream in(path);
  std::stringstream committed;
  committed << in.rdbuf();
  EXPECT_EQ(committed.str(), text) << path
                                   << " differs from the writer's output; rerun with "
                                      "GPUCLK_UPDATE_FIXTURES=1 if the change is intended";
}

TEST(bench_report_view_test, the_calibration_report_reads_as_the_calibration_says) {
  const auto j = nlohmann::json::parse(json_text(calibration_run("h100-calibration", "")));
  EXPECT_EQ(j["format"], kReportFormat);
  const auto& bf16 = j["results"][0];
  EXPECT_EQ(bf16["variant"], "bf16 8192x8192x8192");
  EXPECT_EQ(bf16["unit"], "TFLOP/s");
  EXPECT_DOUBLE_EQ(bf16["rate"]["median"].get<double>(), 680.65);
  EXPECT_DOUBLE_EQ(bf16["peak"]["at_max_clock"].get<double>(), 1070.53);
  EXPECT_DOUBLE_EQ(bf16["peak"]["at_median_clock"].get<double>(), 762.35);
  EXPECT_DOUBLE_EQ(bf16["efficiency_pct"]["at_max_clock"].get<double>(), 63.6);
  EXPECT_DOUBLE_EQ(bf16["efficiency_pct"]["at_median_clock"].get<double>(), 89.3);
  EXPECT_EQ(bf16["sm_clock_mhz"]["median"], 1410);
  EXPECT_DOUBLE_EQ(bf16["clock_reasons_pct"]["sw_power_cap"].get<double>(), 98.6);
  EXPECT_EQ(bf16["repetitions"].size(), 10u);
  const auto& copy = j["results"][3];
  EXPECT_EQ(copy["unit"], "GB/s");
  EXPECT_DOUBLE_EQ(copy["rate"]["median"].get<double>(), 2999.5);
  EXPECT_DOUBLE_EQ(copy["efficiency_pct"]["at_max_clock"].get<double>(), 89.5);
  EXPECT_EQ(j["environment"]["gpus"][0]["power_limit_w"], 700);
}

TEST(bench_report_view_test, table_view_leaves_repetitions_out) {
  const BenchRun run = calibration_run("h100-calibration", "");
  const output::Node tree = bench_tree(run, {});
  std::ostringstream out;
  output::make_printer(output::Format{}, out)->print_tree(tree);
  const std::string text = out.str();
  std::cout << text;  // docs/bench.md's example report is this output
  EXPECT_NE(text.find("GPU 0: gemm bf16 8192x8192x8192"), std::string::npos);
  EXPECT_NE(
      text.find("SW power cap 99 % of the run: the power limit, not the kernel, set this ceiling"),
      std::string::npos);
  EXPECT_NE(text.find("680.65 TFLOP/s"), std::string::npos);
  EXPECT_NE(text.find("J/TFLOP"), std::string::npos);
  EXPECT_EQ(text.find("Repetitions\n"), std::string::npos);
}

TEST(bench_report_view_test, committed_compare_fixtures_are_what_the_writer_writes) {
  expect_fixture("bench_h100_calibration.json", json_text(calibration_run("h100-calibration", "")));
  // A made-up second machine: bf16 5 % faster, copy 10 % slower, fp32 and tf32 not run.
  expect_fixture(
      "bench_h100_other.json",
      json_text(calibration_run("other-h100", "-b", {{"gemm_bf16", 1.05}, {"copy_1GiB", 0.9}})));
}

}  // namespace
}  // namespace gpuclk::bench
