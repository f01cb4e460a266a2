// The bench workloads on real GPUs (src/bench, CUDA), measured over the bench's own window.
#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "bench/device_map.h"
#include "bench/workload.h"
#include "sweep/repeat.h"
#include "sweep/workload.h"
#include "util/error.h"

namespace gpuclk::sweep {
namespace {

bench::WorkloadSpec spec_of(const std::string& name) {
  if (name.rfind("gemm-", 0) == 0) {
    if (auto dtype = bench::parse_gemm_dtype(name.substr(5))) {
      bench::GemmSpec g;
      g.dtype = *dtype;
      return g;
    }
  }
  if (name == "mem-copy") return bench::MemSpec{bench::MemKind::copy};
  if (name == "mem-triad") return bench::MemSpec{bench::MemKind::triad};
  if (name == "fma") return bench::FmaSpec{};
  throw bad_argument(fmt::format("unknown workload '{}'", name));
}

class BenchWorkload final : public Workload {
 public:
  BenchWorkload(std::string name, Timing timing)
      : name_(std::move(name)), spec_(spec_of(name_)), timing_(timing) {
    if (!bench::built_with_cuda()) bench::device_count();  // throws not_supported with the hint
  }

  WorkUnit unit() const override { return {name_.rfind("mem-", 0) == 0 ? "GB" : "TFLOP"}; }
  std::string describe() const override { return name_ + " (" + bench::describe(spec_) + ")"; }
  // The bench fills its inputs with random values (uniform in [-1, 1), random words for mem).
  std::string data() const override { return "random"; }

  std::vector<WorkDone> run(const std::vector<gpu::Device*>& gpus, const Window& window,
                            const std::function<bool()>&) override {
    std::vector<bench::DeviceInfo> cuda;
    cuda.reserve(static_cast<std::size_t>(std::max(0, bench::device_count())));
    for (int d = 0; d < bench::device_count(); ++d) cuda.push_back(bench::device_info(d));
    std::vector<bench::NvmlGpu> nvml;
    nvml.reserve(gpus.size());
    for (auto* g : gpus) {
      nvml.push_back({g->index(), g->name(), g->uuid(), g->bus_id()});
    }
    const auto ordinals = bench::cuda_ordinals(nvml, cuda);
    bench::RunOptions o;
    // --repeat N: one window N times as long, cut into N windows of --duration afterwards.
    const unsigned windows = std::max(1U, timing_.windows);
    const double window_seconds = std::chrono::duration<double>(timing_.measure).count();
    o.seconds = window_seconds * windows;
    o.warmup_seconds = std::chrono::duration<double>(timing_.warmup).count();
    o.verify = false;
    // run_concurrent holds every device until all are warmed up: the window starts once.
    std::once_flag begun;
    o.on_phase = [&](int, bench::Phase p) {
      if (p == bench::Phase::warmed_up) std::call_once(begun, window.begin);
    };
    const auto outcomes = bench::run_concurrent(spec_, ordinals, o);
    std::call_once(begun, window.begin);
    window.end();
    const double scale = unit().name == "GB" ? 1e9 : 1e12;
    std::vector<WorkDone> out(gpus.size());
    for (std::size_t i = 0; i < outcomes.size() && i < out.size(); ++i) {
      const auto& r = outcomes[i].result;
      if (!r) {
        try {
          if (outcomes[i].error) std::rethrow_exception(outcomes[i].error);
          out[i].error = "the workload failed";
        } catch (const std::exception& e) {
          out[i].error = e.what();
        }
        continue;
      }
      out[i].seconds = std::chrono::duration<double>(r->window_end - r->window_start).count();
      out[i].work = r->overall_rate * out[i].seconds / scale;
      std::vector<TimedWork> pieces;
      pieces.reserve(r->repetitions.size());
      for (const auto& rep : r->repetitions)
        pieces.push_back({rep.start_seconds, rep.seconds, rep.rate * rep.seconds / scale});
      out[i].run_rates = window_rates(pieces, windows, window_seconds);
      out[i].runs = static_cast<unsigned>(out[i].run_rates.size());
      if (windows > 1 && !out[i].run_rates.empty()) out[i].rate = median(out[i].run_rates);
    }
    return out;
  }

 private:
  std::string name_;
  bench::WorkloadSpec spec_;
  Timing timing_;
};

}  // namespace

std::unique_ptr<Workload> bench_workload(const std::string& name, Timing timing) {
  return std::make_unique<BenchWorkload>(name, timing);
}

}  // namespace gpuclk::sweep
