// The command line around the subcommands: the global options in every subcommand's help, and
// "unknown command" with the subcommand a typo probably meant.
#pragma once

#include <set>
#include <string>

#include "util/error.h"

namespace CLI {
class App;
}

namespace gpuclk::cli {

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
