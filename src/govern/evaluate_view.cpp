#include "govern/evaluate_view.h"

#include <filesystem>
#include <string>

namespace gpuclk::govern {
namespace {

namespace fs = std::filesystem;

output::Value pct(double ratio) { return output::number(ratio * 100, "%", 1); }

}  // namespace

output::Node evaluation_tree(const std::vector<ScenarioResult>& results, bool phases) {
  output::Node root;
  auto& list = root.section("scenarios", "", true);
  for (const auto& s : results) {
    auto& node = list.section("scenario", "");
    node.add("scenario", "", output::text(s.scenario));
    node.add("data", "", output::text(s.data));
    auto& rows = node.section("results", "", true);
    for (const auto& r : s.results) {
      auto& row = rows.section("result", "");
      row.add("policy", "", output::text(r.policy));
      row.add("energy_joules", "", output::number(r.energy_joules, "", 3));
      row.add("time_seconds", "", output::number(r.time_seconds, "", 3));
      row.add("energy_saved_ratio", "", output::number(r.energy_saved_ratio, "", 4));
      row.add("slowdown_ratio", "", output::number(r.slowdown_ratio, "", 4));
      if (!phases) continue;
      auto& phase_list = row.section("phases", "", true);
      for (const auto& p : r.phases) {
        auto& ph = phase_list.section("phase", "");
        ph.add("gpu", "", output::integer(p.gpu));
        ph.add("index", "", output::integer(static_cast<long long>(p.index)));
        ph.add("name", "", output::text(p.name));
        ph.add("kind", "", output::text(p.kind));
        ph.add("energy_joules", "", output::number(p.energy_joules, "", 3));
        ph.add("time_seconds", "", output::number(p.time_seconds, "", 3));
        ph.add("mean_sm_clock_mhz", "", output::number(p.mean_sm_mhz, "", 1));
      }
    }
  }
  return root;
}

output::Table evaluation_table(const std::vector<ScenarioResult>& results) {
  output::Table t;
  t.columns = {{"scenario", "Scenario", true},
               {"knee", "Knee", true},
               {"data", "Data", true},
               {"policy", "Policy", true},
               {"energy", "Energy J", false, "J"},
               {"time", "Time s", false, "s"},
               {"saved", "Saved %", false, "%"},
               {"slowdown", "Slowdown %", false, "%"},
               {"oracle_gap", "Gap to oracle pp", false, "pp"},
               {"idle_saved", "Idle-gap saved %", false, "%"},
               {"writes", "Writes"}};
  for (const auto& s : results) {
    const auto* oracle = s.find("oracle");
    for (const auto& r : s.results) {
      t.rows.push_back(
          {output::text(fs::path(s.scenario).stem().string()),
           output::text(std::string(to_string(s.knee))), output::text(s.data),
           output::text(r.policy), output::number(r.energy_joules, "J", 0),
           output::number(r.time_seconds, "s", 2), pct(r.energy_saved_ratio), pct(r.slowdown_ratio),
           oracle
               ? output::number((oracle->energy_saved_ratio - r.energy_saved_ratio) * 100, "pp", 1)
               : output::na(),
           s.results.front().idle_energy_joules > 0 ? pct(r.idle_energy_saved_ratio) : output::na(),
           r.policy == "none" || r.policy == "oracle" ? output::na() : output::integer(r.writes)});
    }
  }
  return t;
}

output::Table phase_table(const std::vector<ScenarioResult>& results) {
  output::Table p;
  p.columns = {{"scenario", "Scenario", true},
               {"policy", "Policy", true},
               {"gpu", "GPU"},
               {"phase", "Phase", true},
               {"kind", "Kind", true},
               {"sm_clock", "SM MHz", false, "MHz"},
               {"energy", "Energy J", false, "J"},
               {"time", "Time s", false, "s"},
               {"saved", "Saved %", false, "%"},
               {"slowdown", "Slowdown %", false, "%"}};
  for (const auto& s : results) {
    const auto& none = s.results.front().phases;
    for (const auto& r : s.results) {
      for (std::size_t i = 0; i < r.phases.size(); ++i) {
        const auto& ph = r.phases[i];
        const auto& ref = none[i];
        p.rows.push_back(
            {output::text(fs::path(s.scenario).stem().string()), output::text(r.policy),
             output::integer(ph.gpu), output::text(ph.name), output::text(ph.kind),
             output::number(ph.mean_sm_mhz, "MHz", 0), output::number(ph.energy_joules, "J", 1),
             output::number(ph.time_seconds, "s", 3),
             ref.energy_joules > 0 ? pct(1 - ph.energy_joules / ref.energy_joules) : output::na(),
             ref.time_seconds > 0 ? pct(ph.time_seconds / ref.time_seconds - 1) : output::na()});
      }
    }
  }
  return p;
}

}  // namespace gpuclk::govern
