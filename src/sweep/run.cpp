#include "sweep/run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpu/clock_reasons.h"
#include "telemetry/sampler.h"

namespace gpuclk::sweep {
namespace {

using WallClock = std::chrono::steady_clock;

PointResult point_from(const telemetry::Sampler& sampler, std::size_t i, gpu::Device& device,
                       const WorkDone& done, bool baseline, double requested, Axis axis) {
  PointResult p;
  p.gpu = device.index();
  p.uuid = device.uuid();
  p.baseline = baseline;
  p.requested = requested;
  p.seconds = done.seconds;
  p.work = done.work;
  p.error = done.error;
  if (done.rate) {
    p.rate = done.rate;
  } else if (done.seconds > 0 && (done.work > 0 || done.error.empty())) {
    p.rate = done.work / done.seconds;  // a point that failed before any work has no rate
  }
  p.runs = done.runs;
  p.run_rates = done.run_rates;
  const telemetry::Summary s = sampler.summary(i);
  if (s.sm_clock) p.median_sm_mhz = s.sm_clock->median.value();
  if (s.power_mean) p.power_w = s.power_mean->value();
  if (s.energy) p.energy_j = s.energy->value();
  if (s.temperature_max) p.temperature_c = s.temperature_max->value();
  // Mean power over mean rate: both are means over (nearly) the same window, so a few ms
  // between the work's and the energy counter's reads at the window's ends cancel out.
  if (p.power_w && p.rate && *p.rate > 0) p.energy_per_work = *p.power_w / *p.rate;
  if (s.gpm) {
    if (s.gpm->sm) p.gpm_sm = s.gpm->sm->value();
    if (s.gpm->tensor) p.gpm_tensor = s.gpm->tensor->value();
    if (s.gpm->dram) p.gpm_dram = s.gpm->dram->value();
  }
  for (const auto& r : s.clock_reasons) {
    for (const auto& info : gpu::clock_reasons()) {
      if (info.bit == r.bit) p.reasons.push_back({std::string(info.key), r.fraction.value()});
    }
  }
  std::vector<double> watts;
  for (const auto& f : sampler.fast_samples(i, s.from, s.to)) {
    if (f.power) watts.push_back(f.power->value());
  }
  p.power_p95_w = percentile95(watts);
  if (!baseline && axis == Axis::sm_clock && p.median_sm_mhz) {
    p.held_below = *p.median_sm_mhz < requested - 1;
  }
  return p;
}

}  // namespace

std::optional<double> percentile95(std::vector<double> watts) {
  if (watts.empty()) return std::nullopt;
  std::sort(watts.begin(), watts.end());
  const auto rank = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(watts.size())));
  return watts[std::clamp<std::size_t>(rank, 1, watts.size()) - 1];
}

SweepRun run_sweep(const std::vector<gpu::Device*>& gpus, Workload& workload,
                   const ApplyPoint& apply, const Restore& restore, const SweepOptions& options,
                   const Clock& clock, const std::function<bool()>& stop,
                   const std::function<void(const ProgressInfo&)>& progress) {
  std::vector<std::vector<gpu::Device*>> groups;
  if (options.concurrent) {
    groups.push_back(gpus);
  } else {
    for (auto* g : gpus) groups.push_back({g});
  }
  const std::size_t per_group = options.values.size() + (options.baseline ? 1 : 0);
  ProgressInfo info;
  info.total = groups.size() * per_group;
  const auto started = WallClock::now();
  SweepRun run;

  telemetry::SamplerOptions sampling;
  sampling.fast_interval = options.sample_interval;
  sampling.slow_interval =
      std::max<telemetry::Duration>(options.sample_interval, std::chrono::seconds(1));
  sampling.fast_capacity = 3000;
  sampling.slow_capacity = 300;

  for (const auto& group : groups) {
    // One point: baseline (nullopt) or a setting.
    const auto measure = [&](std::optional<double> value) {
      const std::string where = group.size() == 1 ? fmt::format("GPU {}", group[0]->index())
                                                  : fmt::format("{} GPUs", group.size());
      info.label = value ? fmt::format("{}: {} {}", where, *value, unit_of(options.axis))
                         : where + ": baseline";
      if (progress) progress(info);
      if (value) apply(group, *value);
      telemetry::Sampler sampler(telemetry::device_sources(group, sampling.fields), clock,
                                 sampling);
      const Window window{[&] { sampler.start(); }, [&] { sampler.stop(); }};
      const auto done = workload.run(group, window, stop);
      sampler.stop();
      bool failed = false;
      for (std::size_t i = 0; i < group.size(); ++i) {
        run.points.push_back(
            point_from(sampler, i, *group[i], done[i], !value, value.value_or(0), options.axis));
        failed = failed || !done[i].error.empty();
      }
      ++info.done;
      const double elapsed = std::chrono::duration<double>(WallClock::now() - started).count();
      info.eta_seconds =
          elapsed / static_cast<double>(info.done) * static_cast<double>(info.total - info.done);
      return failed;
    };
    try {
      if (options.baseline && !stop()) measure(std::nullopt);
      for (double v : options.values) {
        if (stop()) break;
        if (measure(v) && options.fail_fast) {
          run.failed_fast = !stop();
          break;
        }
      }
    } catch (...) {
      restore(group);
      throw;
    }
    restore(group);
    if (stop() || run.failed_fast) break;
  }
  run.interrupted = stop();
  if (progress) {
    info.label = "done";
    info.eta_seconds = 0;
    progress(info);
  }
  return run;
}

}  // namespace gpuclk::sweep
