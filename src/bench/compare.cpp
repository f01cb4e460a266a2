#include "bench/compare.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/report_view.h"
#include "util/error.h"
#include "util/file.h"

namespace gpuclk::bench {
namespace {

using Json = nlohmann::json;

// A number at `path` under `j` (null or absent: nullopt).
std::optional<double> number_at(const Json& j, std::initializer_list<const char*> path) {
  const Json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return std::nullopt;
    at = &(*at)[key];
  }
  return at->is_number() ? std::optional(at->get<double>()) : std::nullopt;
}

std::string text_at(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

RecordedResult parse_result(const Json& r, std::size_t position, const std::string& name) {
  auto missing = [&](const char* what) {
    return bad_argument(fmt::format("{}: results[{}] has no {}", name, position, what),
                        "give a file written by gpuclk bench --json");
  };
  RecordedResult out;
  out.workload = text_at(r, "workload");
  out.variant = text_at(r, "variant");
  out.unit = text_at(r, "unit");
  if (out.workload.empty()) throw missing("workload");
  if (!rate_unit_from_display(out.unit)) throw missing("unit (TFLOP/s or GB/s)");
  const auto rate = number_at(r, {"rate", "median"});
  if (!rate) throw missing("rate.median");
  out.rate = *rate;
  const auto index = number_at(r, {"gpu", "index"});
  if (!index || *index < 0) throw missing("gpu.index");
  out.gpu_index = static_cast<unsigned>(*index);
  if (r.contains("gpu")) {
    out.gpu_uuid = text_at(r["gpu"], "uuid");
    out.gpu_name = text_at(r["gpu"], "name");
  }
  out.sm_clock_mhz = number_at(r, {"sm_clock_mhz", "median"});
  out.memory_clock_mhz = number_at(r, {"memory_clock_mhz", "median"});
  out.power_w = number_at(r, {"power_w", "mean"});
  out.efficiency_pct = number_at(r, {"efficiency_pct", "at_max_clock"});
  out.efficiency_at_clock_pct = number_at(r, {"efficiency_pct", "at_median_clock"});
  out.energy_per_unit = number_at(r, {"energy_per_unit"});
  out.verdict = text_at(r, "verdict");
  return out;
}

bool same_gpu_by_uuid(const RecordedResult& x, const RecordedResult& y) {
  return !x.gpu_uuid.empty() && x.gpu_uuid == y.gpu_uuid;
}
bool same_work(const RecordedResult& x, const RecordedResult& y) {
  return x.workload == y.workload && x.variant == y.variant;
}

output::Value number(const std::optional<double>& v, const std::string& unit, int precision) {
  return v ? output::number(*v, unit, precision) : output::na();
}

}  // namespace

RecordedRun parse_recorded_run(std::string_view json_text, const std::string& name) {
  Json j;
  try {
    j = Json::parse(json_text);
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for 1e2018
    throw bad_argument(fmt::format("{}: not JSON ({})", name, e.what()),
                       "give a file written by gpuclk bench --json");
  }
  if (!j.is_object() || text_at(j, "format") != kReportFormat || !j.contains("results") ||
      !j["results"].is_array()) {
    throw bad_argument(fmt::format("{}: not a gpuclk bench report (expected \"format\": \"{}\" and "
                                   "a \"results\" array)",
                                   name, kReportFormat),
                       "give a file written by gpuclk bench --json");
  }
  RecordedRun run;
  run.name = name;
  if (j.contains("environment")) {
    const Json& env = j["environment"];
    run.host = text_at(env, "host");
    run.started_at = text_at(env, "started_at");
    run.gpuclk_version = text_at(env, "gpuclk_version");
    run.driver_version = text_at(env, "driver_version");
  }
  for (std::size_t i = 0; i < j["results"].size(); ++i) {
    run.results.push_back(parse_result(j["results"][i], i, name));
  }
  return run;
}

RecordedRun load_recorded_run(const std::string& path) {
  return parse_recorded_run(file::read_bounded(path, "bench report"), path);
}

std::vector<ComparisonRow> compare_runs(const RecordedRun& a, const RecordedRun& b) {
  std::vector<ComparisonRow> rows;
  std::vector<bool> b_used(b.results.size(), false);
  auto find_in_b = [&](const RecordedResult& x) -> std::optional<std::size_t> {
    for (int pass = 0; pass < 2; ++pass) {
      for (std::size_t i = 0; i < b.results.size(); ++i) {
        const RecordedResult& y = b.results[i];
        if (b_used[i] || !same_work(x, y)) continue;
        if (pass == 0 ? same_gpu_by_uuid(x, y) : x.gpu_index == y.gpu_index) return i;
      }
    }
    return std::nullopt;
  };
  for (const RecordedResult& x : a.results) {
    ComparisonRow row{x.workload, x.variant, x.unit, x, std::nullopt, std::nullopt};
    if (auto i = find_in_b(x)) {
      b_used[*i] = true;
      row.b = b.results[*i];
      if (x.rate > 0 && row.b->unit == x.unit) row.ratio = row.b->rate / x.rate;
    }
    rows.push_back(std::move(row));
  }
  for (std::size_t i = 0; i < b.results.size(); ++i) {
    if (b_used[i]) continue;
    const RecordedResult& y = b.results[i];
    rows.push_back({y.workload, y.variant, y.unit, std::nullopt, y, std::nullopt});
  }
  return rows;
}

output::Table comparison_table(const std::vector<ComparisonRow>& rows) {
  output::Table t;
  t.columns = {{"workload", "Workload", true, ""},
               {"variant", "Variant", true, ""},
               {"gpu_a", "GPU A", false, ""},
               {"gpu_b", "GPU B", false, ""},
               {"unit", "Unit", true, ""},
               {"rate_a", "Rate A", false, ""},
               {"rate_b", "Rate B", false, ""},
               {"ratio", "B/A", false, ""},
               {"sm_clock_a", "SM MHz A", false, "MHz"},
               {"sm_clock_b", "SM MHz B", false, "MHz"},
               {"power_a", "Power A", false, "W"},
               {"power_b", "Power B", false, "W"},
               {"efficiency_a", "Eff. A", false, "%"},
               {"efficiency_b", "Eff. B", false, "%"},
               {"energy_per_unit_a", "J/unit A", false, ""},
               {"energy_per_unit_b", "J/unit B", false, ""}};
  for (const ComparisonRow& row : rows) {
    const auto& a = row.a;
    const auto& b = row.b;
    auto gpu = [](const std::optional<RecordedResult>& r) {
      return r ? output::integer(r->gpu_index) : output::na();
    };
    auto field = [](const std::optional<RecordedResult>& r, auto member, const char* unit,
                    int precision) {
      return r ? number(member(*r), unit, precision) : output::na();
    };
    auto rate = [](const RecordedResult& r) { return std::optional(r.rate); };
    auto sm = [](const RecordedResult& r) { return r.sm_clock_mhz; };
    auto power = [](const RecordedResult& r) { return r.power_w; };
    auto eff = [](const RecordedResult& r) { return r.efficiency_pct; };
    auto energy = [](const RecordedResult& r) { return r.energy_per_unit; };
    t.rows.push_back({output::text(row.workload), output::text(row.variant), gpu(a), gpu(b),
                      output::text(row.unit), field(a, rate, "", 2), field(b, rate, "", 2),
                      row.ratio ? output::number(*row.ratio, "", 3) : output::na(),
                      field(a, sm, "MHz", 0), field(b, sm, "MHz", 0), field(a, power, "W", 0),
                      field(b, power, "W", 0), field(a, eff, "%", 1), field(b, eff, "%", 1),
                      field(a, energy, "", 3), field(b, energy, "", 3)});
  }
  return t;
}

}  // namespace gpuclk::bench
