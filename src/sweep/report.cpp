#include "sweep/report.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpuclk::sweep {
namespace {

using output::integer;
using output::na;
using output::number;
using output::text;

output::Value opt(const std::optional<double>& v, std::string unit, int precision) {
  return v ? number(*v, std::move(unit), precision) : na();
}

std::string reasons_text(const PointResult& p) {
  std::string out;
  for (const auto& r : p.reasons) {
    if (r.fraction < 0.005) continue;
    out += fmt::format("{}{} {:.0f}%", out.empty() ? "" : ", ", r.name, r.fraction * 100);
  }
  return out.empty() ? "none" : out;
}

output::Value requested_value(const Report& r, const PointResult& p) {
  if (p.baseline) return text("baseline");
  return number(p.requested, std::string(unit_of(r.axis)), r.axis == Axis::sm_clock ? 0 : 1);
}

int rate_precision(double rate) { return rate >= 100 ? 1 : rate >= 1 ? 3 : 6; }

std::string setting_text(Axis axis, const std::optional<double>& v) {
  if (!v) return "none";
  return axis == Axis::sm_clock ? fmt::format("{:.0f} MHz", *v) : fmt::format("{:g} W", *v);
}

std::string gpus_text(const std::vector<unsigned>& gpus) {
  std::string list;
  for (unsigned g : gpus) list += fmt::format("{}{}", list.empty() ? "" : ", ", g);
  return (gpus.size() == 1 ? "GPU " : "GPUs ") + list;
}

// "GPU 2's max_throughput point is 1260 MHz, the others' 1440 MHz" when one GPU stands out,
// else every setting with its GPUs.
std::string split_note(Axis axis, const BestSplit& split) {
  const auto& g = split.groups;
  if (g.size() == 2 && (g[0].second.size() == 1) != (g[1].second.size() == 1)) {
    const auto& one = g[0].second.size() == 1 ? g[0] : g[1];
    const auto& rest = g[0].second.size() == 1 ? g[1] : g[0];
    const unsigned gpu = one.second.front();
    if (!one.first) {
      return fmt::format("GPU {} has no {} point, the others' is {}", gpu, split.kind,
                         setting_text(axis, rest.first));
    }
    if (!rest.first) {
      return fmt::format("GPU {}'s {} point is {}; the others have none", gpu, split.kind,
                         setting_text(axis, one.first));
    }
    return fmt::format("GPU {}'s {} point is {}, the others' {}", gpu, split.kind,
                       setting_text(axis, one.first), setting_text(axis, rest.first));
  }
  std::string parts;
  for (const auto& [setting, gpus] : g) {
    parts += fmt::format("{}{} on {}", parts.empty() ? "" : "; ", setting_text(axis, setting),
                         gpus_text(gpus));
  }
  return fmt::format("the GPUs' {} points differ: {}", split.kind, parts);
}

std::vector<output::Value> best_row(const Report& r, const BestPoint& b) {
  return {text(b.kind),
          number(b.point.requested, std::string(unit_of(r.axis)), r.axis == Axis::sm_clock ? 0 : 1),
          number(b.point.rate, r.unit.rate_unit(), rate_precision(b.point.rate)),
          number(b.point.power_w, "W", 1),
          number(b.point.energy_per_work, energy_unit(r.unit), 4),
          number(b.rate_vs_baseline * 100, "%", 1),
          number(b.energy_vs_baseline * 100, "%", 1)};
}

std::vector<output::Column> best_columns(const Report& r) {
  return {{"best", "Best", true},
          {std::string(key_of(r.axis)), r.axis == Axis::sm_clock ? "Lock MHz" : "Limit W"},
          {"rate", "Rate " + r.unit.rate_unit(), false, r.unit.rate_unit()},
          {"power_w", "Power W"},
          {"energy_per_work", "Energy " + energy_unit(r.unit), false, energy_unit(r.unit)},
          {"rate_vs_baseline", "Rate vs base %"},
          {"energy_vs_baseline", "Energy vs base %"}};
}

void add_best(output::Node& parent, const Report& r, const std::vector<BestPoint>& best) {
  for (const auto& b : best) {
    auto& n = parent.section(b.kind, "");
    n.add(std::string(key_of(r.axis)), "",
          number(b.point.requested, "", r.axis == Axis::sm_clock ? 0 : 1));
    n.add("rate", "", number(b.point.rate, "", 6));
    n.add("power_w", "", number(b.point.power_w, "", 2));
    n.add("energy_per_work", "", number(b.point.energy_per_work, "", 6));
    n.add("edp", "", number(b.point.edp(), "", 9));
    n.add("rate_vs_baseline", "", number(b.rate_vs_baseline, "", 4));
    n.add("energy_vs_baseline", "", number(b.energy_vs_baseline, "", 4));
    // Where the least value itself was, when the tie rule named this lower setting (else null).
    n.add("least_at", "",
          b.least_at ? number(*b.least_at, "", r.axis == Axis::sm_clock ? 0 : 1) : na());
  }
}

}  // namespace

