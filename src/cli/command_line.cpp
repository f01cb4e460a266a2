#include "cli/command_line.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>

#include "cli/commands.h"
#include "cli/context.h"
#include "util/error.h"
#include "util/text.h"

namespace gpuclk::cli {
namespace {

// True when `word` names a scenario: a file, or a name in the scenarios folder beside gpuclk.
bool is_scenario(const std::string& word) {
  std::error_code ec;
  const auto dir = std::filesystem::path(gpuclk::cli::Context::executable_dir()) / "scenarios";
  return std::filesystem::exists(word, ec) || std::filesystem::exists(dir / (word + ".toml"), ec);
}

// `--sim` takes an optional scenario. CLI11 would swallow a following subcommand name as that
// value (`gpuclk --sim clocks`), so a bare --sim becomes --sim=default unless a scenario follows;
// a word that is no scenario but a near-miss of a command (`--sim stauts`) is a typo.
std::vector<std::string> normalize_sim_flag(const std::vector<std::string>& argv,
                                            const std::set<std::string>& subcommands) {
  std::vector<std::string> args;
  const std::size_t argc = argv.size();
  for (std::size_t i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      for (; i < argc; ++i) args.push_back(argv[i]);
      break;
    }
    if (arg == "--sim") {
      bool value_follows = i + 1 < argc && argv[i + 1][0] != '-' && !subcommands.count(argv[i + 1]);
      if (!value_follows) arg = "--sim=default";
      if (value_follows && !is_scenario(argv[i + 1])) {
        const auto near = near_subcommand(argv[i + 1], subcommands);
        if (!near.empty()) throw unknown_command(argv[i + 1], near);
      }
    }
    args.push_back(arg);
  }
  return args;
}

int report(const gpuclk::Error& e) {
  std::cout.flush();
  std::cerr << "gpuclk: error: " << e.what() << '\n';
  if (!e.hint().empty()) std::cerr << "gpuclk: " << e.hint() << '\n';
  return static_cast<int>(e.code());
}

}  // namespace

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

int run_command_line(Context& ctx, const std::vector<std::string>& argv) {
  CLI::App app{"gpuclk: clocks, power and performance of every NVIDIA GPU in the host", "gpuclk"};
  app.fallthrough();
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", "gpuclk 0.1.0");
  auto& o = ctx.options;
  auto* id_option = app.add_option(
      "-i,--id", o.devices, "GPUs: indexes, UUIDs or PCI bus ids, comma separated (default: all)");
  app.add_option("--format", o.format, "table | csv[,noheader][,nounits] | json");
  app.add_option("--nvml-lib", o.nvml_lib,
                 "NVML library to load (default: libnvidia-ml.so.1; env GPUCLK_NVML_LIB)");
  app.add_option("--sim", o.sim,
                 "run on the simulated node: --sim, --sim=SCENARIO (name or .toml path)");
  app.add_flag("--read-only", o.read_only, "refuse every change to a GPU (env GPUCLK_READ_ONLY=1)");
  app.add_option("--state-dir", o.state_dir,
                 "journal directory (default /var/lib/gpuclk; env GPUCLK_STATE_DIR)");
  app.add_option("--socket", o.socket,
                 "the service (gpuclk serve) to ask (default: /run/gpuclk/gpuclk.sock as root, "
                 "else $XDG_RUNTIME_DIR/gpuclk.sock; env GPUCLK_SOCKET)");
  app.add_flag("--direct", o.direct, "read the GPUs through NVML even when a service answers");

  add_status_command(app, ctx);
  add_info_command(app, ctx);
  add_topo_command(app, ctx);
  add_clocks_command(app, ctx);
  add_query_command(app, ctx);
  add_occupancy_command(app, ctx);
  add_set_command(app, ctx);
  add_reset_command(app, ctx);
  add_restore_command(app, ctx);
  add_journal_command(app, ctx);
  add_apply_command(app, ctx);
  add_dmon_command(app, ctx);
  add_stat_command(app, ctx);
  add_bench_command(app, ctx);
  add_sweep_command(app, ctx);
  add_sim_job_command(app, ctx);
  add_govern_command(app, ctx);
  add_serve_command(app, ctx);
  add_doctor_command(app, ctx);
  add_top_command(app, ctx);
  add_fleet_command(app, ctx);

  show_global_options_in_subcommand_help(app);

  std::set<std::string> names;
  for (const auto* sub : app.get_subcommands({})) names.insert(sub->get_name());
  try {
    auto args = normalize_sim_flag(argv, names);
    std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
    app.parse(args);
    o.devices_given = id_option->count() > 0;
  } catch (const gpuclk::Error& e) {
    return report(e);
  } catch (const CLI::ExtrasError& e) {
    // `gpuclk stauts`: a word where a command should be.
    const auto rest = app.remaining();
    if (app.get_subcommands().empty() && !rest.empty() && rest.front()[0] != '-') {
      const auto near = near_subcommand(rest.front(), names);
      if (!near.empty()) return report(unknown_command(rest.front(), near));
    }
    app.exit(e);
    return static_cast<int>(gpuclk::ExitCode::bad_argument);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return static_cast<int>(gpuclk::ExitCode::bad_argument);
  }

  try {
    int code = ctx.run ? ctx.run() : run_status(ctx);
    std::fflush(stdout);
    return code;
  } catch (const gpuclk::Error& e) {
    return report(e);
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "gpuclk: internal error: " << e.what() << '\n';
    return static_cast<int>(gpuclk::ExitCode::other);
  }
}

}  // namespace gpuclk::cli
