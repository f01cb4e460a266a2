// `gpuclk serve` in the gpuclk executable: parses serve's options, resolves the node (NVML
// library, simulated scenario, -i, socket, journal) and replaces the process with gpuclk-serve
// (beside it, same arguments), which has the service and its HTTP side and no command code
// (src/daemon). What this parsed reaches it as JSON in GPUCLK_SERVE_ARGS (serve/daemon_args.h);
// gpuclk-serve checks serve's options (exit 2 naming the option).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "cli/cmd_control.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "serve/daemon_args.h"
#include "serve/protocol.h"
#include "util/error.h"

namespace gpuclk::cli {
namespace {

[[noreturn]] void exec_serve(const serve::DaemonArgs& resolved) {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (std::size_t start = 0, end; start < all.size(); start = end + 1) {
    end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    args.push_back(all.substr(start, end - start));
  }
  const auto program = Context::executable_dir() + "/gpuclk-serve";
  if (args.empty()) args.push_back(program);
  args[0] = program;
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::setenv(serve::kDaemonArgsVariable, serve::to_json(resolved).dump().c_str(), 1);
  ::execv(program.c_str(), argv.data());
  throw Error(ExitCode::other, fmt::format("cannot run {}: {}", program, std::strerror(errno)),
              "gpuclk-serve is installed beside gpuclk (cmake --install, or copy it there)");
}

// The node as every command resolves it: the library loaded (the simulator's under --sim, or
// when GPUCLK_FALLBACK_SIM finds no driver), the GPUs -i selects, the socket, the journal.
void resolve_node(Context& ctx, serve::DaemonArgs& args) {
  args.nvml_library = ctx.nvml_library_path();
  if (ctx.simulated()) args.simulated = ctx.options.sim.empty() ? "default" : ctx.options.sim;
  for (const auto* d : ctx.selected()) args.selected.push_back(d->index());
  args.socket = serve::socket_path(ctx.options.socket);
  args.journal_dir = journal_dir(ctx).string();
  args.read_only = ctx.read_only();
}

}  // namespace

void add_serve_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<serve::DaemonArgs>();
  auto& o = args->options;
  auto* sub = app.add_subcommand(
      "serve",
      "Resident node service: one sampler and its history for every read command (Unix socket), "
      "Prometheus /metrics");
  sub->add_option("--listen", o.listen,
                  "HTTP address for /metrics and /healthz (default 127.0.0.1:9400; off: none)");
  sub->add_option("--interval", o.interval, "sampling interval (default 100ms)");
  sub->add_option("--history", o.history, "history kept at 1 s (default 1h)");
  sub->add_option("--counters-interval", o.counters_interval,
                  "energy, violation, ECC, replay and GPM counters every N s while no dmon/stat "
                  "streams (default 5s; every second while one does)");
  sub->add_option("--govern", o.govern,
                  "run the energy governor with this policy: threshold | geopm | phase | bandit");
  sub->add_option("--govern-interval", o.govern_interval, "governor's interval (default 20ms)");
  sub->add_option("--govern-max-slowdown", o.govern_max_slowdown,
                  "governor's slowdown budget (default 3%)");
  sub->add_option("--govern-log", o.govern_log, "governor's decision log (JSON Lines)");
  sub->add_flag("--govern-dry-run", o.govern_dry_run, "governor decides and logs, writes nothing");
  auto* profile = sub->add_option(
      "--profile", o.profile,
      "apply this profile (as `gpuclk apply`) at start and re-apply it when a GPU drifts");
  sub->add_option("--profile-check", o.profile_check,
                  "how often the GPUs are compared with --profile (default 5s; 1s to 1h)")
      ->needs(profile);
  sub->add_option("--policy", o.policy,
                  "who may change which settings through the socket (default "
                  "/etc/gpuclk/policy.toml when it exists; docs/serve.md)");
  sub->add_option("--kubelet-socket", o.kubelet_socket,
                  "the kubelet's pod-resources socket, asked for pods' names and namespaces "
                  "while it exists (default /var/lib/kubelet/pod-resources/kubelet.sock; off: "
                  "never; docs/attribution.md)");
  sub->add_option("--metrics-compat", o.metrics_compat,
                  "also export these names on /metrics: dcgm-exporter (the DCGM_FI_* "
                  "default counters of its 4.8 release, units and labels), dcgm-exporter:3 "
                  "(its 2.x-3.x set, PCIe throughput in KB; docs/exporter.md)");
  sub->add_option("--metrics-detail", o.metrics_detail,
                  "also export these series on /metrics: nvlink (every link's), gpu (every "
                  "per-GPU reading and limit), attribution (each GPU's energy split), all; "
                  "default: at most 40 per GPU (docs/exporter.md)");
  sub->add_option("--nccl-inspector-dir", o.nccl_inspector_dir,
                  "read the NCCL Inspector's files <host>-pid<pid>.log under this directory and "
                  "its job directories: collectives per job (docs/nccl.md)");
  sub->callback([&ctx, args] {
    ctx.run = [&ctx, args] {
      ctx.effect("run gpuclk-serve");
      resolve_node(ctx, *args);
      exec_serve(*args);
      return 0;
    };
  });
}

}  // namespace gpuclk::cli