std::string energy_unit(const WorkUnit& unit) { return "J/" + unit.name; }

namespace {

std::string tie_note(Axis axis, const BestPoint& b) {
  const char* what = b.kind == "min_edp" ? "energy x delay" : "energy per unit of work";
  return fmt::format(
      "{} is {}, the lowest setting within {:g} % of the least {} (at {}): values that close "
      "are the same within measurement noise, and the lower setting asks for less",
      b.kind, setting_text(axis, b.point.requested), kTieTolerance * 100, what,
      setting_text(axis, b.least_at));
}

}  // namespace

void add_held_below_notes(Report& report) {
  std::map<unsigned, std::vector<const PointResult*>> held;
  for (const auto& p : report.points) {
    if (p.held_below) held[p.gpu].push_back(&p);
  }
  for (const auto& [gpu, points] : held) {
    std::string locks;
    double lo = 1e9, hi = 0;
    for (const auto* p : points) {
      locks += fmt::format("{}{:.0f}", locks.empty() ? "" : ", ", p->requested);
      lo = std::min(lo, p->median_sm_mhz.value_or(0));
      hi = std::max(hi, p->median_sm_mhz.value_or(0));
    }
    report.notes.push_back(fmt::format(
        "GPU {}: a clock lock is a ceiling: at {} MHz the clock ran at {} MHz (median), held "
        "lower by the power cap or a thermal limit (see Reasons)",
        gpu, locks, lo == hi ? fmt::format("{:.0f}", lo) : fmt::format("{:.0f}–{:.0f}", lo, hi)));
  }
}

BestChoice choose_best(const Report& report, const std::string& kind, bool per_gpu,
                       const std::vector<unsigned>& gpus) {
  const auto setting_of = [&](const std::vector<BestPoint>& list) -> std::optional<double> {
    const auto it =
        std::find_if(list.begin(), list.end(), [&](const BestPoint& b) { return b.kind == kind; });
    return it == list.end() ? std::nullopt : std::optional(it->point.requested);
  };
  BestChoice out;
  out.per_gpu = per_gpu && !report.best_per_gpu.empty();
  for (auto g : gpus) {
    std::optional<double> v;
    if (!out.per_gpu) {
      v = setting_of(report.best);
    } else if (const auto own = report.best_per_gpu.find(g); own != report.best_per_gpu.end()) {
      v = setting_of(own->second);
    }
    if (!v) {
      out.missing += fmt::format("{}{}", out.missing.empty() ? "" : ", ", g);
      continue;
    }
    out.value_of[g] = *v;
    out.applied +=
        fmt::format("{}GPU {} {} {}", out.applied.empty() ? "" : ", ", g, *v, unit_of(report.axis));
  }
  return out;
}

void find_best(Report& report) {
  report.baseline = baseline_of(report.points);
  report.best = best_points(curve_of(report.points), report.baseline, report.max_slowdown);
  // The tie rule, said where the result is shown: the plot and the table name the lower setting
  // although another one measured a hair less.
  for (const auto& b : report.best) {
    if (b.least_at) report.notes.push_back(tie_note(report.axis, b));
  }
  report.best_per_gpu.clear();
  auto per_gpu = best_points_per_gpu(report.points, report.max_slowdown);
  if (per_gpu.size() < 2) return;
  report.best_per_gpu = std::move(per_gpu);
  for (const auto& split : best_splits(report.best_per_gpu)) {
    report.notes.push_back(split_note(report.axis, split));
  }
}

output::Table points_table(const Report& r) {
  output::Table t;
  const std::string rate_unit = r.unit.rate_unit();
  t.columns = {{"gpu", "GPU"},
               {std::string(key_of(r.axis)), r.axis == Axis::sm_clock ? "Lock MHz" : "Limit W"},
               {"median_sm_mhz", "SM MHz"},
               {"rate", "Rate " + rate_unit, false, rate_unit},
               {"power_w", "Power W"},
               {"power_p95_w", "p95 W"},
               {"energy_per_work", "Energy " + energy_unit(r.unit), false, energy_unit(r.unit)},
               {"temperature_c", "Temp C"},
               {"gpm_sm", "SM act %"},
               {"reasons", "Reasons", true},
               {"error", "Error", true}};
  for (const auto& p : r.points) {
    t.rows.push_back({integer(p.gpu), requested_value(r, p), opt(p.median_sm_mhz, "MHz", 0),
                      p.rate ? number(*p.rate, rate_unit, rate_precision(*p.rate)) : na(),
                      opt(p.power_w, "W", 1), opt(p.power_p95_w, "W", 1),
                      opt(p.energy_per_work, energy_unit(r.unit), 4), opt(p.temperature_c, "C", 0),
                      p.gpm_sm ? number(*p.gpm_sm * 100, "%", 0) : na(),
                      text(reasons_text(p) + (p.held_below ? " (held below the lock)" : "")),
                      p.error.empty() ? na() : text(p.error)});
  }
  // --repeat: how many runs each point took and how far their rates scatter, after the rate.
  if (r.repeat > 1) {
    t.columns.insert(t.columns.begin() + 4, {{"runs", "Runs"}, {"rate_spread", "Spread %"}});
    for (std::size_t i = 0; i < r.points.size(); ++i) {
      const auto& p = r.points[i];
      const auto spread = p.rate_spread();
      t.rows[i].insert(t.rows[i].begin() + 4,
                       {integer(p.runs), spread ? number(*spread * 100, "%", 1) : na()});
    }
  }
  return t;
}

