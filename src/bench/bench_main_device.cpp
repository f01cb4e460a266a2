// gpuclk-bench-probe: runs the benchmark workloads and prints one JSON object, for the GPU machine
// before `gpuclk bench` exists (and for perf/bench_vs_torch.sh after). Exit status: 0 when every
// run passed its check, 1 when a check failed, otherwise the gpuclk::Error code of the failure.
#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/workload.h"
#include "util/error.h"
#include "util/text.h"

namespace {

using gpuclk::bench::WorkloadSpec;
using Json = nlohmann::ordered_json;

Json to_json(const gpuclk::bench::DeviceInfo& d) {
  return Json{{"ordinal", d.ordinal},
              {"name", d.name},
              {"uuid", d.uuid},
              {"pci_bus_id", d.pci_bus_id},
              {"sm_count", d.sm_count},
              {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
              {"memory_bytes", d.memory_bytes}};
}

Json spec_json(const WorkloadSpec& spec) {
  using namespace gpuclk::bench;
  if (const auto* g = std::get_if<GemmSpec>(&spec)) {
    return Json{{"dtype", to_string(g->dtype)},
                {"m", g->m},
                {"n", g->n},
                {"k", g->k},
                {"workspace_bytes", g->workspace_bytes},
                {"autotune_candidates", g->autotune_candidates}};
  }
  if (const auto* m = std::get_if<MemSpec>(&spec)) {
    return Json{{"kind", to_string(m->kind)}, {"bytes", m->bytes}};
  }
  return Json{{"iterations", std::get<FmaSpec>(spec).iterations}};
}

Json to_json(const gpuclk::bench::Result& r, const WorkloadSpec& spec) {
  Json repetitions = Json::array();
  for (const auto& rep : r.repetitions) {
    repetitions.push_back(Json{{"start_s", rep.start_seconds},
                               {"seconds", rep.seconds},
                               {"launches", rep.launches},
                               {"rate", rep.rate}});
  }
  Json details = Json::object();
  for (const auto& [key, value] : r.details) details[key] = value;
  const auto& v = r.verification;
  return Json{
      {"device", to_json(r.device)},
      {"workload", r.workload},
      {"variant", r.variant},
      {"input", r.input},
      {"params", spec_json(spec)},
      {"unit", gpuclk::bench::to_string(r.unit)},
      {"work_per_launch", r.work_per_launch},
      {"rate", Json{{"median", r.rate.median},
                    {"mean", r.rate.mean},
                    {"min", r.rate.min},
                    {"max", r.rate.max},
                    {"stddev", r.rate.stddev},
                    {"spread", r.rate.spread},
                    {"count", r.rate.count}}},
      {"overall_rate", r.overall_rate},
      {"window_host_seconds", std::chrono::duration<double>(r.window_end - r.window_start).count()},
      {"verification", Json{{"checked", v.checked},
                            {"passed", v.passed},
                            {"samples", v.samples},
                            {"failures", v.failures},
                            {"max_error", v.max_error},
                            {"bound", v.bound},
                            {"worst_of_allowed", v.worst_of_allowed},
                            {"method", v.method}}},
      {"details", details},
      {"repetitions", repetitions}};
}

Json error_json(int device, const WorkloadSpec& spec, const std::exception_ptr& error,
                int& exit_code) {
  Json j{{"device", device},
         {"workload", gpuclk::bench::workload_name(spec)},
         {"variant", gpuclk::bench::describe(spec)}};
  try {
    std::rethrow_exception(error);
  } catch (const gpuclk::Error& e) {
    j["error"] = e.what();
    j["hint"] = e.hint();
    j["exit_code"] = int(e.code());
    if (exit_code == 0 || exit_code == 1) exit_code = int(e.code());
  } catch (const std::exception& e) {
    j["error"] = e.what();
    exit_code = int(gpuclk::ExitCode::other);
  }
  return j;
}

struct Options {
  std::string devices = "0";
  bool concurrent = false;
  bool progress = false;
  gpuclk::bench::RunOptions run;
  // gemm
  std::string dtypes = "bf16";
  std::int64_t m = 8192, n = 8192, k = 8192;
  double workspace_mib = 64;
  int autotune = 4;
  // mem
  std::string kinds = "copy,copy_kernel,triad";
  double mib = 1024;
  // fma
  std::int64_t iterations = 2048;
};

std::vector<WorkloadSpec> build_specs(const std::string& workload, const Options& o) {
  using namespace gpuclk::bench;
  std::vector<WorkloadSpec> specs;
  if (workload == "gemm") {
    for (const std::string& name : gpuclk::text::split(o.dtypes)) {
      auto dtype = parse_gemm_dtype(name);
      if (!dtype)
        throw gpuclk::bad_argument("unknown dtype '" + name + "'",
                                   "use fp32, tf32, fp16, bf16 or fp8");
      specs.push_back(
          GemmSpec{*dtype, o.m, o.n, o.k, std::size_t(o.workspace_mib * 1024 * 1024), o.autotune});
    }
  } else if (workload == "mem") {
    for (const std::string& name : gpuclk::text::split(o.kinds)) {
      auto kind = parse_mem_kind(name);
      if (!kind)
        throw gpuclk::bad_argument("unknown mem kind '" + name + "'",
                                   "use copy, copy_kernel or triad");
      specs.push_back(MemSpec{*kind, std::size_t(o.mib * 1024 * 1024) / 16 * 16});
    }
  } else {
    specs.push_back(FmaSpec{o.iterations});
  }
  for (const auto& s : specs) validate(s);
  return specs;
}

std::vector<int> parse_devices(const std::string& list) {
  std::vector<int> devices;
  if (list == "all") {
    const int count = gpuclk::bench::device_count();
    for (int d = 0; d < count; ++d) devices.push_back(d);
    return devices;
  }
  for (const std::string& item : gpuclk::text::split(list)) {
    try {
      devices.push_back(std::stoi(item));
    } catch (const std::exception&) {
      throw gpuclk::bad_argument("bad device '" + item + "'", "use CUDA ordinals: 0,1 or all");
    }
  }
  return devices;
}

int run_probe(const std::string& workload, const Options& o) {
  const std::vector<WorkloadSpec> specs = build_specs(workload, o);
  const std::vector<int> devices = parse_devices(o.devices);
  int runtime_version = 0, driver_version = 0;
  (void)cudaRuntimeGetVersion(&runtime_version);
  (void)cudaDriverGetVersion(&driver_version);

  gpuclk::bench::RunOptions run = o.run;
  std::mutex progress_mutex;
  if (o.progress) {
    run.on_repetition = [&](const gpuclk::bench::Progress& p) {
      std::lock_guard lock(progress_mutex);
      std::fprintf(stderr, "gpu %d  repetition %d/%d  %.4g /s\n", p.device, p.repetition + 1,
                   p.repetitions, p.rate);
    };
  }

  Json results = Json::array();
  Json errors = Json::array();
  int exit_code = 0;
  auto record = [&](int device, const WorkloadSpec& spec,
                    const std::optional<gpuclk::bench::Result>& result,
                    const std::exception_ptr& error) {
    if (result) {
      results.push_back(to_json(*result, spec));
      if (result->verification.checked && !result->verification.passed && exit_code == 0) {
        exit_code = 1;
      }
    } else {
      errors.push_back(error_json(device, spec, error, exit_code));
    }
  };
  for (const WorkloadSpec& spec : specs) {
    if (o.concurrent) {
      for (const auto& outcome : gpuclk::bench::run_concurrent(spec, devices, run)) {
        record(outcome.device, spec, outcome.result, outcome.error);
      }
      continue;
    }
    for (int device : devices) {
      try {
        record(device, spec, gpuclk::bench::run(spec, device, run), nullptr);
      } catch (...) {
        record(device, spec, std::nullopt, std::current_exception());
      }
    }
  }
  Json out{{"tool", "gpuclk-bench-probe"},
           {"cuda_runtime", runtime_version},
           {"cuda_driver", driver_version},
           {"concurrent", o.concurrent},
           {"seconds", o.run.seconds},
           {"warmup_seconds", o.run.warmup_seconds},
           {"results", results},
           {"errors", errors}};
  std::cout << out.dump(2) << std::endl;
  return exit_code;
}

}  // namespace

// A function-try-block: nothing escapes main (setting up the options may throw too).
int main(int argc, char** argv) try {
  Options o;
  CLI::App app{"gpuclk-bench-probe: gpuclk's benchmark workloads, JSON on stdout"};
  app.add_option("-d,--devices", o.devices, "CUDA ordinals, comma separated, or all");
  app.add_flag("--concurrent", o.concurrent, "run on all listed devices at once");
  app.add_flag("--progress", o.progress, "a line on stderr per repetition");
  app.add_option("--seconds", o.run.seconds, "measured window per workload (s)");
  app.add_option("--warmup", o.run.warmup_seconds, "warm-up per workload (s)");
  app.add_option("--repetition-seconds", o.run.repetition_seconds, "length of one repetition (s)");
  app.add_option("--min-repetitions", o.run.min_repetitions, "at least this many repetitions");
  bool no_verify = false;
  app.add_flag("--no-verify", no_verify, "skip the result check");
  auto* gemm = app.add_subcommand("gemm", "cuBLASLt GEMM");
  gemm->add_option("--dtype", o.dtypes, "fp32,tf32,fp16,bf16,fp8 (comma separated)");
  gemm->add_option("--m", o.m);
  gemm->add_option("--n", o.n);
  gemm->add_option("--k", o.k);
  gemm->add_option("--workspace-mib", o.workspace_mib, "cuBLASLt workspace (MiB)");
  gemm->add_option("--autotune", o.autotune, "heuristic candidates to time (1 = none)");
  auto* mem = app.add_subcommand("mem", "device memory bandwidth");
  mem->add_option("--kind", o.kinds, "copy,copy_kernel,triad (comma separated)");
  mem->add_option("--mib", o.mib, "size of each array (MiB)");
  auto* fma = app.add_subcommand("fma", "FP32 FMA throughput");
  fma->add_option("--iterations", o.iterations, "loop trips per thread (256 FMA each)");
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  o.run.verify = !no_verify;
  const std::string workload = app.get_subcommands().front()->get_name();
  try {
    return run_probe(workload, o);
  } catch (const gpuclk::Error& e) {
    std::cerr << "gpuclk-bench-probe: " << e.what() << "\n";
    if (!e.hint().empty()) std::cerr << "  " << e.hint() << "\n";
    return int(e.code());
  } catch (const std::exception& e) {
    std::cerr << "gpuclk-bench-probe: " << e.what() << "\n";
    return int(gpuclk::ExitCode::other);
  }
} catch (...) {
  std::cerr << "gpuclk-bench-probe: unexpected error while reading the options\n";
  return int(gpuclk::ExitCode::other);
}
