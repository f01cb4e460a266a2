// Placeholder until src/cli/cmd_occupancy.cpp lands (issue 6); keeps the command list complete.
#include "cli/commands.h"

namespace gpuclk::cli {
void add_occupancy_command(CLI::App&, Context&) {}
}  // namespace gpuclk::cli
