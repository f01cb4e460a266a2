// A finding: one problem a rule found on one or more GPUs, with its evidence, cause and fix.
// Findings are plain data; printers turn them into tables and JSON (src/cli/cmd_doctor.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuclk::rules {

// What a finding costs the user: info (expected, or worth knowing), warning (performance is
// lost and a setting or a repair gets it back), critical (a GPU is lost or its results are at
// risk).
enum class Severity { info = 0, warning = 1, critical = 2 };
std::string_view to_string(Severity s);  // "info", "warning", "critical"

// One value of the evidence: a number with its unit ("sm_clock_median_mhz" = 1410 MHz), or a
// text where the evidence is a setting's value ("value" = "1410/2619 MHz").
struct Evidence {
  std::string key;   // snake_case JSON key, with the unit as suffix where it has one
  std::string unit;  // "MHz", "%", "W", "C", "s", "" for counts
  double value = 0;
  int precision = 0;  // digits after the point when printed
  std::string text;   // non-empty: the evidence is this text, not `value`
};

struct Finding {
  std::string rule;  // the rule's name ("power_capped")
  Severity severity = Severity::warning;
  std::vector<unsigned> gpus;  // GPU indexes concerned, ascending
  std::string summary;         // one line: what is wrong, with the key numbers
  std::vector<Evidence> evidence;
  std::string cause;  // the likely cause
  std::string fix;    // the exact gpuclk or shell command where one exists, else what to do
  std::string docs;   // "docs/doctor.md#power_capped"
};

// The highest severity among `findings` (info when there are none).
Severity worst(const std::vector<Finding>& findings);

// Exit codes of `gpuclk doctor` (docs/doctor.md): 0 nothing above info, 10 a warning, 11 a
// critical finding. They do not collide with the error codes (2 bad argument, 3, 4, 6, 9, 12, 15,
// 255), so a health check can tell "found problems" from "could not look".
inline constexpr int kExitWarning = 10;
inline constexpr int kExitCritical = 11;
int exit_code(const std::vector<Finding>& findings);

}  // namespace gpuclk::rules
