// `gpuclk ps`: every process on every GPU, who it works for, and what it used. From the service
// (gpuclk serve), which splits each GPU's energy counter between the processes on it at every
// slow sample (attribution/attribution.h): power share, energy, GPU time, mean SM clock and what
// held the clock back. Without a service: the processes, owners and memory the driver lists now,
// and a note that energy needs the service. A second table sums the jobs (Slurm jobs, pods,
// containers, sessions) over their GPUs.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <set>

#include "attribution/attribution.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "gpu/clock_reasons.h"
#include "rules/process_owners.h"
#include "serve/attribution_json.h"
#include "serve/client.h"
#include "serve/protocol.h"
#include "views/collectives.h"

namespace gpuclk::cli {
namespace {

namespace out = output;

struct PsOptions {
  bool all = false;  // ended processes too (the service keeps them 10 minutes)
};

double ago(telemetry::TimePoint t) {
  return std::chrono::duration<double>(serve::kAnswerTime - t).count();
}

// "1:02:03" for seconds.
std::string clock_time(double s) {
  const auto total = static_cast<long long>(std::llround(std::max(0.0, s)));
  return fmt::format("{}:{:02}:{:02}", total / 3600, total / 60 % 60, total % 60);
}

// One unit per column (a table's unit is in its header): kJ, 0.01 kJ resolution.
out::Value energy(double joules) { return out::number(joules / 1e3, "kJ", 2); }

out::Table process_table(const attribution::AttributionView& v, const std::set<unsigned>& gpus,
                         bool all) {
  out::Table t;
  t.columns = {{"gpu", "GPU"},          {"pid", "PID"},
               {"user", "USER", true},  {"owner", "OWNER", true},
               {"name", "NAME", true},  {"state", "STATE", true},
               {"power", "POWER W"},    {"share", "SHARE %"},
               {"energy", "ENERGY kJ"}, {"gpu_time", "GPU TIME"},
               {"busy", "BUSY %"},      {"memory", "MEM MiB"},
               {"sm_clock", "SM MHz"},  {"held_back", "HELD BACK BY", true}};
  for (const auto& p : v.processes) {
    if (!gpus.contains(p.gpu_index) || (!p.running && !all)) continue;
    const auto& u = p.usage;
    t.rows.push_back(
        {out::integer(p.gpu_index), out::integer(p.pid),
         p.owner.user.empty() ? out::na() : out::text(p.owner.user),
         out::text(host::describe(p.owner)), p.name.empty() ? out::na() : out::text(p.name),
         out::text(p.running ? "running" : fmt::format("ended {:.0f}s ago", ago(p.last_seen))),
         p.running ? out::number(p.power_w, "W", 0) : out::na(),
         p.running ? out::number(100 * p.share, "%", 0) : out::na(), energy(u.energy_j),
         out::text(clock_time(u.context_s)),
         u.context_s > 0 ? out::number(100 * u.busy_s / u.context_s, "%", 0) : out::na(),
         p.memory ? out::number(p.memory->value() / (1 << 20), "MiB", 0) : out::na(),
         u.mean_sm_mhz() ? out::number(*u.mean_sm_mhz(), "", 0) : out::na(),
         out::text(attribution::held_back_text(u, 2))});
  }
  return t;
}

out::Table owner_table(const attribution::AttributionView& v, const std::set<unsigned>& gpus,
                       bool all) {
  out::Table t;
  t.columns = {
      {"owner", "JOB", true},   {"user", "USER", true},  {"gpus", "GPUS", true},
      {"state", "STATE", true}, {"energy", "ENERGY kJ"}, {"gpu_hours", "GPU-HOURS"},
      {"busy", "BUSY %"},       {"sm_clock", "SM MHz"},  {"held_back", "HELD BACK BY", true}};
  std::vector<std::pair<std::string, std::vector<out::Value>>> rows;
  for (const auto& o : v.owners) {
    std::string list;
    bool selected = false;
    for (const auto& [index, u] : o.by_gpu) {
      list += (list.empty() ? "" : ",") + std::to_string(index);
      selected = selected || gpus.contains(index);
    }
    if (!selected || (!o.running && !all)) continue;
    const auto& u = o.usage;
    rows.emplace_back(
        host::describe(o.owner),
        std::vector<out::Value>{
            out::text(host::describe(o.owner)),
            o.owner.user.empty() ? out::na() : out::text(o.owner.user), out::text(list),
            out::text(o.running ? "running" : fmt::format("ended {:.0f}s ago", ago(o.last_seen))),
            energy(u.energy_j), out::number(u.context_s / 3600, "", 3),
            u.context_s > 0 ? out::number(100 * u.busy_s / u.context_s, "%", 0) : out::na(),
            u.mean_sm_mhz() ? out::number(*u.mean_sm_mhz(), "", 0) : out::na(),
            out::text(attribution::held_back_text(u, 2))});
  }
  // By job, so that a job is found where its name puts it (the service lists them as it met them).
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [name, row] : rows) t.rows.push_back(std::move(row));
  return t;
}

// No service: what the driver says now, with owners from /proc (or the simulator's scenario).
int run_ps_direct(Context& ctx) {
  out::Table t;
  t.columns = {{"gpu", "GPU"},           {"pid", "PID"},         {"user", "USER", true},
               {"owner", "OWNER", true}, {"name", "NAME", true}, {"memory", "MEM MiB"}};
  for (const auto* d : ctx.selected()) {
    const auto list = d->processes();
    if (!list) continue;
    for (const auto& p : *list) {
      const auto owner = rules::process_owner(ctx.nvml(), p.pid);
      const auto name = ctx.devices().process_name(p.pid);
      t.rows.push_back(
          {out::integer(d->index()), out::integer(p.pid),
           owner && !owner->user.empty() ? out::text(owner->user) : out::na(),
           owner ? out::text(host::describe(*owner)) : out::na(),
           name ? out::text(*name) : out::na(),
           p.used_memory ? out::number(p.used_memory->value() / (1 << 20), "MiB", 0) : out::na()});
    }
  }
  ctx.printer()->print_table(t);
  if (ctx.format().kind == out::Format::Kind::table) {
    // The socket it asked: --socket, GPUCLK_SOCKET or the default (never an empty name).
    std::cerr << "gpuclk ps: no service answers on " << serve::socket_path(ctx.options.socket)
              << "; power, energy and GPU time per process come from gpuclk serve, which splits "
                 "each GPU's energy between its processes over time\n";
  }
  return 0;
}

int run_ps(Context& ctx, const PsOptions& o) {
  auto* service = ctx.service();
  if (!service) return run_ps_direct(ctx);
  const auto reply = service->processes();
  const auto& view = reply.view;
  std::set<unsigned> gpus;
  for (auto index : ctx.indexes_from(reply.gpus)) gpus.insert(index);
  const auto nccl = service->collectives();
  if (ctx.format().kind == out::Format::Kind::json) {
    // The service's answer as it is, less what -i leaves out; each job's NCCL collectives.
    auto doc = reply.processes_document(gpus, o.all);
    if (nccl.enabled) doc["collectives"] = serve::collectives_json(nccl).at("jobs");
    std::cout << doc.dump(2) << '\n';
    return 0;
  }
  ctx.printer()->print_table(process_table(view, gpus, o.all));
  const auto owners = owner_table(view, gpus, o.all);
  if (ctx.format().kind == out::Format::Kind::table) {
    std::cout << '\n';
    ctx.printer()->print_table(owners);
    std::cout << fmt::format(
        "\nEach GPU's energy counter is split between its processes every {:.0f} s, by their SM "
        "utilization\n(gpuclk ps --all: ended processes too; docs/attribution.md: how)\n",
        reply.interval_s);
  }
  const auto collectives = views::collectives_table(nccl.jobs, &gpus);
  if (!collectives.rows.empty() && ctx.format().kind == out::Format::Kind::table) {
    std::cout << "\nNCCL collectives per job (the NCCL Inspector's files; docs/nccl.md):\n";
    ctx.printer()->print_table(collectives);
  }
  return 0;
}

}  // namespace

void add_ps_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<PsOptions>();
  auto* sub = app.add_subcommand(
      "ps", "Every process on every GPU: its job, user, power share, energy and clocks");
  sub->add_flag("-a,--all", o->all, "ended processes and jobs too (kept 10 min and 1 day)");
  sub->callback([&ctx, o] { ctx.run = [&ctx, o] { return run_ps(ctx, *o); }; });
}

}  // namespace gpuclk::cli
