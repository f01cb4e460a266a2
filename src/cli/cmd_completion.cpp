// Shell completions and man pages generated from the command line's own definition (the CLI::App
// tree command_line.cpp builds), so they name exactly the commands and options that parse:
//   gpuclk completion bash|zsh   the completion script for that shell, on stdout
//   gpuclk manpages DIR          gpuclk.1 and gpuclk-COMMAND.1 for every command, into DIR
// Both are hidden from --help: the build runs them (cmake/Install.cmake) and installs what they
// write, so a new option reaches the man pages and completions without anyone editing them.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bench/dtype.h"
#include "cli/build_config.h"  // GPUCLK_VERSION
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/install_paths.h"
#include "govern/policy.h"
#include "output/command_docs.h"
#include "sweep/workload.h"
#include "util/error.h"
#include "util/text.h"

namespace gpuclk::cli {
namespace {

using output::CommandSpec;
using output::OptionSpec;

// Options that take a value CLI11 cannot tell is optional: command_line.cpp turns a bare --sim
// into --sim=default, so `--sim status` names no scenario.
bool value_is_optional(const std::vector<std::string>& names) {
  for (const auto& n : names) {
    if (n == "--sim") return true;
  }
  return false;
}

// What the completions offer for an option's value, from the lists the commands check values
// against; empty: file names. `-i` completes this node's GPUs when the completion runs.
void add_choices(const std::vector<std::string>& path, OptionSpec& o) {
  const auto has = [&](const char* name) {
    return std::find(o.names.begin(), o.names.end(), name) != o.names.end();
  };
  std::string command;
  for (const auto& p : path) command += (command.empty() ? "" : " ") + p;
  if (has("--format")) {
    o.choices = {"table", "csv", "csv,noheader", "csv,nounits", "csv,noheader,nounits", "json"};
  } else if (has("--sim")) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(install::scenarios_dir(), ec)) {
      if (entry.path().extension() == ".toml") o.choices.push_back(entry.path().stem().string());
    }
    std::sort(o.choices.begin(), o.choices.end());
  } else if (has("--dtype") && command == "bench gemm") {
    for (auto dtype : bench::kAllGemmDtypes) o.choices.emplace_back(bench::to_string(dtype));
  } else if (has("--workload") && (command == "sweep" || command == "sim-job")) {
    o.choices = sweep::workload_names();
  } else if (has("--policy") && command == "govern") {
    o.choices = govern::policy_names();
  } else if (has("-i") || has("--id")) {
    o.gpus = true;
  }
}

// The man pages' EXAMPLES, per command: what people type first (README.md has one per command
// with its output; these are the command lines alone).
std::vector<std::pair<std::string, std::string>> examples_of(const std::string& command) {
  static const std::map<std::string, std::vector<std::pair<std::string, std::string>>> examples = {
      {"",
       {{"gpuclk", "every GPU at a glance, and what is worth fixing (gpuclk status)"},
        {"gpuclk --sim=8xh100 doctor --duration 1m", "the same on a simulated 8x H100 node"},
        {"gpuclk -i 0,1 --format json status", "GPUs 0 and 1 as JSON"}}},
      {"status", {{"gpuclk status", "one row per GPU, then the findings"}}},
      {"info", {{"gpuclk info", "the host and every GPU's inventory and peaks"}}},
      {"topo", {{"gpuclk topo", "the GPU-GPU and CPU affinity matrix"}}},
      {"clocks", {{"gpuclk -i 0 clocks", "GPU 0's clocks, limits and clock event reasons"}}},
      {"query",
       {{"gpuclk query --query-gpu=index,clocks.sm,power.draw --format=csv",
         "as nvidia-smi --query-gpu, for scripts"}}},
      {"occupancy",
       {{"gpuclk occupancy --arch sm_90 --threads 256 --regs 64 --smem-static 16K",
         "blocks and warps per SM, and what limits them"}}},
      {"set",
       {{"gpuclk set --power-limit 600", "every GPU at 600 W (journaled)"},
        {"gpuclk -i 0 set --lock-gpu-clocks 1755", "GPU 0's SM clock locked at 1755 MHz"}}},
      {"reset", {{"gpuclk reset --gpu-clocks", "unlock the SM clocks"}}},
      {"restore",
       {{"gpuclk restore", "every GPU back to its settings before gpuclk's first change"}}},
      {"journal", {{"gpuclk journal --history", "what gpuclk changed, and when"}}},
      {"apply", {{"gpuclk apply /etc/gpuclk/profile.toml", "make every GPU match a profile"}}},
      {"dmon",
       {{"gpuclk dmon -s pucr -d 1", "power, utilization, clocks and reasons every second"}}},
      {"stat",
       {{"gpuclk stat -- python3 train.py", "energy, clocks and a verdict for a command's run"}}},
      {"bench",
       {{"gpuclk bench gemm --dtype bf16", "GEMM throughput against the peak at the clock it ran"},
        {"gpuclk bench p2p", "GPU-GPU and host-GPU bandwidth"}}},
      {"sweep",
       {{"gpuclk -i 0 sweep --sm-clocks 990:1980:90 --workload gemm-bf16 --out sweep/",
         "throughput, power and energy per SM clock, the best points and plots"}}},
      {"sim-job",
       {{"gpuclk --sim sim-job --workload gemm-bf16 --seconds 10", "a simulated job's work"}}},
      {"govern",
       {{"gpuclk govern --policy phase",
         "lower SM clocks where they buy nothing (Ctrl-C restores)"},
        {"gpuclk govern --evaluate", "compare the policies on the simulator"}}},
      {"serve", {{"systemctl enable --now gpuclk-serve", "the node service, as installed"}}},
      {"doctor",
       {{"gpuclk doctor --duration 1m", "watch a minute, then what holds each GPU back"}}},
      {"top", {{"gpuclk top", "every GPU live in the terminal"}}},
      {"ps", {{"gpuclk ps", "every process on every GPU with its job and energy"}}},
      {"fleet",
       {{"gpuclk fleet --prometheus http://prometheus:9090 --range 1h",
         "every GPU of every node over the last hour"}}},
  };
  const auto it = examples.find(command);
  return it == examples.end() ? std::vector<std::pair<std::string, std::string>>{} : it->second;
}

