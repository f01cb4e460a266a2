// Every subcommand's registration function; command_line.cpp's kCommands lists them in `gpuclk
// --help`'s order and calls only the one a command line names.
#pragma once

namespace CLI {
class App;
}

namespace gpuclk::cli {

class Context;

void add_status_command(CLI::App& app, Context& ctx);
void add_info_command(CLI::App& app, Context& ctx);
void add_topo_command(CLI::App& app, Context& ctx);
void add_clocks_command(CLI::App& app, Context& ctx);
void add_query_command(CLI::App& app, Context& ctx);
void add_occupancy_command(CLI::App& app, Context& ctx);
void add_set_command(CLI::App& app, Context& ctx);
void add_reset_command(CLI::App& app, Context& ctx);
void add_restore_command(CLI::App& app, Context& ctx);
void add_journal_command(CLI::App& app, Context& ctx);
void add_apply_command(CLI::App& app, Context& ctx);
void add_dmon_command(CLI::App& app, Context& ctx);
void add_stat_command(CLI::App& app, Context& ctx);
void add_bench_command(CLI::App& app, Context& ctx);
void add_sweep_command(CLI::App& app, Context& ctx);
void add_sim_job_command(CLI::App& app, Context& ctx);
void add_govern_command(CLI::App& app, Context& ctx);
void add_serve_command(CLI::App& app, Context& ctx);
void add_doctor_command(CLI::App& app, Context& ctx);
void add_top_command(CLI::App& app, Context& ctx);
void add_ps_command(CLI::App& app, Context& ctx);
void add_fleet_command(CLI::App& app, Context& ctx);
void add_completion_command(CLI::App& app, Context& ctx);  // hidden
void add_manpages_command(CLI::App& app, Context& ctx);    // hidden

// Runs the default view (`gpuclk` with no subcommand = `gpuclk status`).
int run_status(Context& ctx);

}  // namespace gpuclk::cli
