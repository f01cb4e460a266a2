#include "calibration.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "gpu_model.h"
#include "node_model.h"

namespace gpuclk::sim {
namespace {

struct Tick {
  double t;
  double power_w;
  double sm_mhz;
  double die_c;
  bool capped;
  double memory_power_w;
};

PhaseMeasurement summarize(const std::string& name, std::size_t index,
                           const std::vector<Tick>& ticks, double flops, double bytes) {
  PhaseMeasurement m;
  m.name = name;
  m.phase_index = index;
  m.start_s = ticks.front().t;
  m.duration_s = static_cast<double>(ticks.size()) * kTickSeconds;
  double energy = 0;
  double memory_energy = 0;
  int capped = 0;
  std::vector<double> clocks;
  for (const Tick& k : ticks) {
    energy += k.power_w * kTickSeconds;
    memory_energy += k.memory_power_w * kTickSeconds;
    capped += k.capped ? 1 : 0;
    clocks.push_back(k.sm_mhz);
    m.max_power_w = std::max(m.max_power_w, k.power_w);
  }
  std::sort(clocks.begin(), clocks.end());
  m.average_power_w = energy / m.duration_s;
  m.memory_power_w = memory_energy / m.duration_s;
  m.median_sm_mhz = clocks[clocks.size() / 2];
  double clock_sum = 0;
  for (double c : clocks) clock_sum += c;
  m.mean_sm_mhz = clock_sum / static_cast<double>(clocks.size());
  m.flops = flops;
  m.min_sm_mhz = clocks.front();
  m.max_sm_mhz = clocks.back();
  m.flops_per_s = flops / m.duration_s;
  m.dram_bytes_per_s = bytes / m.duration_s;
  m.power_capped_fraction = static_cast<double>(capped) / static_cast<double>(ticks.size());
  m.die_start_c = ticks.front().die_c;
  m.die_end_c = ticks.back().die_c;
  const std::size_t six = std::min(ticks.size() - 1, static_cast<std::size_t>(6.0 / kTickSeconds));
  m.die_after_6s_c = ticks[six].die_c;
  return m;
}

}  // namespace

std::vector<PhaseMeasurement> measure_phases(const Scenario& scenario, std::size_t gpu,
                                             double until_s) {
  NodeModel model(std::make_shared<const Scenario>(scenario));
  std::vector<PhaseMeasurement> out;
  std::vector<Tick> ticks;
  std::string name;
  std::size_t index = 0;
  double flops0 = 0;
  double bytes0 = 0;
  auto flush = [&](const GpuDynamics& d) {
    if (!ticks.empty())
      out.push_back(
          summarize(name, index, ticks, d.total_flops - flops0, d.total_dram_bytes - bytes0));
    ticks.clear();
    flops0 = d.total_flops;
    bytes0 = d.total_dram_bytes;
  };
  const auto steps = static_cast<long>(std::floor(until_s / kTickSeconds));
  for (long k = 0; k < steps; ++k) {
    const GpuState& s = model.gpu(gpu);
    const Phase* phase = current_phase(model.config(gpu), s);
    const std::string now_name = phase ? phase->name : "off";
    const std::size_t now_index = s.dynamics.phase_index + s.dynamics.iterations * 1000003;
    if (ticks.empty() || now_index != index) {
      flush(s.dynamics);
      name = now_name;
      index = now_index;
    }
    model.step(kTickSeconds);
    const GpuDynamics& d = model.gpu(gpu).dynamics;
    ticks.push_back({static_cast<double>(k) * kTickSeconds, d.power_w,
                     static_cast<double>(d.sm_mhz), d.die_c,
                     (d.event_reasons & reason::sw_power_cap) != 0, d.memory_power_w});
  }
  flush(model.gpu(gpu).dynamics);
  return out;
}

bool CalibrationRow::ok() const { return std::fabs(simulated - measured) <= tolerance; }

std::vector<CalibrationRow> h100_calibration_table(const Scenario& scenario) {
  const std::vector<PhaseMeasurement> phases = measure_phases(scenario, 0, 140);
  std::map<std::string, PhaseMeasurement> first;
  for (const PhaseMeasurement& m : phases) first.emplace(m.name, m);  // first occurrence of each
  auto get = [&](const std::string& name) -> const PhaseMeasurement& {
    auto it = first.find(name);
    if (it == first.end())
      throw std::runtime_error("calibration scenario has no phase '" + name + "'");
    return it->second;
  };
  // docs/calibration.md "The figures that matter"; tolerances from issue 3 (5 %, ±45 MHz).
  const auto pct = [](double v, double p) { return v * p / 100; };
  std::vector<CalibrationRow> rows;
  const PhaseMeasurement& idle = get("idle");
  rows.push_back({"idle", "power W", 75, idle.average_power_w, pct(75, 5)});
  rows.push_back({"idle", "SM clock MHz", 345, idle.median_sm_mhz, 0});
  const PhaseMeasurement& fp32 = get("gemm_fp32");
  rows.push_back({"FP32 SGEMM 8192³", "power W", 692, fp32.average_power_w, pct(692, 5)});
  // One 15 MHz step: the same SGEMM sits at the cap's edge on the card (1935-1980 MHz across
  // power_by_data_h100.json and gemm_power_by_dtype_h100.json).
  rows.push_back({"FP32 SGEMM 8192³", "SM clock MHz", 1980, fp32.median_sm_mhz, 15});
  rows.push_back({"FP32 SGEMM 8192³", "rate TFLOP/s", 51.9, fp32.flops_per_s / 1e12, pct(51.9, 5)});
  rows.push_back({"FP32 SGEMM 8192³", "temperature after 6 s °C", 54, fp32.die_after_6s_c, 3});
  const PhaseMeasurement& tf32 = get("gemm_tf32");
  rows.push_back({"TF32 GEMM 8192³", "power W", 694, tf32.average_power_w, pct(694, 5)});
  rows.push_back({"TF32 GEMM 8192³", "SM clock MHz", 1425, tf32.median_sm_mhz, 45});
  rows.push_back({"TF32 GEMM 8192³", "rate TFLOP/s", 357, tf32.flops_per_s / 1e12, pct(357, 5)});
  rows.push_back(
      {"TF32 GEMM 8192³", "time power-capped %", 97, 100 * tf32.power_capped_fraction, 5});
  const PhaseMeasurement& bf16 = get("gemm_bf16");
  rows.push_back({"BF16 GEMM 8192³", "power W", 697, bf16.average_power_w, pct(697, 5)});
  rows.push_back({"BF16 GEMM 8192³", "SM clock MHz", 1410, bf16.median_sm_mhz, 45});
  rows.push_back({"BF16 GEMM 8192³", "rate TFLOP/s", 681, bf16.flops_per_s / 1e12, pct(681, 5)});
  rows.push_back(
      {"BF16 GEMM 8192³", "time power-capped %", 98, 100 * bf16.power_capped_fraction, 5});
  const PhaseMeasurement& copy = get("copy_1GiB");
  rows.push_back({"device copy 1 GiB", "power W", 540, copy.average_power_w, pct(540, 5)});
  rows.push_back({"device copy 1 GiB", "SM clock MHz", 1980, copy.median_sm_mhz, 0});
  rows.push_back(
      {"device copy 1 GiB", "rate TB/s", 3.00, copy.dram_bytes_per_s / 1e12, pct(3.00, 5)});
  const PhaseMeasurement& gap = get("gap");
  // The gaps of bench_power.json itself, once its 1 s average settled: 132-138 W at 40-45 °C
  // (idle_after_work.json's 120 W was another run, after 3 s of GEMM, on a cooler card).
  rows.push_back(
      {"idle after work (context held)", "power W", 135, gap.average_power_w, pct(135, 5)});
  rows.push_back({"idle after work (context held)", "SM clock MHz", 1980, gap.median_sm_mhz, 0});
  return rows;
}

std::vector<GemmMeasurement> load_gemm_measurements(const std::filesystem::path& json) {
  std::ifstream in(json);
  if (!in) throw std::runtime_error(json.string() + ": cannot open");
  std::vector<GemmMeasurement> out;
  try {
    const nlohmann::json doc = nlohmann::json::parse(in);
    for (const nlohmann::json& r : doc.at("results")) {
      if (r.contains("error")) continue;  // this data type did not run on the card
      GemmMeasurement g;
      g.dtype = r.at("dtype").get<std::string>();
      g.shape = r.at("shape").get<std::string>();
      g.m = r.at("m").get<long long>();
      g.n = r.at("n").get<long long>();
      g.k = r.at("k").get<long long>();
      g.rate_tflops = r.at("rate_tflops").get<double>();
      g.power_w = r.at("power_w_from_energy").get<double>();
      g.median_sm_mhz = r.at("sm_clock_mhz_median").get<double>();
      g.power_capped_fraction = r.at("power_capped_fraction").get<double>();
      g.temperature_c = r.at("temperature_c_end").get<double>();
      out.push_back(std::move(g));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(json.string() + ": " + e.what());
  }
  if (out.empty()) throw std::runtime_error(json.string() + ": no GEMM result in \"results\"");
  return out;
}

std::vector<CalibrationRow> gemm_dtype_table(const Scenario& scenario,
                                             const std::vector<GemmMeasurement>& measured) {
  // h100-gemm-dtypes.toml is ~105 s of work at the measured rates: room for a model half as fast.
  constexpr double kRunS = 240;
  const std::vector<PhaseMeasurement> phases = measure_phases(scenario, 0, kRunS);
  if (phases.empty() || phases.back().name != "off")
    throw std::runtime_error("GEMM calibration scenario did not finish within " +
                             std::to_string(static_cast<int>(kRunS)) + " s");
  std::map<std::string, PhaseMeasurement> first;
  for (const PhaseMeasurement& m : phases) first.emplace(m.name, m);
  std::vector<CalibrationRow> rows;
  for (const GemmMeasurement& g : measured) {
    const std::string name = g.dtype + "_" + g.shape;
    auto it = first.find(name);
    if (it == first.end())
      throw std::runtime_error("GEMM calibration scenario has no phase '" + name + "'");
    const PhaseMeasurement& m = it->second;
    std::string type = g.dtype;
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    char label[128];
    std::snprintf(label, sizeof label, "%s GEMM %lld×%lld×%lld", type.c_str(), g.m, g.n, g.k);
    rows.push_back(
        {label, "rate TFLOP/s", g.rate_tflops, m.flops_per_s / 1e12, g.rate_tflops * 0.05});
    rows.push_back(
        {label, "SM clock MHz", g.median_sm_mhz, m.median_sm_mhz, g.median_sm_mhz * 0.05});
    rows.push_back({label, "power W", g.power_w, m.average_power_w, g.power_w * 0.05});
  }
  return rows;
}

// sim/tools/fit_power.py's HOLD: the cases kept out of the fit.
bool held_out_of_fit(const std::string& name, const std::string& input) {
  static const std::pair<std::string_view, std::string_view> kHeld[] = {
      {"gemm bf16 4096x4096x4096", "normal"},   {"gemm bf16 16384x16384x512", "normal"},
      {"gemm fp16 8192^3", "normal"},           {"add fp32 256Mi (torch.add)", "normal"},
      {"sum fp32 256Mi (torch.sum)", "normal"}, {"idle, context held, after the work", "-"},
      {"copy 1 GiB (dst.copy_(src))", "bits"},  {"gemm bf16 65536x1024x8192", "normal"},
  };
  return std::any_of(std::begin(kHeld), std::end(kHeld),
                     [&](const auto& h) { return h.first == name && h.second == input; });
}

std::vector<PowerByDataCase> load_power_by_data(const std::filesystem::path& json) {
  std::ifstream in(json);
  if (!in) throw std::runtime_error(json.string() + ": cannot open");
  std::vector<PowerByDataCase> out;
  try {
    const nlohmann::json doc = nlohmann::json::parse(in);
    for (const nlohmann::json& r : doc.at("cases")) {
      PowerByDataCase c;
      c.name = r.at("name").get<std::string>();
      c.input = r.at("input").get<std::string>();
      c.kind = r.at("kind").get<std::string>();
      c.rate = r.at("rate").get<double>();
      c.sm_mhz = r.at("sm_mhz").get<double>();
      c.power_w = r.at("power_w").get<double>();
      if (r.contains("avg_memory_w") && r.at("avg_memory_w").is_number())
        c.memory_power_w = r.at("avg_memory_w").get<double>();
      c.held_out = held_out_of_fit(c.name, c.input);
      out.push_back(std::move(c));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(json.string() + ": " + e.what());
  }
  if (out.empty()) throw std::runtime_error(json.string() + ": no case in \"cases\"");
  return out;
}

std::vector<CalibrationRow> power_by_data_table(const Scenario& scenario,
                                                const std::vector<PowerByDataCase>& cases) {
  // ~180 s of work at the card's rates: room for a model a third slower.
  constexpr double kRunS = 300;
  const std::vector<PhaseMeasurement> phases = measure_phases(scenario, 0, kRunS);
  if (phases.empty() || phases.back().name != "off")
    throw std::runtime_error("power-by-data scenario did not finish within " +
                             std::to_string(static_cast<int>(kRunS)) + " s");
  std::map<std::string, PhaseMeasurement> first;
  for (const PhaseMeasurement& m : phases) first.emplace(m.name, m);
  std::vector<CalibrationRow> rows;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const PowerByDataCase& c = cases[i];
    char key[32];
    std::snprintf(key, sizeof key, "case%02zu", i);
    auto it = first.find(key);
    if (it == first.end())
      throw std::runtime_error(std::string("power-by-data scenario has no phase '") + key + "'");
    const PhaseMeasurement& m = it->second;
    const std::string label =
        c.name + ", " + (c.input == "-" ? "no data" : c.input) + (c.held_out ? " (held out)" : "");
    if (c.rate > 0) {
      const bool gemm = c.kind == "gemm";
      const double scale = gemm ? 1e12 : 1e9;
      const double simulated = (gemm ? m.flops_per_s : m.dram_bytes_per_s) / scale;
      rows.push_back({label, gemm ? "rate TFLOP/s" : "rate GB/s", c.rate / scale, simulated,
                      c.rate / scale * 0.05});
    }
    rows.push_back({label, "SM clock MHz", c.sm_mhz, m.median_sm_mhz, c.sm_mhz * 0.05});
    rows.push_back({label, "power W", c.power_w, m.average_power_w, c.power_w * 0.05});
    if (c.memory_power_w >= 0) {
      // Listed, not held to 5 %: the model's memory scope follows the DRAM traffic alone.
      rows.push_back({label, "memory-scope power W", c.memory_power_w, m.memory_power_w,
                      std::max(c.memory_power_w, m.memory_power_w)});
    }
  }
  return rows;
}

std::vector<MixedCase> load_power_mixed(const std::filesystem::path& json) {
  std::ifstream in(json);
  if (!in) throw std::runtime_error(json.string() + ": cannot open");
  std::vector<MixedCase> out;
  try {
    const nlohmann::json doc = nlohmann::json::parse(in);
    for (const nlohmann::json& r : doc.at("cases")) {
      MixedCase c;
      c.name = r.at("name").get<std::string>();
      c.kind = r.at("kind").get<std::string>();
      const bool mixed = c.kind == "mixed";
      c.rate = r.at("rate").get<double>();
      c.power_w = r.at(mixed ? "mean_power_w" : "power_w").get<double>();
      c.sm_mhz = r.at(mixed ? "mean_sm_mhz" : "sm_mhz").get<double>();
      const char* mem = mixed ? "mean_avg_memory_w" : "avg_memory_w";
      if (r.contains(mem) && r.at(mem).is_number()) c.memory_power_w = r.at(mem).get<double>();
      out.push_back(std::move(c));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(json.string() + ": " + e.what());
  }
  if (out.empty()) throw std::runtime_error(json.string() + ": no case in \"cases\"");
  return out;
}

std::vector<CalibrationRow> mixed_phase_table(const Scenario& scenario,
                                              const std::vector<MixedCase>& cases) {
  constexpr double kRunS = 60;  // 2 × 5 s idle and 4 × 10 s of cycles
  constexpr double kWarmupS = 2;
  const std::vector<PhaseMeasurement> phases = measure_phases(scenario, 0, kRunS);
  if (phases.empty() || phases.back().name != "off")
    throw std::runtime_error("mixed-phase scenario did not finish within 60 s");
  std::vector<CalibrationRow> rows;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const MixedCase& c = cases[i];
    char key[32];
    std::snprintf(key, sizeof key, "case%02zu", i);
    // The case's phases, contiguous; the window starts kWarmupS after the first.
    double start = -1, seconds = 0, energy = 0, memory = 0, clock = 0, flops = 0;
    for (const PhaseMeasurement& m : phases) {
      if (m.name != key) continue;
      if (start < 0) start = m.start_s;
      if (c.kind == "mixed" && m.start_s < start + kWarmupS - 1e-9) continue;
      seconds += m.duration_s;
      energy += m.average_power_w * m.duration_s;
      memory += m.memory_power_w * m.duration_s;
      clock += m.mean_sm_mhz * m.duration_s;
      flops += m.flops;
    }
    if (seconds <= 0)
      throw std::runtime_error(std::string("mixed-phase scenario has no phase '") + key + "'");
    // sim/tools/fit_controller.py fits the controller's lag on the 0.3 and 0.9 s cases (its
    // FITTED); the others no fit reads.
    const bool fitted = c.name.find("0.3 s on") != std::string::npos ||
                        c.name.find("0.9 s on") != std::string::npos;
    const std::string label = c.name + (fitted ? " (fitted: the lag)" : " (held out)");
    if (c.rate > 0)
      rows.push_back(
          {label, "rate TFLOP/s", c.rate / 1e12, flops / seconds / 1e12, c.rate / 1e12 * 0.05});
    rows.push_back({label, c.kind == "mixed" ? "mean SM clock MHz" : "SM clock MHz", c.sm_mhz,
                    clock / seconds, c.sm_mhz * 0.05});
    rows.push_back({label, c.kind == "mixed" ? "mean power W" : "power W", c.power_w,
                    energy / seconds, c.power_w * 0.05});
    if (c.memory_power_w >= 0)
      rows.push_back({label, "memory-scope power W", c.memory_power_w, memory / seconds,
                      c.memory_power_w * 0.05});
  }
  return rows;
}

std::string format_calibration_table(const std::vector<CalibrationRow>& rows) {
  std::string out =
      "| workload | quantity | measured | simulated | error | within "
      "|\n|---|---|---:|---:|---:|---|\n";
  char line[256];
  for (const CalibrationRow& r : rows) {
    const double error = r.measured != 0 ? 100 * (r.simulated - r.measured) / r.measured : 0;
    std::snprintf(line, sizeof line, "| %s | %s | %.4g | %.4g | %+.1f %% | %s |\n",
                  r.workload.c_str(), r.quantity.c_str(), r.measured, r.simulated, error,
                  r.ok() ? "yes" : "NO");
    out += line;
  }
  return out;
}

}  // namespace gpuclk::sim
