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
#include "bench/nccl_view.h"
#include "bench/p2p_links.h"
#include "bench/workload.h"
#include "cli/bench_targets.h"
#include "gpu/topology.h"
#include "telemetry/interval.h"
#include "telemetry/sampler.h"
#include "util/error.h"

extern char** environ;

namespace gpuclk::cli {
namespace {

namespace nc = bench::nccl;

struct NcclOptions {
  std::string ops = "all";
  std::string sizes = "8:8G";
  int factor = 2;
  int iterations = 20, warmup = 1;
  bool no_check = false;
  std::string pair_size = "1G";
  std::string nccl_lib;
  std::string interval = "100ms";
};

struct Plan {
  nc::RunOptions run;
  bool sizes_given = false;  // --sizes on the command line: too big is an error, not clamped
  telemetry::Duration interval{};
};

Plan make_plan(const NcclOptions& o, bool sizes_given) {
  Plan p;
  p.run.operations = nc::parse_operations(o.ops);
  nc::SizeRange range = nc::parse_sizes(o.sizes);
  range.factor = o.factor;
  p.run.sizes = nc::size_steps(range);
  if (o.iterations < 1 || o.iterations > 100000)
    throw bad_argument(fmt::format("--iters {} is outside 1..100000", o.iterations));
  if (o.warmup < 0 || o.warmup > 1000)
    throw bad_argument(fmt::format("--warmup {} is outside 0..1000", o.warmup));
  p.run.iterations = o.iterations;
  p.run.warmup_iterations = o.warmup;
  p.run.check = !o.no_check;
  p.run.pair_bytes = o.pair_size == "0" ? 0 : nc::parse_size(o.pair_size, "--pair-size");
  p.sizes_given = sizes_given;
  const auto interval = telemetry::parse_interval(o.interval);
  if (!interval)
    throw bad_argument(fmt::format("bad --interval {}", o.interval), "give 100ms, 0.5 or 1s");
  p.interval = *interval;
  return p;
}

// The NCCL_* variables NCCL will read in this process.
std::map<std::string, std::string> nccl_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const std::size_t eq = entry.find('=');
    if (entry.rfind("NCCL_", 0) == 0 && eq != std::string_view::npos)
      env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

nc::Topology topology(const std::vector<gpu::Device*>& devices, const std::vector<int>& ordinals) {
  const gpu::NvLinkSummary nvlinks = gpu::nvlink_summary(devices);
  nc::Topology t;
  t.gpus = bench::p2p::link_facts(devices, ordinals, nvlinks);
  for (std::size_t a = 0; a < devices.size(); ++a) {
    for (std::size_t b = a + 1; b < devices.size(); ++b) {
      if (auto d = bench::p2p::direct_links(nvlinks, devices[a]->index(), devices[b]->index()))
        t.nvlink_pairs.push_back(*d);
    }
  }
  return t;
}

// Fits the sizes to the GPUs' free memory: explicit --sizes that do not fit are an error; the
// default range is cut at the largest size that fits, with a note. The pair size is cut too.
std::string fit_memory(Plan& p, const std::vector<nc::DeviceMemory>& memory,
                       const std::vector<gpu::Device*>& devices) {
  const std::size_t fits = nc::largest_fitting_size(memory);
  p.run.pair_bytes = std::min(p.run.pair_bytes, fits);
  const std::size_t largest = p.run.sizes.back();
  if (largest <= fits) return {};
  std::size_t tightest = 0;
  for (std::size_t i = 1; i < memory.size(); ++i)
    if (memory[i].free < memory[tightest].free) tightest = i;
  if (p.sizes_given || fits < p.run.sizes.front()) {
    throw bad_argument(
        fmt::format("{} needs two {} buffers on each GPU; GPU {} has {} MiB free, room for {} at "
                    "most",
                    nc::size_text(largest), nc::size_text(largest), devices[tightest]->index(),
                    memory[tightest].free >> 20, fits ? nc::size_text(fits) : "nothing"),
        "give smaller --sizes, or stop other jobs on the GPUs");
  }
  while (!p.run.sizes.empty() && p.run.sizes.back() > fits) p.run.sizes.pop_back();
  return fmt::format("sizes stop at {} (of {}): what fits twice in GPU {}'s free memory",
                     nc::size_text(p.run.sizes.back()), nc::size_text(largest),
                     devices[tightest]->index());
}

// One line on stderr, redrawn, only on a terminal: which operation, which size.
class NcclProgress {
 public:
  explicit NcclProgress(bool enabled) : enabled_(enabled) {}
  ~NcclProgress() { clear(); }
  void show(const nc::Progress& p) {
    if (!enabled_) return;
    const std::string line =
        p.pair_from >= 0
            ? fmt::format("bench nccl | send/recv pair rank {} -> rank {} | {}", p.pair_from,
                          p.pair_to, nc::size_text(p.bytes))
            : fmt::format("bench nccl | {} | {} ({}/{}) | {}",
                          telemetry::nccl::info(p.operation).label, nc::size_text(p.bytes),
                          p.step + 1, p.steps, p.in_place ? "in-place" : "out-of-place");
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
  const auto printer = ctx.printer();
  for (const auto& note : report.notes) std::cout << "Note: " << note << "\n\n";
  bool first = true;
  for (const auto& t : nc::nccl_tables(report)) {
    std::cout << (first ? "" : "\n") << t.title << "\n";
    std::cout.flush();
    printer->print_table(t.table);
    first = false;
  }
  if (!report.verdicts.empty()) {
    std::cout << "\nVerdicts:\n";
    for (const auto& v : report.verdicts) std::cout << "  " << v << '\n';
  }
  std::cout << '\n' << nc::parameters_line(report) << '\n';
}

int run_nccl(Context& ctx, const NcclOptions& o, bool sizes_given) {
  Plan plan = make_plan(o, sizes_given);
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
  nc::Topology links = topology(devices, ordinals);
  const std::string memory_note = fit_memory(plan, nc::device_memory(ordinals), devices);

  NcclProgress progress(isatty(STDERR_FILENO) == 1);
  const nc::Operation first_op = plan.run.operations.front();
  plan.run.on_progress = [&](const nc::Progress& p) {
    progress.show(p);
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

  nc::NcclReport report = nc::make_report(m.run, plan.run, std::move(links), nccl_environment(),
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
  sub->add_option("--ops", opts->ops,
                  "all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, send_recv "
                  "(comma separated) or all (default)");
  auto* sizes = sub->add_option(
      "--sizes", opts->sizes,
      "MIN:MAX message sizes, bytes with K, M, G (default 8:8G, cut to what fits in memory)");
  sub->add_option("--factor", opts->factor, "size step: each size is the last × this (default 2)");
  sub->add_option("--iters", opts->iterations, "timed iterations per size (default 20)");
  sub->add_option("--warmup", opts->warmup, "warm-up iterations per size (default 1)");
  sub->add_flag("--no-check", opts->no_check, "skip checking every result element");
  sub->add_option("--pair-size", opts->pair_size,
                  "bytes each GPU pair sends alone to find the worst pair (default 1G; 0: none)");
  sub->add_option("--nccl-lib", opts->nccl_lib,
                  "libnccl.so.2 to load (default: GPUCLK_NCCL_LIB, the loader's path, then "
                  "PyTorch/NVIDIA wheels under the python3 installs)");
  sub->add_option("--interval", opts->interval, "telemetry sampling interval (default 100ms)");
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
