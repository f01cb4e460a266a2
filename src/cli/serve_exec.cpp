// `gpuclk serve` in the gpuclk executable: replaces the process with gpuclk-serve (beside it,
// same arguments), which has the service and its HTTP side (cmd_serve.cpp). The options are
// declared here too, so `gpuclk serve --help` needs no second program.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "cli/commands.h"
#include "cli/context.h"
#include "util/error.h"

namespace gpuclk::cli {
namespace {

[[noreturn]] void exec_serve() {
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
  ::execv(program.c_str(), argv.data());
  throw Error(ExitCode::other, fmt::format("cannot run {}: {}", program, std::strerror(errno)),
              "gpuclk-serve is installed beside gpuclk (cmake --install, or copy it there)");
}

}  // namespace

void add_serve_command(CLI::App& app, Context& ctx) {
  auto ignored = std::make_shared<std::string>();
  auto ignored_flag = std::make_shared<bool>();
  auto* sub = app.add_subcommand(
      "serve",
      "Resident node service: one sampler and its history for every read command (Unix socket), "
      "Prometheus /metrics");
  sub->add_option("--listen", *ignored,
                  "HTTP address for /metrics and /healthz (default 127.0.0.1:9400; off: none)");
  sub->add_option("--interval", *ignored, "sampling interval (default 100ms)");
  sub->add_option("--history", *ignored, "history kept at 1 s (default 1h)");
  sub->add_option("--counters-interval", *ignored,
                  "energy, violation, ECC, replay and GPM counters every N s while no dmon/stat "
                  "streams (default 5s; every second while one does)");
  sub->add_option("--govern", *ignored,
                  "run the energy governor with this policy: threshold | geopm | phase | bandit");
  sub->add_option("--govern-interval", *ignored, "governor's interval (default 20ms)");
  sub->add_option("--govern-max-slowdown", *ignored, "governor's slowdown budget (default 3%)");
  sub->add_option("--govern-log", *ignored, "governor's decision log (JSON Lines)");
  sub->add_flag("--govern-dry-run", *ignored_flag, "governor decides and logs, writes nothing");
  auto* profile = sub->add_option(
      "--profile", *ignored,
      "apply this profile (as `gpuclk apply`) at start and re-apply it when a GPU drifts");
  sub->add_option("--profile-check", *ignored,
                  "how often the GPUs are compared with --profile (default 5s; 1s to 1h)")
      ->needs(profile);
  sub->add_option("--policy", *ignored,
                  "who may change which settings through the socket (default "
                  "/etc/gpuclk/policy.toml when it exists; docs/serve.md)");
  sub->add_option("--kubelet-socket", *ignored,
                  "the kubelet's pod-resources socket, asked for pods' names and namespaces "
                  "while it exists (default /var/lib/kubelet/pod-resources/kubelet.sock; off: "
                  "never; docs/attribution.md)");
  sub->add_option("--metrics-compat", *ignored,
                  "also export these names on /metrics: dcgm-exporter (the DCGM_FI_* "
                  "default counters of its 4.8 release, units and labels), dcgm-exporter:3 "
                  "(its 2.x-3.x set, PCIe throughput in KB; docs/exporter.md)");
  sub->add_option("--metrics-detail", *ignored,
                  "also export these series on /metrics: nvlink (every link's), gpu (every "
                  "per-GPU reading and limit), attribution (each GPU's energy split), all; "
                  "default: at most 40 per GPU (docs/exporter.md)");
  sub->callback([&ctx, ignored, ignored_flag] {
    ctx.run = [&ctx] {
      ctx.effect("run gpuclk-serve");
      exec_serve();
      return 0;
    };
  });
}

}  // namespace gpuclk::cli
