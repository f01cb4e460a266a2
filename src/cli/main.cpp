// gpuclk: see every GPU's clocks, measure, fix what a setting can fix, explain the rest.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "util/error.h"

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
std::vector<std::string> normalize_sim_flag(int argc, char** argv,
                                            const std::set<std::string>& subcommands) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      for (; i < argc; ++i) args.emplace_back(argv[i]);
      break;
    }
    if (arg == "--sim") {
      bool value_follows = i + 1 < argc && argv[i + 1][0] != '-' && !subcommands.count(argv[i + 1]);
      if (!value_follows) arg = "--sim=default";
      if (value_follows && !is_scenario(argv[i + 1])) {
        const auto near = gpuclk::cli::near_subcommand(argv[i + 1], subcommands);
        if (!near.empty()) throw gpuclk::cli::unknown_command(argv[i + 1], near);
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

int main(int argc, char** argv) {
  using gpuclk::cli::Context;
  Context ctx;
  // main's return ends the process: ctx's NVML need not be shut down (2.9 ms on an H100).
  struct Exiting {
    Context& ctx;
    ~Exiting() { ctx.exiting(); }
  } exiting{ctx};
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

  gpuclk::cli::add_status_command(app, ctx);
  gpuclk::cli::add_info_command(app, ctx);
  gpuclk::cli::add_topo_command(app, ctx);
  gpuclk::cli::add_clocks_command(app, ctx);
  gpuclk::cli::add_query_command(app, ctx);
  gpuclk::cli::add_occupancy_command(app, ctx);
  gpuclk::cli::add_set_command(app, ctx);
  gpuclk::cli::add_reset_command(app, ctx);
  gpuclk::cli::add_restore_command(app, ctx);
  gpuclk::cli::add_journal_command(app, ctx);
  gpuclk::cli::add_apply_command(app, ctx);
  gpuclk::cli::add_dmon_command(app, ctx);
  gpuclk::cli::add_stat_command(app, ctx);
  gpuclk::cli::add_bench_command(app, ctx);
  gpuclk::cli::add_sweep_command(app, ctx);
  gpuclk::cli::add_sim_job_command(app, ctx);
  gpuclk::cli::add_govern_command(app, ctx);
  gpuclk::cli::add_serve_command(app, ctx);
  gpuclk::cli::add_doctor_command(app, ctx);
  gpuclk::cli::add_top_command(app, ctx);
  gpuclk::cli::add_fleet_command(app, ctx);

  gpuclk::cli::show_global_options_in_subcommand_help(app);

  std::set<std::string> names;
  for (const auto* sub : app.get_subcommands({})) names.insert(sub->get_name());
  try {
    auto args = normalize_sim_flag(argc, argv, names);
    std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
    app.parse(args);
    o.devices_given = id_option->count() > 0;
  } catch (const gpuclk::Error& e) {
    return report(e);
  } catch (const CLI::ExtrasError& e) {
    // `gpuclk stauts`: a word where a command should be.
    const auto rest = app.remaining();
    if (app.get_subcommands().empty() && !rest.empty() && rest.front()[0] != '-') {
      const auto near = gpuclk::cli::near_subcommand(rest.front(), names);
      if (!near.empty()) return report(gpuclk::cli::unknown_command(rest.front(), near));
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
    int code = ctx.run ? ctx.run() : gpuclk::cli::run_status(ctx);
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
