// What the shell completions and man pages say, from a plain description of the command tree
// (CommandSpec): cli/cmd_completion.cpp reads the tree from the command line's own definition
// (CLI11) and calls these, so a new option reaches both without anyone editing them.
#pragma once

#include <string>
#include <vector>

namespace gpuclk::output {

// ---------------------------------------------------------------------------------------------
// The command tree, read from CLI11

struct OptionSpec {
  std::vector<std::string> names;  // "-i", "--id"
  bool takes_value = false;
  bool optional_value = false;  // --sim: bare, or --sim=SCENARIO (normalize_sim_flag)
  std::string type;             // TEXT, INT, ... (the help's label)
  std::string description;
  // What the completions offer for its value: these words, or this node's GPUs (their indexes,
  // asked of `gpuclk query` when the completion runs); neither: file names.
  std::vector<std::string> choices;
  bool gpus = false;
};

struct PositionalSpec {
  std::string name;
  std::string description;
  bool required = false;
  bool repeated = false;
};

struct CommandSpec {
  std::vector<std::string> path;  // {} for gpuclk itself, {"bench", "gemm"}
  std::string description;
  std::string footer;  // without the global options' list (make_command_line)
  std::vector<OptionSpec> options;
  std::vector<PositionalSpec> positionals;
  std::vector<CommandSpec> commands;
  // The man page's EXAMPLES: a command line and what it does.
  std::vector<std::pair<std::string, std::string>> examples;

  std::string name() const { return path.empty() ? "gpuclk" : path.back(); }
  std::string joined(const std::string& separator) const {
    std::string out;
    for (const auto& p : path) out += (out.empty() ? "" : separator) + p;
    return out;
  }
};

// The completion script for bash or zsh: commands, subcommands, options, which options take a
// value (completed as file names).
std::string bash_completion(const CommandSpec& root);
std::string zsh_completion(const CommandSpec& root);

// gpuclk.1 (`root`: every command, the global options, exit status) and gpuclk-COMMAND.1 for one
// of root.commands, in roff (man(7)); `version` goes into each page's header.
std::string main_man_page(const CommandSpec& root, const std::string& version);
std::string command_man_page(const CommandSpec& root, const CommandSpec& command,
                             const std::string& version);

}  // namespace gpuclk::output
