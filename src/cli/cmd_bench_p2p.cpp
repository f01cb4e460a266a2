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

#include <algorithm>
#include <cmath>
#include <iostream>
#include <mutex>

#include "bench/p2p.h"
#include "bench/p2p_links.h"
#include "bench/p2p_report.h"
#include "bench/p2p_view.h"
#include "bench/workload.h"
#include "cli/bench_targets.h"
#include "gpu/selection.h"
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

p2p::Options measure_options(const P2pOptions& o) {
  if (!(o.mib >= 1) || !std::isfinite(o.mib) || o.mib > 65536) {
    throw bad_argument(fmt::format("--mib {} is outside 1..65536", o.mib));
  }
  p2p::Options m;
  m.bytes = std::size_t(o.mib * 1024 * 1024) / 16 * 16;
  m.copies_per_sample = o.copies;
  m.samples = o.samples;
  m.verify = !o.no_check;
  p2p::validate(m);
  return m;
}

// One line on stderr, redrawn, only on a terminal: which figure, which GPUs, which sample.
class P2pProgress {
 public:
  explicit P2pProgress(bool enabled) : enabled_(enabled) {}
  ~P2pProgress() { clear(); }
  void show(p2p::Figure figure, int device, int peer, int sample, int samples) {
    if (!enabled_) return;
    const std::string where =
        peer < 0 ? fmt::format("cuda{}", device) : fmt::format("cuda{} <-> cuda{}", device, peer);
    std::string line = fmt::format("bench p2p | {} | {} | sample {}/{}", where,
                                   p2p::info(figure).label, sample + 1, samples);
    std::cerr << '\r' << line << std::string(width_ > line.size() ? width_ - line.size() : 0, ' ')
              << std::flush;
    width_ = line.size();
  }
  void clear() {
    if (!enabled_ || width_ == 0) return;
    std::cerr << '\r' << std::string(width_, ' ') << '\r' << std::flush;
    width_ = 0;
  }

 private:
  bool enabled_;
  std::size_t width_ = 0;
};

void measure_hosts(const P2pOptions& o, const p2p::Options& m,
                   const std::vector<gpu::Device*>& devices, p2p::P2pReport& report) {
  const std::vector<int> nodes = p2p::numa_nodes();
  report.host_numa_nodes = nodes.size();
  std::vector<int> extra;
  if (!o.numa.empty()) {
    const p2p::NumaRequest request = p2p::parse_numa_request(o.numa);
    extra = request.all ? nodes : request.nodes;
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    p2p::GpuLinks& g = report.gpus[i];
    // Where the GPU hangs off, when this host has NUMA and the build can place memory there.
    std::optional<int> local;
    if (g.numa_node && std::find(nodes.begin(), nodes.end(), *g.numa_node) != nodes.end())
      local = g.numa_node;
    auto read_loaded_link = [&g, device = devices[i]] {
      g.pcie_loaded = device->pcie_link().optional();
    };
    const p2p::HostResult own = p2p::measure_host(g.cuda_ordinal, local, true, m, read_loaded_link);
    report.hosts.push_back(p2p::make_host_report(own, g, nullptr, nodes.size()));
    const std::size_t own_row = report.hosts.size() - 1;
    for (int node : extra) {
      if (local && node == *local) continue;
      const p2p::HostResult other = p2p::measure_host(g.cuda_ordinal, node, false, m);
      const p2p::HostReport local_row = report.hosts[own_row];
      report.hosts.push_back(p2p::make_host_report(other, g, &local_row, nodes.size()));
    }
  }
}

void measure_peers(const p2p::Options& m, const std::vector<gpu::Device*>& devices,
                   const gpu::NvLinkSummary& nvlinks, p2p::P2pReport& report) {
  const auto matrix = gpu::connection_matrix(devices);
  for (std::size_t a = 0; a < devices.size(); ++a) {
    for (std::size_t b = 0; b < devices.size(); ++b) {
      if (a == b) continue;
      const p2p::GpuLinks& ga = report.gpus[a];
      const p2p::GpuLinks& gb = report.gpus[b];
      const p2p::PeerResult result = p2p::measure_peer(ga.cuda_ordinal, gb.cuda_ordinal, m);
      const auto direct = p2p::direct_links(nvlinks, ga.index, gb.index);
      report.pairs.push_back(p2p::make_pair_report(result, ga, gb, direct ? &*direct : nullptr,
                                                   gpu::abbreviation(matrix[a][b])));
    }
  }
}

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
  const auto printer = ctx.printer();
  bool first = true;
  if (!report.peer_skipped.empty()) {
    std::cout << "Peer: " << report.peer_skipped << "\n";
    first = false;
  }
  for (const auto& t : p2p::p2p_tables(report)) {
    std::cout << (first ? "" : "\n") << t.title << "\n";
    std::cout.flush();
    printer->print_table(t.table);
    first = false;
  }
  const auto verdicts = p2p::p2p_verdict_lines(report);
  if (!verdicts.empty()) {
    std::cout << "\nVerdicts:\n";
    for (const auto& v : verdicts) std::cout << "  " << v << '\n';
  }
  std::cout << fmt::format(
      "\n{} MiB per copy, {} copies per sample timed behind a spin kernel (+{} warm-up), median "
      "of {} samples, as nvbandwidth v0.8 measures (docs/bench.md#p2p)\n",
      report.options.bytes >> 20, report.options.copies_per_sample, report.options.warmup_copies,
      report.options.samples);
}

bool any_bad_data(const p2p::P2pReport& report) {
  auto bad = [](const std::vector<p2p::FigureReport>& figures) {
    return std::any_of(figures.begin(), figures.end(),
                       [](const auto& f) { return f.verified && !*f.verified; });
  };
  return std::any_of(report.pairs.begin(), report.pairs.end(),
                     [&](const auto& p) { return bad(p.figures); }) ||
         std::any_of(report.hosts.begin(), report.hosts.end(),
                     [&](const auto& h) { return bad(h.figures); });
}

int run_p2p(Context& ctx, const P2pOptions& o) {
  p2p::Options m = measure_options(o);
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
  P2pProgress progress(isatty(STDERR_FILENO) == 1);
  m.on_sample = [&](p2p::Figure f, int device, int peer, int sample, int samples) {
    progress.show(f, device, peer, sample, samples);
  };
  report.options = m;
  report.options.on_sample = nullptr;

  if (o.peer_only) {
    report.host_skipped = "--peer-only";
  } else {
    measure_hosts(o, m, devices, report);
  }
  if (o.host_only) {
    report.peer_skipped = "--host-only";
  } else if (devices.size() < 2) {
    report.peer_skipped =
        fmt::format("one GPU selected (GPU {}): there is no peer to measure, host figures only",
                    devices.front()->index());
  } else {
    measure_peers(m, devices, nvlinks, report);
  }
  progress.clear();
  print_p2p_report(ctx, report);
  if (any_bad_data(report)) {
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