CommandSpec read_command(const CLI::App& app, std::vector<std::string> path) {
  CommandSpec c;
  c.path = std::move(path);
  if (c.path.size() <= 1) examples_of(c.path.empty() ? "" : c.path.front()).swap(c.examples);
  c.description = app.get_description();
  c.footer = app.get_footer();
  for (const auto* opt : app.get_options()) {
    if (opt->get_group().empty()) continue;  // hidden
    if (!opt->nonpositional()) {
      c.positionals.push_back({text::upper(opt->get_name(true, false)), opt->get_description(),
                               opt->get_required(),
                               opt->get_expected_max() >= CLI::detail::expected_max_vector_size});
      continue;
    }
    OptionSpec o;
    for (const auto& s : opt->get_snames()) o.names.push_back("-" + s);
    for (const auto& l : opt->get_lnames()) o.names.push_back("--" + l);
    // As `gpuclk --help` tells them apart (command_line.cpp): a flag has no type, or takes none.
    o.takes_value = !opt->get_type_name().empty() && opt->get_expected_max() != 0;
    o.optional_value = o.takes_value && value_is_optional(o.names);
    o.type = o.takes_value ? opt->get_type_name() : "";
    o.description = opt->get_description();
    if (o.takes_value) add_choices(c.path, o);
    c.options.push_back(std::move(o));
  }
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;  // hidden: completion, manpages
    auto below = c.path;
    below.push_back(sub->get_name());
    c.commands.push_back(read_command(*sub, std::move(below)));
  }
  return c;
}

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) {
    throw Error(ExitCode::other,
                fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)),
                "give a folder you may write to");
  }
}

int run_manpages(Context& ctx, const std::string& dir) {
  ctx.effect("write " + dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw Error(ExitCode::other, fmt::format("cannot create the folder {}", dir),
                ec ? ec.message() : "a file of that name is in the way");
  }
  const auto app = make_command_line(ctx);
  const auto root = read_command(*app, {});
  write_file(std::filesystem::path(dir) / "gpuclk.1", output::main_man_page(root, GPUCLK_VERSION));
  for (const auto& c : root.commands) {
    write_file(std::filesystem::path(dir) / ("gpuclk-" + c.name() + ".1"),
               output::command_man_page(root, c, GPUCLK_VERSION));
  }
  std::cout << fmt::format("wrote {} man pages to {}\n", root.commands.size() + 1, dir);
  return 0;
}

}  // namespace

void add_completion_command(CLI::App& app, Context& ctx) {
  auto shell = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("completion", "shell completion script for bash or zsh");
  sub->group("");  // hidden: the build installs its output
  sub->add_option("shell", *shell, "bash | zsh")->required();
  sub->callback([&ctx, shell] {
    ctx.run = [&ctx, shell] {
      if (*shell != "bash" && *shell != "zsh") {
        throw bad_argument(fmt::format("no completion for the shell '{}'", shell->substr(0, 40)),
                           "give bash or zsh");
      }
      const auto app_tree = make_command_line(ctx);
      const auto root = read_command(*app_tree, {});
      std::cout << (*shell == "bash" ? output::bash_completion(root)
                                     : output::zsh_completion(root));
      return 0;
    };
  });
}

void add_manpages_command(CLI::App& app, Context& ctx) {
  auto dir = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("manpages", "write gpuclk's man pages into a folder");
  sub->group("");  // hidden: the build installs its output
  sub->add_option("dir", *dir, "the folder (created when missing)")->required();
  sub->callback([&ctx, dir] { ctx.run = [&ctx, dir] { return run_manpages(ctx, *dir); }; });
}

}  // namespace gpuclk::cli