output::Table best_table(const Report& r) {
  output::Table t;
  t.columns = best_columns(r);
  for (const auto& b : r.best) t.rows.push_back(best_row(r, b));
  return t;
}

output::Table best_per_gpu_table(const Report& r) {
  output::Table t;
  t.columns = best_columns(r);
  t.columns.insert(t.columns.begin(), {"gpu", "GPU"});
  for (const auto& [gpu, best] : r.best_per_gpu) {
    for (const auto& b : best) {
      auto row = best_row(r, b);
      row.insert(row.begin(), integer(gpu));
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

output::Node report_tree(const Report& r) {
  output::Node root;
  root.add("workload", "Workload", text(r.workload));
  root.add("data", "Data", text(r.data));
  root.add("axis", "Axis", text(r.axis == Axis::sm_clock ? "sm_clock" : "power_limit"));
  root.add("rate_unit", "Rate unit", text(r.unit.rate_unit()));
  root.add("energy_per_work_unit", "Energy per work unit", text(energy_unit(r.unit)));
  auto& points = root.section("points", "Points", true);
  for (const auto& p : r.points) {
    auto& n = points.section("point", "");
    n.add("gpu", "", integer(p.gpu));
    n.add("uuid", "", text(p.uuid));
    n.add("baseline", "", output::flag(p.baseline));
    n.add(std::string(key_of(r.axis)), "",
          p.baseline ? na() : number(p.requested, "", r.axis == Axis::sm_clock ? 0 : 1));
    n.add("median_sm_mhz", "", opt(p.median_sm_mhz, "", 0));
    n.add("held_below_lock", "", output::flag(p.held_below));
    n.add("rate", "", p.rate ? number(*p.rate, "", 6) : na());
    n.add("rate_unit", "", text(r.unit.rate_unit()));
    n.add("runs", "", integer(p.runs));
    auto& run_rates = n.section("run_rates", "", true);
    for (double rate : p.run_rates) run_rates.add("rate", "", number(rate, "", 6));
    n.add("rate_spread", "", opt(p.rate_spread(), "", 4));
    n.add("work", "", number(p.work, "", 6));
    n.add("seconds", "", number(p.seconds, "", 3));
    n.add("power_w", "", opt(p.power_w, "", 2));
    n.add("power_p95_w", "", opt(p.power_p95_w, "", 2));
    n.add("energy_j", "", opt(p.energy_j, "", 3));
    n.add("energy_per_work", "", opt(p.energy_per_work, "", 6));
    n.add("edp", "", opt(p.edp(), "", 9));
    n.add("temperature_c", "", opt(p.temperature_c, "", 1));
    auto& gpm = n.section("gpm", "");
    gpm.add("sm", "", opt(p.gpm_sm, "", 4));
    gpm.add("tensor", "", opt(p.gpm_tensor, "", 4));
    gpm.add("dram", "", opt(p.gpm_dram, "", 4));
    auto& reasons = n.section("reasons", "");
    for (const auto& reason : p.reasons)
      reasons.add(reason.name, "", number(reason.fraction, "", 4));
    n.add("error", "", p.error.empty() ? na() : text(p.error));
  }
  add_best(root.section("best", "Best"), r, r.best);
  if (!r.best_per_gpu.empty()) {
    auto& per_gpu = root.section("best_per_gpu", "Best per GPU");
    for (const auto& [gpu, best] : r.best_per_gpu) {
      add_best(per_gpu.section(std::to_string(gpu), ""), r, best);
    }
  }
  root.add("max_slowdown", "", number(r.max_slowdown, "", 4));
  root.add("repeat", "", integer(r.repeat));
  if (r.baseline) {
    auto& b = root.section("baseline", "");
    b.add("rate", "", number(r.baseline->rate, "", 6));
    b.add("power_w", "", number(r.baseline->power_w, "", 2));
    b.add("energy_per_work", "", number(r.baseline->energy_per_work, "", 6));
  }
  auto& notes = root.section("notes", "Notes", true);
  for (const auto& note : r.notes) notes.add("note", "", text(note));
  root.add("interrupted", "", output::flag(r.interrupted));
  root.add("failed_fast", "", output::flag(r.failed_fast));
  root.add("restored", "", output::flag(r.restored));
  return root;
}

}  // namespace gpuclk::sweep
