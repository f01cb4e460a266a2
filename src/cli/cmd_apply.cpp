// `gpuclk apply PROFILE.toml`: make the GPUs match a declarative profile (control/profile.h),
// as one journaled transaction. Idempotent: what already matches is not written, and a second
// run says there is nothing to change. deploy/systemd/gpuclk-apply.service runs it at boot.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "cli/cmd_control.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "control/profile.h"
#include "gpu/selection.h"

namespace gpuclk::cli {
namespace {

struct ApplyOptions {
  std::string profile;
  bool dry_run = false;
};

std::vector<gpu::DeviceKey> keys_of(gpu::DeviceSet& set) {
  std::vector<gpu::DeviceKey> keys;
  for (const auto& d : set)
    keys.push_back({d->index(), d->uuid(), d->identity().pci ? d->identity().pci->bus_id : ""});
  return keys;
}

// A profile's gpus: "all" (also when it names none), or -i syntax.
std::vector<std::size_t> positions(const std::string& spec,
                                   const std::vector<gpu::DeviceKey>& keys) {
  if (spec.empty() || spec == "all") {
    std::vector<std::size_t> all(keys.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    return all;
  }
  return gpu::select_devices(spec, keys);
}

int run_apply(Context& ctx, const ApplyOptions& o) {
  ControlSession session(ctx, "apply " + o.profile, o.dry_run);
  const auto profile = control::load_profile(o.profile);
  return run_change(session, profile_requests(ctx, profile), profile.snap,
                    fmt::format("nothing to change: every GPU already matches {}", o.profile));
}

}  // namespace

std::vector<DeviceRequest> profile_requests(Context& ctx, const control::Profile& profile) {
  auto& set = ctx.devices();
  const auto keys = keys_of(set);
  const auto covered = positions(profile.gpus, keys);
  // -i narrows the profile to some of its GPUs.
  std::vector<std::size_t> chosen;
  const auto selected = ctx.selected();
  for (auto p : covered) {
    if (std::any_of(selected.begin(), selected.end(), [&](auto* d) { return d == &set[p]; }))
      chosen.push_back(p);
  }
  std::sort(chosen.begin(), chosen.end());
  std::vector<DeviceRequest> requests;
  for (auto p : chosen) {
    control::Request r = profile.settings;
    for (const auto& group : profile.overrides) {
      const auto in_group = positions(group.gpus, keys);
      if (std::find(in_group.begin(), in_group.end(), p) != in_group.end()) r.merge(group.request);
    }
    if (!r.empty()) requests.push_back({&set[p], r});
  }
  return requests;
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
