// `gpuclk bench nccl`: NCCL's collectives (all-reduce, all-gather, reduce-scatter, broadcast,
// all-to-all, send/recv) over the selected GPUs, timed as nccl-tests times them, each figure
// beside the peak the links allow, send/recv per GPU pair with the worst pair named, and the
// clocks, power and NVLink traffic read while they ran.
//
// Phases, cheapest first so a bad request fails before anything touches a GPU:
//   1. arguments (exit 2), a build without CUDA (3);
//   2. NVML and -i (12 no driver, 9, 6), then NCCL (12 none found, naming where it looked; 3 too
//      old), then the simulator (3: NCCL needs real GPUs), then CUDA's view of the GPUs (6);
//   3. link facts from NVML (PCIe, NVLinks, NUMA node), the GPUs' free memory (sizes);
//   4. the run with the sampler alongside (bench/nccl_measure.h);
//   5. the report: nccl-tests' tables, summary, pairs, telemetry, verdicts (table), rows (CSV),
//      a tree (JSON).
// Read-only: communicators and buffers are this process's own; no GPU setting changes.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>

#include "bench/nccl.h"
#include "bench/nccl_measure.h"
#include "bench/nccl_setup.h"
#include "bench/nccl_view.h"
#include "bench/progress.h"
#include "bench/workload.h"
#include "cli/bench_targets.h"
#include "telemetry/sampler.h"
#include "util/error.h"

namespace gpuclk::cli {
namespace {

namespace nc = bench::nccl;

struct NcclOptions {
  nc::PlanOptions plan;
  std::string nccl_lib;
};

void print_report(Context& ctx, const nc::NcclReport& report) {
  const auto format = ctx.format();
  if (format.kind == output::Format::Kind::json) {
    ctx.printer()->print_tree(nc::nccl_tree(report));
    return;
  }
  if (format.kind == output::Format::Kind::csv) {
    ctx.printer()->print_table(nc::nccl_rows(report));
    return;
  }
  nc::print_text(std::cout, *ctx.printer(), report);
}

int run_nccl(Context& ctx, const NcclOptions& o, bool sizes_given) {
  nc::Plan plan = nc::make_plan(o.plan, sizes_given);
  (void)ctx.format();
  if (!bench::built_with_cuda()) (void)bench::device_count();  // throws how to enable CUDA
  const std::vector<gpu::Device*> devices = selected_gpus(ctx);
  const std::unique_ptr<nc::Library> nccl = nc::Library::open(o.nccl_lib);
  if (ctx.simulated()) {
    throw Error(ExitCode::not_supported,
                fmt::format("gpuclk bench nccl runs NCCL ({}, {}) on real GPUs; the simulator "
                            "(--sim) models NVML only",
                            nccl->version(), nccl->path()),
                "run it on a host with NVIDIA GPUs");
  }
  const std::vector<bench::Target> targets = cuda_targets(devices);
  std::vector<int> ordinals;
  std::vector<unsigned> indexes;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    ordinals.push_back(targets[i].cuda_ordinal);
    indexes.push_back(devices[i]->index());
  }
  nc::Topology links = nc::topology(devices, ordinals);
  const std::string memory_note = nc::fit_memory(plan, nc::device_memory(ordinals), indexes);

  bench::StatusLine progress(std::cerr, isatty(STDERR_FILENO) == 1);
  const nc::Operation first_op = plan.run.operations.front();
  plan.run.on_progress = [&](const nc::Progress& p) {
    if (progress.enabled()) progress.show(nc::progress_text(p));
    // The PCIe links under load: read while the first operation's largest size starts (the
    // sizes before it kept the links busy; an idle link trains down).
    if (p.operation == first_op && p.pair_from < 0 && p.steps > 0 && p.step + 1 == p.steps &&
        !p.in_place) {
      for (std::size_t i = 0; i < devices.size(); ++i)
        links.gpus[i].pcie_loaded = devices[i]->pcie_link().optional();
    }
  };
  const nc::Runner runner = [&](const nc::RunOptions& r) { return nc::run(*nccl, ordinals, r); };
  nc::Measured m =
      nc::measure(runner, plan.run, telemetry::device_sources(devices, nc::sampled_fields()),
                  indexes, ctx.clock(), plan.interval);
  progress.clear();

  nc::NcclReport report = nc::make_report(m.run, plan.run, std::move(links), nc::nccl_environment(),
                                          std::move(m.telemetry), std::move(m.pairs_telemetry));
  report.library_path = nccl->path();
  report.library_version = nccl->version();
  if (!memory_note.empty()) report.notes.push_back(memory_note);
  print_report(ctx, report);
  if (nc::any_wrong(report)) {
    std::cout.flush();
    std::cerr << "gpuclk: error: NCCL results differ from what the operations must produce (see "
                 "the verdicts)\n";
    return static_cast<int>(ExitCode::other);
  }
  return 0;
}

}  // namespace

void add_bench_nccl_command(CLI::App* bench, Context& ctx) {
  auto opts = std::make_shared<NcclOptions>();
  auto* sub = bench->add_subcommand(
      "nccl",
      "NCCL all-reduce, all-gather, reduce-scatter, broadcast, all-to-all and send/recv over the "
      "GPUs, as nccl-tests measures them, beside the links' peak; the worst GPU pair");
  sub->add_option("--ops", opts->plan.ops,
                  "all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, send_recv "
                  "(comma separated) or all (default)");
  auto* sizes = sub->add_option(
      "--sizes", opts->plan.sizes,
      "MIN:MAX message sizes, bytes with K, M, G (default 8:8G, cut to what fits in memory)");
  sub->add_option("--factor", opts->plan.factor,
                  "size step: each size is the last × this (default 2)");
  sub->add_option("--iters", opts->plan.iterations, "timed iterations per size (default 20)");
  sub->add_option("--warmup", opts->plan.warmup, "warm-up iterations per size (default 1)");
  sub->add_flag("--no-check", opts->plan.no_check, "skip checking every result element");
  sub->add_option("--pair-size", opts->plan.pair_size,
                  "bytes each GPU pair sends alone to find the worst pair (default 1G; 0: none)");
  sub->add_option("--nccl-lib", opts->nccl_lib,
                  "libnccl.so.2 to load (default: GPUCLK_NCCL_LIB, the loader's path, then "
                  "PyTorch/NVIDIA wheels under the python3 installs)");
  sub->add_option("--interval", opts->plan.interval, "telemetry sampling interval (default 100ms)");
  sub->footer(
      "Exit code: 0 ok, 2 bad argument, 3 not supported (no CUDA in this build: it says how to "
      "enable it; NCCL older than 2.7; simulator), 6 GPU not found, 9 driver not loaded, 12 no "
      "NVIDIA driver or no NCCL library (the message says which and where it looked), 255 a "
      "result was wrong.");
  sub->callback([&ctx, opts, sizes] {
    const bool sizes_given = sizes->count() > 0;
    ctx.run = [&ctx, opts, sizes_given] { return run_nccl(ctx, *opts, sizes_given); };
  });
}

}  // namespace gpuclk::cli
