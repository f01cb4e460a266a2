// `gpuclk apply PROFILE.toml`: make the GPUs match a declarative profile (control/profile.h),
// as one journaled transaction. Idempotent: what already matches is not written, and a second
// run says there is nothing to change. deploy/systemd/gpuclk-apply.service runs it at boot.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/cmd_control.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "control/profile.h"

namespace gpuclk::cli {
namespace {

struct ApplyOptions {
  std::string profile;
  bool dry_run = false;
};

int run_apply(Context& ctx, const ApplyOptions& o) {
  control::ControlSession session(session_options(ctx, "apply " + o.profile, o.dry_run), o.dry_run);
  const auto profile = control::load_profile(o.profile);
  return run_change(ctx, session, profile_requests(ctx, profile), profile.snap,
                    fmt::format("nothing to change: every GPU already matches {}", o.profile));
}

}  // namespace

std::vector<control::DeviceRequest> profile_requests(Context& ctx,
                                                     const control::Profile& profile) {
  return control::profile_requests(profile, ctx.devices(), ctx.selected());
}

void add_apply_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ApplyOptions>();
  auto* sub =
      app.add_subcommand("apply",
                         "Make the GPUs match a profile (TOML; deploy/profiles/example.toml), "
                         "journaled; a second run changes nothing");
  sub->add_option("profile", o->profile, "profile file")->required();
  sub->add_flag("--dry-run", o->dry_run, "show what would change; write nothing");
  sub->callback([&ctx, o] { ctx.run = [&ctx, o] { return run_apply(ctx, *o); }; });
}

}  // namespace gpuclk::cli
