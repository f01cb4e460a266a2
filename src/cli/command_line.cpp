#include "cli/command_line.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <limits>

#include "util/error.h"
#include "util/text.h"

namespace gpuclk::cli {

void show_global_options_in_subcommand_help(CLI::App& app) {
  std::string globals = "Global options (before or after the command):\n";
  for (const auto* opt : app.get_options()) {
    const std::string name = opt->get_name(false, true);
    if (name == "-h,--help" || name == "--version") continue;
    const std::string type = opt->get_type_name();
    const bool takes_value = !type.empty() && opt->get_expected_max() != 0;
    const std::string spelled = takes_value ? fmt::format("{} {}", name, type) : name;
    globals += fmt::format("  {:<26} {}\n", spelled, opt->get_description());
  }
  globals.pop_back();  // the help adds the last newline
  for (auto* sub : app.get_subcommands({})) {
    const std::string footer = sub->get_footer();
    sub->footer(footer.empty() ? globals : fmt::format("{}\n\n{}", footer, globals));
  }
}

std::string near_subcommand(const std::string& word, const std::set<std::string>& names) {
  const std::size_t allowed = word.size() <= 3 ? 1 : 2;
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const auto& name : names) {
    const auto d = text::edit_distance(text::lower(word), name);
    // On a tie, the name closest in length ("stauts": status, not stat).
    const auto length_gap = [&](const std::string& n) {
      return n.size() > word.size() ? n.size() - word.size() : word.size() - n.size();
    };
    if (d < best_distance || (d == best_distance && length_gap(name) < length_gap(best))) {
      best = name;
      best_distance = d;
    }
  }
  return best_distance <= allowed ? best : std::string();
}

Error unknown_command(const std::string& word, const std::string& near) {
  return bad_argument(
      fmt::format("unknown command '{}' (did you mean {}?)", word.substr(0, 80), near),
      "`gpuclk --help` lists the commands");
}

}  // namespace gpuclk::cli
