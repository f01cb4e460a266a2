#include "bench/measure.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace gpuclk::bench {
namespace {

// Allocation, autotuning and verification around each window (s): generous, it only sizes
// the sampler's ring buffers.
constexpr double kOverheadSeconds = 10;

// Result windows are on the host's steady clock; the sampler's on the Clock (the same on real
// hardware, scaled under the simulator). One offset, taken once, maps the first to the second.
class WindowMapper {
 public:
  explicit WindowMapper(const Clock& clock)
      : offset_(clock.now().time_since_epoch() -
                std::chrono::duration_cast<telemetry::Duration>(
                    std::chrono::steady_clock::now().time_since_epoch())) {}
  telemetry::TimePoint operator()(std::chrono::steady_clock::time_point t) const {
    return telemetry::TimePoint(
        std::chrono::duration_cast<telemetry::Duration>(t.time_since_epoch()) + offset_);
  }

 private:
  telemetry::Duration offset_;
};

struct Finished {
  const WorkloadSpec* spec;
  std::size_t target;
  Result result;
};

RunError run_error(const Target& target, const WorkloadSpec& spec, std::exception_ptr error) {
  RunError e{target.facts.index, workload_name(spec), describe(spec), ExitCode::other, {}, {}};
  try {
    std::rethrow_exception(std::move(error));
  } catch (const Error& err) {
    e.code = err.code();
    e.message = err.what();
    e.hint = err.hint();
  }
  return e;
}

}  // namespace

double expected_seconds(std::size_t specs, std::size_t targets, const MeasureOptions& options) {
  const double runs = double(specs) * (options.concurrent ? 1.0 : double(targets));
  return runs * (options.run.warmup_seconds + options.run.seconds + 1);
}

Measurement measure(std::span<const WorkloadSpec> specs, std::span<const Target> targets,
                    std::vector<std::unique_ptr<telemetry::GpuSource>> sources, const Clock& clock,
                    const MeasureOptions& options, const Runner& runner) {
  Measurement out;
  out.sampling.fast_interval = options.sample_interval;
  out.sampling.slow_interval = std::chrono::milliseconds(500);
  const double runs = double(specs.size()) * double(options.concurrent ? 1 : targets.size());
  const double seconds =
      runs * (options.run.warmup_seconds + options.run.seconds + kOverheadSeconds);
  const double ticks = seconds / std::chrono::duration<double>(options.sample_interval).count();
  out.sampling.fast_capacity = std::max<std::size_t>(1000, std::size_t(std::ceil(ticks * 1.5)));
  out.sampling.slow_capacity = std::max<std::size_t>(200, std::size_t(std::ceil(seconds * 3)));
  telemetry::Sampler sampler(std::move(sources), clock, out.sampling);
  const WindowMapper to_clock(clock);

  std::vector<Finished> finished;
  auto started = [&](const WorkloadSpec& spec, std::span<const int> ordinals) {
    if (options.on_workload_start) options.on_workload_start(spec, ordinals);
  };
  auto ended = [&] {
    if (options.on_workload_end) options.on_workload_end();
  };
  sampler.start();
  for (const WorkloadSpec& spec : specs) {
    if (options.concurrent) {
      std::vector<int> ordinals;
      for (const Target& t : targets) ordinals.push_back(t.cuda_ordinal);
      started(spec, ordinals);
      std::vector<DeviceOutcome> outcomes = runner.run_concurrent(spec, ordinals, options.run);
      ended();
      for (std::size_t i = 0; i < outcomes.size() && i < targets.size(); ++i) {
        if (outcomes[i].result)
          finished.push_back({&spec, i, std::move(*outcomes[i].result)});
        else
          out.errors.push_back(run_error(targets[i], spec, outcomes[i].error));
      }
      continue;
    }
    for (std::size_t i = 0; i < targets.size(); ++i) {
      started(spec, std::span<const int>(&targets[i].cuda_ordinal, 1));
      try {
        finished.push_back({&spec, i, runner.run(spec, targets[i].cuda_ordinal, options.run)});
      } catch (const Error&) {
        out.errors.push_back(run_error(targets[i], spec, std::current_exception()));
      }
      ended();
    }
  }
  sampler.stop();

  for (Finished& f : finished) {
    const telemetry::Summary window =
        sampler.summary(f.target, to_clock(f.result.window_start), to_clock(f.result.window_end));
    GpuFacts facts = targets[f.target].facts;
    if (!facts.power_limit) facts.power_limit = sampler.info(f.target).power_limit;
    out.reports.push_back(make_report(*f.spec, f.result, facts, &window));
  }
  return out;
}

}  // namespace gpuclk::bench
