// gpuclk: see every GPU's clocks, measure, fix what a setting can fix, explain the rest.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/context.h"
#include "util/error.h"

namespace {

// `--sim` takes an optional scenario. CLI11 would swallow a following subcommand name as that
// value (`gpuclk --sim clocks`), so a bare --sim becomes --sim=default unless a scenario follows.
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
    }
    args.push_back(arg);
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  using gpuclk::cli::Context;
  Context ctx;
  CLI::App app{"gpuclk: clocks, power and performance of every NVIDIA GPU in the host"};
  app.fallthrough();
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", "gpuclk 0.1.0");
  auto& o = ctx.options;
  app.add_option("-i,--id", o.devices,
                 "GPUs: indexes, UUIDs or PCI bus ids, comma separated (default: all)");
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
  gpuclk::cli::add_serve_command(app, ctx);
  gpuclk::cli::add_govern_command(app, ctx);

  std::set<std::string> names;
  for (const auto* sub : app.get_subcommands({})) names.insert(sub->get_name());
  auto args = normalize_sim_flag(argc, argv, names);
  std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
  try {
    app.parse(args);
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
    std::cout.flush();
    std::cerr << "gpuclk: error: " << e.what() << '\n';
    if (!e.hint().empty()) std::cerr << "gpuclk: " << e.hint() << '\n';
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "gpuclk: internal error: " << e.what() << '\n';
    return static_cast<int>(gpuclk::ExitCode::other);
  }
}
