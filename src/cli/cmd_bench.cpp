// `gpuclk bench gemm|mem|fma`: run a workload on every selected GPU (one at a time, or all at once
// with --concurrent) with the telemetry sampler alongside, and report per GPU the rate, the peak
// at the max and at the observed clock, energy per unit of work, and why the clock was where it
// was. `gpuclk bench compare A.json B.json` sets two --json reports side by side.
//
// Checks run cheapest first, so a bad request fails before anything touches a GPU: arguments
// (exit 2), a build without CUDA (3), NVML and -i (12/9/6), what the GPUs can do (3), the
// simulator (3: it has no CUDA), CUDA's view of the GPUs (6/9).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "bench/compare.h"
#include "bench/device_map.h"
#include "bench/environment.h"
#include "bench/measure.h"
#include "bench/progress.h"
#include "bench/report_view.h"
#include "bench/workload.h"
#include "cli/bench_targets.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "telemetry/interval.h"
#include "telemetry/sampler.h"
#include "util/error.h"
#include "util/text.h"

namespace gpuclk::cli {
namespace {

struct BenchOptions {
  std::string dtypes = "bf16";
  std::int64_t m = 8192, n = 8192, k = 8192;
  std::string kinds = "copy";
  std::string input = "random";
  double mib = 1024;
  std::int64_t iterations = 2048;
  double seconds = 3, warmup = 1;
  bool concurrent = false, no_check = false, details = false;
  std::string interval = "50ms";
  std::string json_file;
  std::vector<std::string> compare_files;
};

std::vector<bench::WorkloadSpec> build_specs(const std::string& workload, const BenchOptions& o) {
  using namespace bench;
  std::vector<WorkloadSpec> specs;
  const auto input = parse_input_kind(o.input);
  if (!input) {
    throw bad_argument(
        fmt::format("--input: '{}' is not an input kind", o.input),
        "valid: random (the default: what real data is closest to), zeros, constant");
  }
  if (workload == "gemm") {
    for (const std::string& name : text::split(o.dtypes)) {
      auto dtype = parse_gemm_dtype(name);
      if (!dtype) {
        throw bad_argument(fmt::format("unknown --dtype '{}'", name),
                           "valid dtypes: fp32, tf32, fp16, bf16, fp8 (comma separated)");
      }
      GemmSpec spec;
      spec.dtype = *dtype;
      spec.m = o.m, spec.n = o.n, spec.k = o.k;
      spec.input = *input;
      specs.push_back(spec);
    }
  } else if (workload == "mem") {
    if (!(o.mib > 0) || !std::isfinite(o.mib)) throw bad_argument("--mib must be positive");
    for (const std::string& name : text::split(o.kinds)) {
      auto kind = parse_mem_kind(name);
      if (!kind) {
        throw bad_argument(fmt::format("unknown --kind '{}'", name),
                           "valid kinds: copy, copy_kernel, triad (comma separated)");
      }
      specs.push_back(MemSpec{*kind, std::size_t(o.mib * 1024 * 1024) / 16 * 16, *input});
    }
  } else {
    specs.push_back(FmaSpec{o.iterations});
  }
  if (specs.empty()) throw bad_argument("nothing to run: give at least one --dtype or --kind");
  for (const auto& spec : specs) validate(spec);
  return specs;
}

void check_run_options(const BenchOptions& o) {
  if (!(o.seconds > 0) || !std::isfinite(o.seconds)) {
    throw bad_argument(fmt::format("--seconds {} must be positive", o.seconds));
  }
  if (!(o.warmup >= 0) || !std::isfinite(o.warmup)) {
    throw bad_argument(fmt::format("--warmup {} must not be negative", o.warmup));
  }
}

void check_capabilities(const std::vector<gpu::Device*>& devices,
                        const std::vector<bench::WorkloadSpec>& specs) {
  for (const auto& spec : specs) {
    const auto* gemm = std::get_if<bench::GemmSpec>(&spec);
    if (!gemm || gemm->dtype != bench::GemmDtype::fp8) continue;
    for (const gpu::Device* d : devices) {
      const auto& cc = d->identity().compute_capability;
      if (cc && *cc < gpu::ComputeCapability{8, 9}) {
        throw Error(ExitCode::not_supported,
                    fmt::format("fp8 GEMM needs compute capability 8.9 or newer (Ada, Hopper, "
                                "Blackwell): GPU {} ({}) is {}.{}",
                                d->index(), d->name(), cc->major, cc->minor),
                    "pick another --dtype, or newer GPUs with -i");
      }
    }
  }
}

// The command line as typed, for the report's environment.
std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string line;
  for (char c : all) line += c == '\0' ? ' ' : c;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

void write_json_file(const std::string& path, const output::Node& tree) {
  std::ofstream file(path);
  output::make_printer(output::Format{output::Format::Kind::json}, file)->print_tree(tree);
  if (!file) throw Error(ExitCode::other, fmt::format("cannot write {}", path));
}

int run_bench(Context& ctx, const std::string& workload, const BenchOptions& o) {
  const std::vector<bench::WorkloadSpec> specs = build_specs(workload, o);
  check_run_options(o);
  const auto interval = telemetry::parse_interval(o.interval);
  if (!interval) {
    throw bad_argument(fmt::format("bad --interval {}", o.interval),
                       "give 50ms, 0.1 or 1s (at least 10ms)");
  }
  const auto format = ctx.format();
  if (!bench::built_with_cuda()) (void)bench::device_count();  // throws how to enable CUDA
  const std::vector<gpu::Device*> devices = selected_gpus(ctx);
  check_capabilities(devices, specs);
  if (ctx.simulated()) {
    throw Error(
        ExitCode::not_supported,
        "gpuclk bench runs CUDA kernels on real GPUs; the simulator (--sim) models NVML only",
        "run it on a host with an NVIDIA GPU");
  }
  const std::vector<bench::Target> targets = cuda_targets(devices);

  bench::MeasureOptions mopts;
  mopts.concurrent = o.concurrent;
  mopts.sample_interval = *interval;
  mopts.run.seconds = o.seconds;
  mopts.run.warmup_seconds = o.warmup;
  mopts.run.verify = !o.no_check;
  bench::ProgressLine progress(
      std::cerr,
      bench::should_show_progress(isatty(STDERR_FILENO) == 1,
                                  bench::expected_seconds(specs.size(), targets.size(), mopts)));
  mopts.run.on_repetition = [&](const bench::Progress& p) { progress.repetition(p); };
  mopts.run.on_phase = [&](int device, bench::Phase phase) { progress.phase(device, phase); };
  mopts.on_workload_start = [&](const bench::WorkloadSpec& s, std::span<const int> ordinals) {
    progress.begin(s, ordinals);
  };

  bench::BenchRun run;
  run.environment = bench::collect_environment(ctx.devices(), devices, command_line());
  run.seconds = o.seconds;
  run.warmup_seconds = o.warmup;
  run.concurrent = o.concurrent;
  run.sample_interval_ms = std::chrono::duration<double, std::milli>(*interval).count();
  bench::Measurement m = bench::measure(
      specs, targets, telemetry::device_sources(devices, telemetry::FieldSet::standard()),
      ctx.clock(), mopts);
  progress.clear();
  if (m.reports.empty() && !m.errors.empty()) {
    const auto& e = m.errors.front();
    throw Error(e.code,
                fmt::format("GPU {}: {} {}: {}", e.gpu_index, e.workload, e.variant, e.message),
                e.hint);
  }
  run.reports = std::move(m.reports);
  run.errors = std::move(m.errors);
  run.across_gpus = bench::compare_gpus(run.reports);

  const bool machine = format.kind == output::Format::Kind::json;
  ctx.printer()->print_tree(bench::bench_tree(run, {machine, machine || o.details}));
  if (!o.json_file.empty()) write_json_file(o.json_file, bench::bench_tree(run, {true, true}));

  // The report above has every result; stderr says why the exit code is not 0.
  std::cout.flush();
  for (const auto& e : run.errors) {
    std::cerr << fmt::format("gpuclk: error: GPU {}: {} {}: {}\n", e.gpu_index, e.workload,
                             e.variant, e.message);
  }
  if (!run.errors.empty()) return static_cast<int>(run.errors.front().code);
  for (const auto& r : run.reports) {
    if (r.verification.checked && !r.verification.passed) {
      std::cerr << fmt::format("gpuclk: error: GPU {}: {} {}: result check failed\n", r.gpu.index,
                               r.workload, r.variant);
      return static_cast<int>(ExitCode::other);
    }
  }
  return 0;
}

int run_compare(Context& ctx, const BenchOptions& o) {
  if (o.compare_files.size() != 2) {
    throw bad_argument("bench compare needs two report files",
                       "gpuclk bench compare A.json B.json");
  }
  const bench::RecordedRun a = bench::load_recorded_run(o.compare_files[0]);
  const bench::RecordedRun b = bench::load_recorded_run(o.compare_files[1]);
  ctx.printer()->print_table(bench::comparison_table(bench::compare_runs(a, b)));
  return 0;
}

void add_run_options(CLI::App* sub, BenchOptions& o) {
  sub->add_option("--seconds", o.seconds, "measured window per workload and GPU, s (default 3)");
  sub->add_option("--warmup", o.warmup, "warm-up before measuring, s (default 1)");
  sub->add_flag("--concurrent", o.concurrent,
                "run on all selected GPUs at once (default: one at a time)");
  sub->add_option("--json", o.json_file,
                  "also write the report, with every repetition, as JSON to this file");
  sub->add_option("--interval", o.interval, "telemetry sampling interval (default 50ms)");
  sub->add_flag("--no-check", o.no_check, "skip checking the results against a reference");
  sub->add_flag("--details", o.details, "show the workload's details (cuBLASLt algorithm, grid)");
}

}  // namespace

// The selected GPUs, with a bench-specific word when there is no driver at all.
std::vector<gpu::Device*> selected_gpus(Context& ctx) {
  try {
    return ctx.selected();
  } catch (const Error& e) {
    if (e.code() != ExitCode::nvml_not_found && e.code() != ExitCode::driver_not_loaded) throw;
    throw Error(e.code(), fmt::format("no NVIDIA GPU to benchmark here: {}", e.what()),
                "gpuclk bench needs an NVIDIA GPU and its driver; the simulator (--sim) cannot run "
                "kernels");
  }
}

std::vector<bench::Target> cuda_targets(const std::vector<gpu::Device*>& devices) {
  const int count = bench::device_count();
  std::vector<bench::DeviceInfo> cuda;
  cuda.reserve(static_cast<std::size_t>(std::max(count, 0)));
  for (int i = 0; i < count; ++i) cuda.push_back(bench::device_info(i));
  std::vector<bench::NvmlGpu> nvml;
  for (const gpu::Device* d : devices) {
    const auto& pci = d->identity().pci;
    nvml.push_back({d->index(), d->name(), d->uuid(), pci ? pci->bus_id : std::string()});
  }
  const std::vector<int> ordinals = bench::cuda_ordinals(nvml, cuda);
  std::vector<bench::Target> targets;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    targets.push_back({bench::gpu_facts(*devices[i]), ordinals[i]});
  }
  return targets;
}

