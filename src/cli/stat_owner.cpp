#include "cli/stat_owner.h"

#include <fmt/format.h>

#include <bit>
#include <fstream>
#include <iostream>

#include "attribution/attribution.h"
#include "cli/context.h"
#include "gpu/clock_reasons.h"
#include "serve/attribution_json.h"
#include "serve/client.h"
#include "util/error.h"
#include "views/collectives.h"

namespace gpuclk::cli {
namespace {

namespace out = output;

std::vector<out::Value> usage_row(const std::string& gpu, const attribution::Usage& u) {
  return {out::text(gpu),
          out::number(u.energy_j / 1e3, "kJ", 2),
          out::number(u.energy_j / 3.6e3, "Wh", 1),
          out::number(u.context_s / 3600, "h", 3),
          u.context_s > 0 ? out::number(100 * u.busy_s / u.context_s, "%", 0) : out::na(),
          u.mean_sm_mhz() ? out::number(*u.mean_sm_mhz(), "MHz", 0) : out::na(),
          out::text(attribution::held_back_text(u))};
}

// One line for the job's accounting record (the Slurm epilog's AdminComment): "12.34 kJ GPU
// energy, 0.004 GPU-h, busy 64 %, SM 1785 MHz, held back: sw_power_cap 33% on GPUs 0,1".
std::string summary_line(const attribution::OwnerUse& o) {
  const auto& u = o.usage;
  std::string gpus;
  for (const auto& [index, usage] : o.by_gpu)
    gpus += (gpus.empty() ? "" : ",") + std::to_string(index);
  // Nothing held it back: said in words ("held back: - on GPUs 0,1" read as a typo).
  const auto held = attribution::held_back_text(u);
  return fmt::format("{:.2f} kJ GPU energy, {:.3f} GPU-h, busy {:.0f} %, SM {} MHz, {} on {}",
                     u.energy_j / 1e3, u.context_s / 3600,
                     u.context_s > 0 ? 100 * u.busy_s / u.context_s : 0.0,
                     u.mean_sm_mhz() ? fmt::format("{:.0f}", *u.mean_sm_mhz()) : "N/A",
                     held == "-" ? std::string("not held back") : "held back: " + held,
                     (o.by_gpu.size() == 1 ? "GPU " : "GPUs ") + gpus);
}

}  // namespace

int run_stat_owner(Context& ctx, const std::string& owner_key, const std::string& json_file) {
  std::ofstream json_out;
  if (!json_file.empty()) {
    ctx.effect("write --json FILE");
    json_out.open(json_file);
    if (!json_out) throw bad_argument(fmt::format("cannot write --json {}", json_file));
  }
  auto* service = ctx.service();
  if (!service) {
    throw Error(ExitCode::not_supported,
                fmt::format("stat for {} needs gpuclk serve: it watches the GPUs' processes over "
                            "time, and no service answers on {}",
                            owner_key,
                            ctx.options.socket.empty() ? "the default socket" : ctx.options.socket),
                "start gpuclk serve (docs/serve.md), or measure a command: gpuclk stat -- CMD");
  }
  const auto reply = service->processes(owner_key);
  const auto& view = reply.view;
  const attribution::OwnerUse& o = view.owners.at(0);
  nlohmann::json j = reply.owner_document();
  j["summary"] = summary_line(o);
  const auto nccl = service->collectives(owner_key);
  if (!nccl.jobs.empty()) j["collectives"] = serve::collectives_json(nccl).at("jobs");
  if (json_out) json_out << j.dump(2) << '\n';
  if (ctx.format().kind == out::Format::Kind::json) {
    std::cout << j.dump(2) << '\n';
    return 0;
  }
  const double seen = std::chrono::duration<double>(o.last_seen - o.first_seen).count();
  std::cout << fmt::format(
      "{}{}: {}, on the GPUs for {:.0f} s{}\n\n", host::describe(o.owner),
      o.owner.user.empty() ? "" : " (" + o.owner.user + ")",
      o.running
          ? "running"
          : fmt::format("ended {:.0f} s ago",
                        std::chrono::duration<double>(serve::kAnswerTime - o.last_seen).count()),
      seen, ", as gpuclk serve saw it");
  out::Table t;
  t.columns = {{"gpu", "GPU", true},
               {"energy_kj", "Energy kJ"},
               {"energy_wh", "Wh"},
               {"gpu_hours", "GPU-hours"},
               {"busy", "Busy %"},
               {"sm_clock", "SM MHz"},
               {"held_back", "Held back by", true}};
  for (const auto& [index, u] : o.by_gpu) t.rows.push_back(usage_row(std::to_string(index), u));
  if (o.by_gpu.size() > 1) t.rows.push_back(usage_row("all", o.usage));
  ctx.printer()->print_table(t);
  std::cout << "\nProcesses:";
  const char* sep = " ";
  for (const auto& p : view.processes) {
    std::cout << fmt::format("{}{}{} on GPU {}{}", sep, p.pid,
                             p.name.empty() ? "" : " (" + p.name + ")", p.gpu_index,
                             p.running ? "" : " (ended)");
    sep = ", ";
  }
  if (view.processes.empty()) std::cout << " none kept (the service keeps ended ones 10 min)";
  if (!nccl.jobs.empty()) {
    std::cout << "\n\nNCCL collectives (the NCCL Inspector's files; docs/nccl.md):\n";
    ctx.printer()->print_table(views::collectives_table(nccl.jobs));
  }
  std::cout << fmt::format(
      "\nSummary: {}\nEnergy: each GPU's energy counter split between its processes every {:.0f} "
      "s (docs/attribution.md)\n",
      summary_line(o), reply.interval_s);
  return 0;
}

}  // namespace gpuclk::cli
