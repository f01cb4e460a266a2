// `gpuclk bench p2p`: bandwidth and latency between every pair of selected GPUs (copy engine and
// SM kernel, one way and both ways at once) and between each GPU and pinned host memory on its
// own NUMA node (and, with --numa, on others), each beside the peak its link should reach.
//
// Phases, cheapest first so a bad request fails before anything touches a GPU:
//   1. arguments (exit 2), a build without CUDA (3), NVML and -i, the simulator (3);
//   2. link facts from NVML: PCIe link now and at most, NVLinks, NUMA node of each GPU;
//   3. host rows, GPU by GPU (the PCIe link is read again while they copy: the loaded link);
//   4. peer figures, ordered pair by ordered pair (none with one GPU, and the report says so);
//   5. the report: matrices and host rows (table), one row per figure (CSV), a tree (JSON).
// Read-only: peer access and pinned memory are this process's own; no GPU setting changes.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>

#include "bench/p2p.h"
#include "bench/p2p_links.h"
#include "bench/p2p_measure.h"
#include "bench/p2p_report.h"
#include "bench/p2p_view.h"
#include "bench/progress.h"
#include "bench/workload.h"
#include "cli/bench_targets.h"
#include "gpu/topology.h"
#include "util/error.h"

namespace gpuclk::cli {
namespace {

namespace p2p = bench::p2p;

struct P2pOptions {
  bool peer_only = false, host_only = false, no_check = false;
  double mib = 512;
  int copies = 16, samples = 5;
  std::string numa;  // empty: the GPU's own node only
};

void print_p2p_report(Context& ctx, const p2p::P2pReport& report) {
  const auto format = ctx.format();
  if (format.kind == output::Format::Kind::json) {
    ctx.printer()->print_tree(p2p::p2p_tree(report));
    return;
  }
  if (format.kind == output::Format::Kind::csv) {
    ctx.printer()->print_table(p2p::p2p_rows(report));
    return;
  }
  p2p::print_text(std::cout, *ctx.printer(), report);
}

int run_p2p(Context& ctx, const P2pOptions& o) {
  p2p::Options m = p2p::measure_options(o.mib, o.copies, o.samples, !o.no_check);
  if (!o.numa.empty()) (void)p2p::parse_numa_request(o.numa);  // exit 2 before any GPU work
  (void)ctx.format();
  if (!bench::built_with_cuda()) (void)bench::device_count();  // throws how to enable CUDA
  const std::vector<gpu::Device*> devices = selected_gpus(ctx);
  if (ctx.simulated()) {
    throw Error(ExitCode::not_supported,
                "gpuclk bench p2p copies between real GPUs and host memory; the simulator (--sim) "
                "models NVML only",
                "run it on a host with an NVIDIA GPU");
  }
  const std::vector<bench::Target> targets = cuda_targets(devices);
  const gpu::NvLinkSummary nvlinks = gpu::nvlink_summary(devices);

  p2p::P2pReport report;
  std::vector<int> ordinals;
  ordinals.reserve(targets.size());
  for (const bench::Target& t : targets) ordinals.push_back(t.cuda_ordinal);
  report.gpus = p2p::link_facts(devices, ordinals, nvlinks);
  bench::StatusLine progress(std::cerr, isatty(STDERR_FILENO) == 1);
  m.on_sample = [&](p2p::Figure f, int device, int peer, int sample, int samples) {
    if (progress.enabled()) progress.show(p2p::progress_text(f, device, peer, sample, samples));
  };
  report.options = m;
  report.options.on_sample = nullptr;

  if (o.peer_only) {
    report.host_skipped = "--peer-only";
  } else {
    p2p::measure_hosts(o.numa, m, devices, report);
  }
  if (o.host_only) {
    report.peer_skipped = "--host-only";
  } else if (devices.size() < 2) {
    report.peer_skipped =
        fmt::format("one GPU selected (GPU {}): there is no peer to measure, host figures only",
                    devices.front()->index());
  } else {
    p2p::measure_peers(m, devices, nvlinks, report);
  }
  progress.clear();
  print_p2p_report(ctx, report);
  if (p2p::any_bad_data(report)) {
    std::cout.flush();
    std::cerr << "gpuclk: error: a copy's destination differs from its source (see the verdicts)\n";
    return static_cast<int>(ExitCode::other);
  }
  return 0;
}

}  // namespace

void add_bench_p2p_command(CLI::App* bench, Context& ctx) {
  auto opts = std::make_shared<P2pOptions>();
  auto* sub = bench->add_subcommand(
      "p2p",
      "GPU-GPU bandwidth (copy engine and SM kernel, one way and both ways) and latency, and "
      "host<->GPU bandwidth from each GPU's own NUMA node, beside the link's peak");
  auto* peer_only = sub->add_flag("--peer-only", opts->peer_only, "only the GPU-GPU figures");
  auto* host_only = sub->add_flag("--host-only", opts->host_only, "only the host<->GPU figures");
  peer_only->excludes(host_only);
  sub->add_option("--mib", opts->mib, "bytes per copy, MiB (default 512, as nvbandwidth)");
  sub->add_option("--copies", opts->copies, "timed copies per sample (default 16)");
  sub->add_option("--samples", opts->samples,
                  "samples per figure; the median is shown (default 5)");
  sub->add_option("--numa", opts->numa,
                  "also measure host copies with host memory on these NUMA nodes (0,1 or all), to "
                  "show what a remote node costs");
  sub->add_flag("--no-check", opts->no_check, "skip comparing each copy with its source");
  sub->footer(
      "Exit code: 0 ok, 2 bad argument, 3 not supported (no CUDA in this build: it says how to "
      "enable it; simulator), 6 GPU not found, 12 no NVIDIA driver, 255 a copy's data did not "
      "match.");
  sub->callback([&ctx, opts] { ctx.run = [&ctx, opts] { return run_p2p(ctx, *opts); }; });
}

}  // namespace gpuclk::cli
