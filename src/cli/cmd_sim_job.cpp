// `gpuclk --sim sim-job`: run an amount of work of one kind on simulated GPUs and wait for it —
// what a user's job would do on a real GPU, for `gpuclk sweep -- CMD`, `gpuclk stat -- CMD` and
// the governor's evaluation. The GPUs are -i, else CUDA_VISIBLE_DEVICES (as a CUDA program
// would see them), else all. Prints per GPU the work done, the simulated time and the rate.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <thread>

#include "cli/commands.h"
#include "cli/context.h"
#include "gpu/sim_jobs.h"
#include "util/error.h"
#include "util/stop_signal.h"

namespace gpuclk::cli {
namespace {

struct SimJobOptions {
  std::string workload;
  std::string amount;
  double seconds = 0;
  bool seconds_given = false;
};

// "2e15", "13620T", "60000G": a number with an optional k/M/G/T/P/E suffix (powers of 1000).
double parse_amount(const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  const std::string suffix = end ? std::string(end) : "";
  static const std::string kSuffixes = "kMGTPE";
  if (suffix.size() == 1 && kSuffixes.find(suffix[0]) != std::string::npos) {
    v *= std::pow(1000.0, static_cast<double>(kSuffixes.find(suffix[0]) + 1));
  } else if (!suffix.empty()) {
    v = -1;
  }
  if (end == text.c_str() || !(v > 0) || !std::isfinite(v)) {
    throw bad_argument(fmt::format("--amount {}: not a positive amount", text),
                       "FLOP for gemm-*/fma, bytes for mem-*; e.g. 2e15 or 2000T");
  }
  return v;
}

int run_sim_job(Context& ctx, const SimJobOptions& o) {
  auto jobs = gpu::SimJobs::of(ctx.nvml());
  if (!jobs) {
    throw Error(ExitCode::not_supported, "sim-job runs only on the simulator",
                "gpuclk --sim sim-job …, or GPUCLK_NVML_LIB naming libnvml-sim.so");
  }
  const auto kinds = jobs->kinds();
  if (std::find(kinds.begin(), kinds.end(), o.workload) == kinds.end()) {
    std::string valid;
    for (const auto& k : kinds) valid += (valid.empty() ? "" : ", ") + k;
    throw bad_argument(fmt::format("unknown --workload '{}'", o.workload), "valid: " + valid);
  }
  const double amount = o.amount.empty() ? 0 : parse_amount(o.amount);
  // --seconds 0 (or below) was given, and "give --amount or --seconds" did not say what is wrong.
  if (o.seconds_given && !(o.seconds > 0 && std::isfinite(o.seconds))) {
    throw bad_argument(
        fmt::format("--seconds {}: not a positive number of simulated seconds", o.seconds),
        "e.g. --seconds 30, or leave it out with --amount (the job runs until done)");
  }
  if (amount == 0 && !(o.seconds > 0)) {
    throw bad_argument("give --amount (work to do) or --seconds (how long to run)");
  }
  if (ctx.options.devices.empty()) {
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible && *visible) {
      ctx.options.devices = visible;
      ctx.options.devices_given = true;
    }
  }
  const auto devices = ctx.selected();
  util::StopFlag stop;  // Ctrl-C, kill, a closed terminal: the jobs are stopped (128 + signal)
  std::vector<std::uint64_t> ids;
  ids.reserve(devices.size());
  for (auto* d : devices) ids.push_back(jobs->start(d->index(), o.workload, amount, o.seconds));
  std::vector<gpu::SimJobStatus> last(devices.size());
  for (bool running = true; running;) {
    running = false;
    for (std::size_t i = 0; i < devices.size(); ++i) {
      last[i] = jobs->status(devices[i]->index(), ids[i]);
      running = running || last[i].running;
    }
    if (util::StopFlag::raised()) {
      for (std::size_t i = 0; i < devices.size(); ++i) jobs->stop(devices[i]->index(), ids[i]);
      break;
    }
    if (running) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  output::Table t;
  const bool bytes = !last.empty() && last[0].unit == "B";
  const double scale = bytes ? 1e9 : 1e12;
  const std::string unit = bytes ? "GB" : "TFLOP";
  // Energy: the simulator's truth for this job (its time slices' share of the GPU's energy, when
  // jobs share the GPU), what the service's attribution is checked against.
  // The table's units are in its headers (its cells are bare numbers), as ps's are.
  t.columns = {{"gpu", "GPU"},           {"pid", "PID"},         {"workload", "Workload", true},
               {"done", "Done " + unit}, {"seconds", "Seconds"}, {"rate", "Rate " + unit + "/s"},
               {"energy_j", "Energy J"}, {"busy_s", "Busy s"},   {"result", "Result", true}};
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& s = last[i];
    t.rows.push_back({output::integer(devices[i]->index()), output::integer(s.pid),
                      output::text(s.kind), output::number(s.done / scale, unit, 1),
                      output::number(s.end_s - s.start_s, "s", 3),
                      output::number(s.rate / scale, unit + "/s", 2),
                      output::number(s.energy_j, "J", 1), output::number(s.busy_s, "s", 3),
                      output::text(s.completed                ? "completed"
                                   : util::StopFlag::raised() ? "stopped"
                                                              : "ran out of time")});
  }
  ctx.printer()->print_table(t);
  if (util::StopFlag::raised()) return 128 + util::StopFlag::signal();
  return 0;
}

}  // namespace

void add_sim_job_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<SimJobOptions>();
  auto* sub = app.add_subcommand(
      "sim-job",
      "Simulator only: run an amount of work (gemm-bf16, mem-copy, …) on the selected simulated "
      "GPUs and wait for it, as a user's job would (for sweep -- CMD, stat -- CMD)");
  sub->add_option("--workload", o->workload,
                  "gemm-bf16 | gemm-fp16 | gemm-tf32 | gemm-fp32 | gemm-fp8 | fma | mem-copy | "
                  "mem-triad")
      ->required();
  sub->add_option("--amount", o->amount,
                  "work per GPU: FLOP (gemm-*, fma) or bytes read + written (mem-*); suffixes "
                  "k M G T P E (e.g. 2000T)");
  auto* seconds =
      sub->add_option("--seconds", o->seconds,
                      "run for this many simulated seconds (with --amount: at most this long)");
  sub->footer(
      "GPUs: -i, else CUDA_VISIBLE_DEVICES (indexes or UUIDs), else every GPU. Exit code 0, or "
      "128 + signal when interrupted (the jobs are stopped).");
  sub->callback([&ctx, o, seconds] {
    o->seconds_given = seconds->count() > 0;
    ctx.run = [&ctx, o] { return run_sim_job(ctx, *o); };
  });
}

}  // namespace gpuclk::cli
