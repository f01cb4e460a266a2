#include "cli/command_line.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <utility>

#include "cli/build_config.h"  // GPUCLK_VERSION
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/install_paths.h"
#include "util/error.h"
#include "util/parse.h"
#include "util/text.h"

namespace gpuclk::cli {
namespace {

// True when `word` names a scenario: a file, or a name in the simulator's scenarios folder.
bool is_scenario(const std::string& word) {
  std::error_code ec;
  const auto dir = install::scenarios_dir();
  return std::filesystem::exists(word, ec) || std::filesystem::exists(dir / (word + ".toml"), ec);
}

// A scenario named with --sim: not empty (CLI11 took the next word, `gpuclk --sim='' status`
// ran scenario 'status'), and a name or path the file system can hold (5000 characters were an
// internal error, exit 255).
void check_scenario_word(const std::string& word) {
  const char* hint =
      "give --sim alone for the default node, or --sim=SCENARIO: a scenario's name (default, "
      "misconfigured, …) or a path to a .toml file";
  if (word.empty()) throw bad_argument("--sim='': no scenario named", hint);
  std::size_t longest = 0, start = 0;
  while (start <= word.size()) {
    const auto slash = std::min(word.find('/', start), word.size());
    longest = std::max(longest, slash - start);
    start = slash + 1;
  }
  if (word.size() > 4095 || longest > 255) {
    throw bad_argument(fmt::format("--sim '{}': not a scenario name or path (at most 255 "
                                   "characters a name, 4095 in all)",
                                   parse::quote(word)),
                       hint);
  }
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
    if (arg.rfind("--sim=", 0) == 0) check_scenario_word(arg.substr(6));
    if (arg == "--sim") {
      bool value_follows = i + 1 < argc && argv[i + 1][0] != '-' && !subcommands.count(argv[i + 1]);
      if (!value_follows) arg = "--sim=default";
      if (value_follows) check_scenario_word(argv[i + 1]);
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

// Options users bring from nvidia-smi or guess from the output's words, and what gpuclk calls
// them (edit distance alone does not get from --sm-clocks to --lock-gpu-clocks).
constexpr std::pair<std::string_view, std::string_view> kOptionSynonyms[] = {
    {"--sm-clocks", "--lock-gpu-clocks"},
    {"--gpu-clocks", "--lock-gpu-clocks"},
    {"--lgc", "--lock-gpu-clocks"},
    {"-lgc", "--lock-gpu-clocks"},
    {"--mem-clocks", "--lock-memory-clocks"},
    {"--memory-clocks", "--lock-memory-clocks"},
    {"--lmc", "--lock-memory-clocks"},
    {"-lmc", "--lock-memory-clocks"},
    {"-pl", "--power-limit"},
    {"-ac", "--app-clocks"},
    {"-pm", "--persistence"},
    {"--persistence-mode", "--persistence"}};

// The option of `command` that `word` probably meant, or "".
std::string near_option(const std::string& word, const CLI::App& command) {
  std::set<std::string> names;
  for (const auto* opt : command.get_options()) {
    for (const auto& n : opt->get_lnames()) names.insert("--" + n);
  }
  for (const auto& [synonym, name] : kOptionSynonyms) {
    if (word == synonym && names.count(std::string(name))) return std::string(name);
  }
  std::string best;
  std::size_t best_distance = 3;  // at most two edits
  for (const auto& n : names) {
    const auto d = text::edit_distance(text::lower(word), n);
    if (d < best_distance) best = n, best_distance = d;
  }
  return best;
}

// By type, not get_name(): CLI11 names some errors after the command that raised them.
template <class T>
bool is_a(const CLI::ParseError& e) {
  return dynamic_cast<const T*>(&e) != nullptr;
}

// CLI11's parse errors in gpuclk's words: "gpuclk: error: WHAT" and a hint, exit 2.
Error parse_error(const CLI::ParseError& e, const CLI::App& app,
                  const std::vector<std::string>& argv) {
  const auto chosen = app.get_subcommands();
  const CLI::App& command = chosen.empty() ? app : *chosen.front();
  const std::string usage =
      chosen.empty() ? std::string("`gpuclk --help` lists the commands and global options")
                     : fmt::format("`gpuclk {} --help` lists its options", command.get_name());
  std::string what = e.what();
  if (is_a<CLI::ExtrasError>(e)) {
    // "The following arguments were not expected: --sm-clocks 99999": the first option, else
    // the first word.
    std::vector<std::string> words;
    const auto colon = what.find(": ");
    for (const auto& w : text::split(what.substr(colon == std::string::npos ? 0 : colon + 2), ' '))
      if (!w.empty()) words.push_back(w);
    std::string first = words.empty() ? what : words.front();
    for (const auto& w : words) {
      if (w.rfind('-', 0) == 0) {
        first = w;
        break;
      }
    }
    if (first.rfind('-', 0) == 0) {
      const auto name = first.substr(0, first.find('='));
      const auto near = near_option(name, command);
      return bad_argument(fmt::format("unknown option {}{}", name,
                                      chosen.empty() ? "" : " for " + command.get_name()),
                          near.empty() ? usage : fmt::format("did you mean {}? {}", near, usage));
    }
    return bad_argument(fmt::format("unexpected argument '{}'", first.substr(0, 80)), usage);
  }
  if (is_a<CLI::ConversionError>(e)) {
    // "Could not convert: --count = abc"
    const auto colon = what.find(": ");
    const auto equals = what.find(" = ");
    if (colon != std::string::npos && equals != std::string::npos && equals > colon) {
      return bad_argument(fmt::format("bad value '{}' for {}", what.substr(equals + 3, 80),
                                      what.substr(colon + 2, equals - colon - 2)),
                          "give a number; " + usage);
    }
  }
  if (is_a<CLI::RequiredError>(e)) {
    // "profile is required"
    const auto end = what.find(" is required");
    const auto name = end == std::string::npos ? what : what.substr(0, end);
    return bad_argument(fmt::format("{} needs {}", command.get_name(),
                                    name.rfind('-', 0) == 0 ? name : text::upper(name)),
                        usage);
  }
  if (is_a<CLI::ArgumentMismatch>(e)) {
    // "At Most 1 required but received 2": an option given twice; say which.
    std::map<std::string, int> seen;
    for (const auto& arg : argv) {
      if (arg == "--") break;
      if (arg.rfind('-', 0) == 0 && ++seen[arg.substr(0, arg.find('='))] == 2) {
        return bad_argument(fmt::format("{} given more than once", arg.substr(0, arg.find('='))),
                            "give each option once; " + usage);
      }
    }
  }
  return bad_argument(what, usage);
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

namespace {

struct Command {
  const char* name;
  void (*add)(CLI::App&, Context&);
};
// In the order `gpuclk --help` lists them. The last two are hidden (cmd_completion.cpp): the
// build writes the shell completions and man pages with them.
constexpr Command kCommands[] = {{"status", add_status_command},
                                 {"info", add_info_command},
                                 {"topo", add_topo_command},
                                 {"clocks", add_clocks_command},
                                 {"query", add_query_command},
                                 {"occupancy", add_occupancy_command},
                                 {"set", add_set_command},
                                 {"reset", add_reset_command},
                                 {"restore", add_restore_command},
                                 {"journal", add_journal_command},
                                 {"apply", add_apply_command},
                                 {"dmon", add_dmon_command},
                                 {"stat", add_stat_command},
                                 {"bench", add_bench_command},
                                 {"sweep", add_sweep_command},
                                 {"sim-job", add_sim_job_command},
                                 {"govern", add_govern_command},
                                 {"serve", add_serve_command},
                                 {"doctor", add_doctor_command},
                                 {"top", add_top_command},
                                 {"ps", add_ps_command},
                                 {"fleet", add_fleet_command},
                                 {"completion", add_completion_command},
                                 {"manpages", add_manpages_command}};

// The command the line names: its first word that is a command's name, or null.
const Command* named_command(const std::vector<std::string>& argv) {
  for (const auto& arg : argv) {
    if (arg == "--") break;
    for (const auto& c : kCommands) {
      if (arg == c.name) return &c;
    }
  }
  return nullptr;
}

// The parser with the global options and `only` (every command when null). Building all 22
// commands' options is most of gpuclk's own start-up (~2 M of its ~3 M instructions before
// main's work, callgrind), which is most of what a command answered by the service costs.
// `globals_in_help`: each command's help (its footer) lists the global options too.
std::unique_ptr<CLI::App> make_parser(Context& ctx, const Command* only, CLI::Option*& id_option,
                                      bool globals_in_help = true) {
  auto app = std::make_unique<CLI::App>(
      "gpuclk: clocks, power and performance of every NVIDIA GPU in the host", "gpuclk");
  app->fallthrough();
  app->require_subcommand(0, 1);
  app->set_version_flag("--version", "gpuclk " GPUCLK_VERSION);
  auto& o = ctx.options;
  id_option = app->add_option(
      "-i,--id", o.devices, "GPUs: indexes, UUIDs or PCI bus ids, comma separated (default: all)");
  app->add_option("--format", o.format, "table | csv[,noheader][,nounits] | json");
  app->add_option("--nvml-lib", o.nvml_lib,
                  "NVML library to load (default: libnvidia-ml.so.1; env GPUCLK_NVML_LIB)");
  app->add_option("--sim", o.sim,
                  "run on the simulated node: --sim, --sim=SCENARIO (name or .toml path)");
  app->add_flag("--read-only", o.read_only,
                "refuse every change to a GPU (env GPUCLK_READ_ONLY=1)");
  app->add_option("--state-dir", o.state_dir,
                  "journal directory (default /var/lib/gpuclk; env GPUCLK_STATE_DIR)");
  app->add_option("--socket", o.socket,
                  "the service (gpuclk serve) to ask (default: /run/gpuclk/gpuclk.sock as root, "
                  "else $XDG_RUNTIME_DIR/gpuclk.sock; env GPUCLK_SOCKET)");
  app->add_flag("--direct", o.direct, "read the GPUs through NVML even when a service answers");
  for (const auto& c : kCommands) {
    if (!only || only == &c) c.add(*app, ctx);
  }
  if (globals_in_help) show_global_options_in_subcommand_help(*app);
  return app;
}

}  // namespace

std::unique_ptr<CLI::App> make_command_line(Context& ctx) {
  CLI::Option* id_option = nullptr;
  return make_parser(ctx, nullptr, id_option, false);
}

int run_command_line(Context& ctx, const std::vector<std::string>& given) {
  // `gpuclk help` and `gpuclk help COMMAND`, as git and most tools take them.
  std::vector<std::string> argv = given;
  if (!argv.empty() && argv.front() == "help") {
    argv.erase(argv.begin());
    argv.emplace_back("--help");
  }
  std::set<std::string> names;
  for (const auto& c : kCommands) names.insert(c.name);
  // Only the named command is built, unless the line does not parse with it alone (a global
  // option's value that happens to be a command's name): then everything, for the same error
  // or result as always.
  const Command* only = named_command(argv);
  const GlobalOptions defaults = ctx.options;
  CLI::Option* id_option = nullptr;
  auto app = make_parser(ctx, only, id_option);
  try {
    auto args = normalize_sim_flag(argv, names);
    std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
    try {
      app->parse(args);
    } catch (const CLI::CallForHelp&) {
      throw;
    } catch (const CLI::CallForVersion&) {
      throw;
    } catch (const CLI::ParseError&) {
      if (!only) throw;
      only = nullptr;
      ctx.options = defaults;
      ctx.run = nullptr;
      app = make_parser(ctx, nullptr, id_option);
      args = normalize_sim_flag(argv, names);
      std::reverse(args.begin(), args.end());
      app->parse(args);
    }
    ctx.options.devices_given = id_option->count() > 0;
  } catch (const gpuclk::Error& e) {
    return report(e);
  } catch (const CLI::ExtrasError& e) {
    // `gpuclk stauts`: a word where a command should be.
    const auto rest = app->remaining();
    if (app->get_subcommands().empty() && !rest.empty() && rest.front()[0] != '-') {
      const auto near = near_subcommand(rest.front(), names);
      if (!near.empty()) return report(unknown_command(rest.front(), near));
    }
    return report(parse_error(e, *app, argv));
  } catch (const CLI::CallForHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app->exit(e);
  } catch (const CLI::Success& e) {  // --help-all and the like
    return app->exit(e);
  } catch (const CLI::RuntimeError& e) {
    return app->exit(e);
  } catch (const CLI::ParseError& e) {
    return report(parse_error(e, *app, argv));
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