void add_bench_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<BenchOptions>();
  auto* bench = app.add_subcommand(
      "bench",
      "Measure GEMM, memory bandwidth or FMA throughput on each GPU against its peak at the "
      "clock it ran, with the reason for any gap; GPU-GPU and host-GPU transfers (p2p)");
  bench->require_subcommand(1);
  bench->footer(
      "Exit code: 0 ok, 2 bad argument, 3 not supported (no CUDA in this build: it says how to "
      "enable it; dtype; simulator), 6 GPU not found, 12 no NVIDIA driver, 255 a result check "
      "failed.");
  auto set_run = [&ctx, opts](const std::string& workload) {
    return [&ctx, opts, workload] {
      ctx.run = [&ctx, opts, workload] { return run_bench(ctx, workload, *opts); };
    };
  };

  auto* gemm = bench->add_subcommand("gemm", "D = A*B through cuBLASLt; 2*m*n*k FLOP per launch");
  gemm->add_option("--dtype", opts->dtypes,
                   "fp32 | tf32 | fp16 | bf16 | fp8, comma separated (default bf16)");
  gemm->add_option("--m", opts->m, "rows of A and D (default 8192)");
  gemm->add_option("--n", opts->n, "columns of B and D (default 8192)");
  gemm->add_option("--k", opts->k, "columns of A, rows of B (default 8192)");
  gemm->add_option("--input", opts->input,
                   "what A and B hold: random (default; uniform in [-1, 1)), zeros, constant "
                   "(0.75): the data sets the power, and under a cap the clock");
  add_run_options(gemm, *opts);
  gemm->callback(set_run("gemm"));

  auto* mem =
      bench->add_subcommand("mem", "device memory bandwidth: bytes read + written per second");
  mem->add_option("--kind", opts->kinds,
                  "copy | copy_kernel | triad, comma separated (default copy)");
  mem->add_option("--mib", opts->mib, "size of each array, MiB (default 1024)");
  mem->add_option("--input", opts->input,
                  "what the source arrays hold: random (default), zeros, constant (byte 0x55)");
  add_run_options(mem, *opts);
  mem->callback(set_run("mem"));

  auto* fma =
      bench->add_subcommand("fma", "FP32 FMA throughput in registers: follows the SM clock");
  fma->add_option("--iterations", opts->iterations,
                  "loop trips per thread, 256 FMA each (default 2048)");
  add_run_options(fma, *opts);
  fma->callback(set_run("fma"));

  auto* compare = bench->add_subcommand(
      "compare", "two --json reports side by side: rate, B/A, clocks, power, efficiency");
  compare->add_option("files", opts->compare_files, "A.json B.json")->expected(2);
  compare->callback([&ctx, opts] { ctx.run = [&ctx, opts] { return run_compare(ctx, *opts); }; });

  add_bench_p2p_command(bench, ctx);
  add_bench_nccl_command(bench, ctx);
}

}  // namespace gpuclk::cli
