#include "sweep/report.h"

#include <fmt/format.h>

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

}  // namespace

std::string energy_unit(const WorkUnit& unit) { return "J/" + unit.name; }

void find_best(Report& report) {
  report.baseline = baseline_of(report.points);
  report.best = best_points(curve_of(report.points), report.baseline, report.max_slowdown);
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
  return t;
}

output::Table best_table(const Report& r) {
  output::Table t;
  t.columns = {{"best", "Best", true},
               {std::string(key_of(r.axis)), r.axis == Axis::sm_clock ? "Lock MHz" : "Limit W"},
               {"rate", "Rate " + r.unit.rate_unit(), false, r.unit.rate_unit()},
               {"power_w", "Power W"},
               {"energy_per_work", "Energy " + energy_unit(r.unit), false, energy_unit(r.unit)},
               {"rate_vs_baseline", "Rate vs base %"},
               {"energy_vs_baseline", "Energy vs base %"}};
  for (const auto& b : r.best) {
    t.rows.push_back(
        {text(b.kind),
         number(b.point.requested, std::string(unit_of(r.axis)), r.axis == Axis::sm_clock ? 0 : 1),
         number(b.point.rate, r.unit.rate_unit(), rate_precision(b.point.rate)),
         number(b.point.power_w, "W", 1), number(b.point.energy_per_work, energy_unit(r.unit), 4),
         number(b.rate_vs_baseline * 100, "%", 1), number(b.energy_vs_baseline * 100, "%", 1)});
  }
  return t;
}

output::Node report_tree(const Report& r) {
  output::Node root;
  root.add("workload", "Workload", text(r.workload));
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
  auto& best = root.section("best", "Best");
  for (const auto& b : r.best) {
    auto& n = best.section(b.kind, "");
    n.add(std::string(key_of(r.axis)), "",
          number(b.point.requested, "", r.axis == Axis::sm_clock ? 0 : 1));
    n.add("rate", "", number(b.point.rate, "", 6));
    n.add("power_w", "", number(b.point.power_w, "", 2));
    n.add("energy_per_work", "", number(b.point.energy_per_work, "", 6));
    n.add("edp", "", number(b.point.edp(), "", 9));
    n.add("rate_vs_baseline", "", number(b.rate_vs_baseline, "", 4));
    n.add("energy_vs_baseline", "", number(b.energy_vs_baseline, "", 4));
  }
  root.add("max_slowdown", "", number(r.max_slowdown, "", 4));
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
