// `gpuclk set` and `gpuclk reset`: change persistence mode, application clocks, locked clocks
// and power limits on every selected GPU alike, as one journaled transaction (cmd_control.h).
#include <CLI/CLI.hpp>

#include "cli/cmd_control.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "control/request.h"

namespace gpuclk::cli {
namespace {

struct SetOptions {
  std::string persistence, app_clocks, lock_gpu_clocks, lock_memory_clocks, power_limit;
  bool all = false, dry_run = false, snap = false;
};

struct ResetOptions {
  bool app_clocks = false, gpu_clocks = false, memory_clocks = false, power_limit = false;
  bool all = false, dry_run = false;
};

void check_all_flag(Context& ctx, bool all) {
  if (all && ctx.selection_given()) {
    throw bad_argument("give -i IDS or --all, not both");
  }
}

std::vector<DeviceRequest> same_for_each(Context& ctx, const control::Request& request) {
  std::vector<DeviceRequest> out;
  for (auto* d : ctx.selected()) out.push_back({d, request});
  return out;
}

int run_set(Context& ctx, const SetOptions& o) {
  check_all_flag(ctx, o.all);
  control::Request r;
  for (const auto& [setting, text] :
       {std::pair{control::Setting::persistence_mode, &o.persistence},
        std::pair{control::Setting::application_clocks, &o.app_clocks},
        std::pair{control::Setting::locked_gpu_clocks, &o.lock_gpu_clocks},
        std::pair{control::Setting::locked_memory_clocks, &o.lock_memory_clocks},
        std::pair{control::Setting::power_limit, &o.power_limit}}) {
    if (!text->empty()) control::parse_setting(r, setting, *text, control::option_of(setting));
  }
  if (r.empty()) {
    throw bad_argument("nothing to set",
                       "give one or more of --persistence, --app-clocks, --lock-gpu-clocks, "
                       "--lock-memory-clocks, --power-limit (gpuclk set --help)");
  }
  const std::string nothing = "nothing to change: the GPUs already have these settings";
  // Not root: a service that takes delegated settings applies it (docs/serve.md), with the
  // values parsed here (their typed form).
  serve::SetRequest delegated;
  delegated.settings = nlohmann::json::parse(control::request_to_json(r));
  delegated.snap = o.snap;
  delegated.dry_run = o.dry_run;
  if (auto rc = run_delegated(ctx, delegated, nothing, o.dry_run)) return *rc;
  control::ControlSession session(session_options(ctx, "set", o.dry_run), o.dry_run);
  return run_change(ctx, session, same_for_each(ctx, r), o.snap, nothing);
}

int run_reset(Context& ctx, const ResetOptions& o) {
  check_all_flag(ctx, o.all);
  const bool every = !o.app_clocks && !o.gpu_clocks && !o.memory_clocks && !o.power_limit;
  const std::string nothing = "nothing to reset: the GPUs already run the driver's defaults";
  // Not root: the service resets within the policy (memory locks only when named: it cannot
  // tell here which GPUs have none to reset).
  serve::SetRequest delegated;
  auto& settings = delegated.settings;
  if (every || o.app_clocks) settings["application_clocks"] = "default";
  if (every || o.gpu_clocks) settings["locked_gpu_clocks"] = "default";
  if (o.memory_clocks) settings["locked_memory_clocks"] = "default";
  if (every || o.power_limit) settings["power_limit"] = "default";
  delegated.dry_run = o.dry_run;
  if (auto rc = run_delegated(ctx, delegated, nothing, o.dry_run)) return *rc;
  control::ControlSession session(session_options(ctx, "reset", o.dry_run), o.dry_run);
  std::vector<DeviceRequest> requests;
  for (auto* d : ctx.selected()) {
    control::Request r;
    if (every || o.app_clocks)
      r.application_clocks = control::Change<control::ApplicationClocks>::driver_default();
    if (every || o.gpu_clocks)
      r.locked_gpu_clocks = control::Change<control::ClockLock>::driver_default();
    // Resetting everything skips memory locks where the GPU has none to reset (Hopper).
    if (o.memory_clocks || (every && !control::facts_of(*d).hopper)) {
      r.locked_memory_clocks = control::Change<control::ClockLock>::driver_default();
    }
    if (every || o.power_limit)
      r.power_limit = control::Change<units::Milliwatts>::driver_default();
    requests.push_back({d, r});
  }
  return run_change(ctx, session, requests, false, nothing);
}

}  // namespace

void add_set_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<SetOptions>();
  auto* sub = app.add_subcommand("set",
                                 "Change persistence mode, application clocks, locked clocks, "
                                 "power limit on the selected GPUs "
                                 "alike (journaled: `gpuclk restore` undoes it)");
  sub->add_option("--persistence", o->persistence, "on | off");
  sub->add_option("--app-clocks,--applications-clocks", o->app_clocks,
                  "MEM,GFX application clocks in MHz (nvidia-smi -ac order), or default");
  sub->add_option("--lock-gpu-clocks", o->lock_gpu_clocks,
                  "MIN[,MAX] MHz, tdp, tdp,unlimited, unlimited,tdp, or default (unlock)");
  sub->add_option("--lock-memory-clocks", o->lock_memory_clocks,
                  "MIN[,MAX] MHz, or default (unlock); not on Hopper");
  sub->add_option("--power-limit", o->power_limit, "watts, or default");
  sub->add_flag("--all", o->all, "every GPU (the default when -i is not given)");
  sub->add_flag("--dry-run", o->dry_run, "show what would change; write nothing");
  sub->add_flag("--snap", o->snap,
                "round clocks to the nearest supported value, clamp the power limit into range");
  sub->callback([&ctx, o] { ctx.run = [&ctx, o] { return run_set(ctx, *o); }; });
}

void add_reset_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ResetOptions>();
  auto* sub = app.add_subcommand(
      "reset", "Return settings to the driver's defaults (all four when none is named; journaled)");
  sub->add_flag("--app-clocks,--applications-clocks", o->app_clocks, "application clocks");
  sub->add_flag("--gpu-clocks", o->gpu_clocks, "unlock the GPU clocks");
  sub->add_flag("--memory-clocks", o->memory_clocks, "unlock the memory clocks");
  sub->add_flag("--power-limit", o->power_limit, "the default power limit");
  sub->add_flag("--all", o->all, "every GPU (the default when -i is not given)");
  sub->add_flag("--dry-run", o->dry_run, "show what would change; write nothing");
  sub->callback([&ctx, o] { ctx.run = [&ctx, o] { return run_reset(ctx, *o); }; });
}

}  // namespace gpuclk::cli
