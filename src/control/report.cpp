#include "control/report.h"

#include <algorithm>

namespace gpuclk::control {

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::unchanged:
      return "unchanged";
    case Outcome::would_change:
      return "would change";
    case Outcome::changed:
      return "changed";
    case Outcome::failed:
      return "FAILED";
    case Outcome::not_attempted:
      return "not attempted";
    case Outcome::rolled_back:
      return "rolled back";
    case Outcome::rollback_failed:
      return "ROLLBACK FAILED";
  }
  return "?";
}

std::size_t ChangeReport::count(Outcome o) const {
  return static_cast<std::size_t>(std::count_if(settings.begin(), settings.end(),
                                                [&](const auto& s) { return s.outcome == o; }));
}

void ChangeReport::append(const ChangeReport& more) {
  settings.insert(settings.end(), more.settings.begin(), more.settings.end());
  notes.insert(notes.end(), more.notes.begin(), more.notes.end());
  if (exit == ExitCode::ok && more.exit != ExitCode::ok) {
    exit = more.exit;
    error = more.error;
    hint = more.hint;
  }
}

}  // namespace gpuclk::control
