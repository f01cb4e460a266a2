#include "views/findings.h"

#include <ostream>

namespace gpuclk::views {

output::Node findings_node(const std::vector<rules::Finding>& findings) {
  output::Node list{"findings", "Findings", {}, {}, true};
  for (const auto& f : findings) {
    auto& n = list.section("finding", "");
    n.add("rule", "Rule", output::text(f.rule));
    n.add("severity", "Severity", output::text(std::string(rules::to_string(f.severity))));
    auto& gpus = n.section("gpus", "GPUs", true);
    for (auto g : f.gpus) gpus.add("gpu", "", output::integer(g));
    n.add("summary", "Summary", output::text(f.summary));
    auto& evidence = n.section("evidence", "Evidence");
    for (const auto& e : f.evidence) {
      evidence.add(
          e.key, e.key,
          e.text.empty() ? output::number(e.value, e.unit, e.precision) : output::text(e.text));
    }
    n.add("cause", "Cause", output::text(f.cause));
    n.add("fix", "Fix", output::text(f.fix));
    n.add("docs", "Docs", output::text(f.docs));
  }
  return list;
}

void print_finding_lines(std::ostream& out, const std::vector<rules::Finding>& findings,
                         bool details) {
  for (const auto& f : findings) {
    const char* tag = f.severity == rules::Severity::critical  ? "CRITICAL: "
                      : f.severity == rules::Severity::warning ? "warning: "
                                                               : "note: ";
    out << tag << f.summary;
    if (details) out << "  [" << f.rule << "]";
    out << '\n';
    if (details) {
      std::string evidence;
      for (const auto& e : f.evidence) {
        evidence += (evidence.empty() ? "" : ", ") + e.key + " " +
                    (e.text.empty() ? output::to_text(output::number(e.value, e.unit, e.precision))
                                    : e.text);
      }
      if (!evidence.empty()) out << "    evidence: " << evidence << '\n';
      out << "    cause: " << f.cause << '\n';
    }
    out << "    -> " << f.fix << '\n';
    if (details) out << "    see " << f.docs << '\n';
  }
}

}  // namespace gpuclk::views
