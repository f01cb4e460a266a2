// The command line: parsing it into a subcommand and running that, the global options in every
// subcommand's help, and "unknown command" with the subcommand a typo probably meant.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "util/error.h"

namespace CLI {
class App;
}

namespace gpuclk::cli {

class Context;

// What main() does: parses `args` (argv without the program name) into ctx.options and a
// subcommand, runs it (`status` when none is given), prints an error and its hint on stderr.
// Returns the exit code (README: 0, 2, 3, 4, 6, 9, 10, 11, 12, 15, 16, 255; `stat -- CMD` the
// command's own). The fuzz target tests/fuzz/fuzz_argv.cpp calls it with ctx.before_effect set.
int run_command_line(Context& ctx, const std::vector<std::string>& args);

// The whole parser: the global options and every command (hidden ones too), each command's help
// without the global options appended. What the generators of completions and man pages walk
// (cmd_completion.cpp); parsing with it is run_command_line's job.
std::unique_ptr<CLI::App> make_command_line(Context& ctx);

// Appends the global options (those `app` itself takes: -i, --format, --sim, --read-only, …) to
// the help of every subcommand, so `gpuclk set --help` shows them too. Call after every
// subcommand is added.
void show_global_options_in_subcommand_help(CLI::App& app);

// The subcommand name `word` is probably a typo of ("stauts" -> "status"), or "" when none is
// within two edits (one for words of three letters or fewer).
std::string near_subcommand(const std::string& word, const std::set<std::string>& names);

// The bad_argument error (exit 2) "unknown command 'WORD' (did you mean NEAR?)".
Error unknown_command(const std::string& word, const std::string& near);

}  // namespace gpuclk::cli
