#include "bench/nccl_measure.h"

#include <algorithm>
#include <cmath>

#include "telemetry/sampler.h"

namespace gpuclk::bench::nccl {
namespace {

// Bench nccl's length is not known before it runs (it depends on the links): the rings keep
// 20 minutes; a longer run keeps its last 20 minutes for the later operations' summaries.
constexpr double kRingSeconds = 20 * 60;

using SteadyPoint = std::chrono::steady_clock::time_point;

// The run's windows are on the host's steady clock, the sampler's on the Clock (the same on real
// hardware): one offset, taken once, maps the first to the second.
class WindowMapper {
 public:
  explicit WindowMapper(const Clock& clock)
      : offset_(clock.now().time_since_epoch() -
                std::chrono::duration_cast<telemetry::Duration>(
                    std::chrono::steady_clock::now().time_since_epoch())) {}
  telemetry::TimePoint operator()(SteadyPoint t) const {
    return telemetry::TimePoint(
        std::chrono::duration_cast<telemetry::Duration>(t.time_since_epoch()) + offset_);
  }

 private:
  telemetry::Duration offset_;
};

// Each GPU's telemetry over [from, to]. A window shorter than two sampling intervals (an
// operation over small sizes takes milliseconds) is widened to two around its middle, so it
// holds the samples nearest to it rather than none.
std::vector<GpuTelemetry> over_window(const telemetry::Sampler& sampler,
                                      const std::vector<unsigned>& gpus, telemetry::TimePoint from,
                                      telemetry::TimePoint to, telemetry::Duration interval) {
  if (to - from < 2 * interval) {
    const telemetry::TimePoint middle = from + (to - from) / 2;
    from = middle - interval;
    to = middle + interval;
  }
  std::vector<GpuTelemetry> out;
  for (std::size_t i = 0; i < gpus.size() && i < sampler.gpu_count(); ++i) {
    out.push_back(
        gpu_telemetry(gpus[i], sampler.summary(i, from, to), sampler.slow_samples(i, from, to)));
  }
  return out;
}

}  // namespace

telemetry::FieldSet sampled_fields() {
  return telemetry::FieldSet::standard().add(telemetry::Field::nvlink);
}

Measured measure(const Runner& runner, const RunOptions& options,
                 std::vector<std::unique_ptr<telemetry::GpuSource>> sources,
                 const std::vector<unsigned>& gpus, const Clock& clock,
                 telemetry::Duration interval) {
  telemetry::SamplerOptions sampling;
  sampling.fields = sampled_fields();
  sampling.fast_interval = interval;
  sampling.slow_interval = std::chrono::milliseconds(500);
  const double tick = std::chrono::duration<double>(interval).count();
  sampling.fast_capacity = std::max<std::size_t>(1000, std::size_t(std::ceil(kRingSeconds / tick)));
  sampling.slow_capacity = std::size_t(kRingSeconds * 2);
  telemetry::Sampler sampler(std::move(sources), clock, sampling);
  const WindowMapper to_clock(clock);

  Measured m;
  sampler.start();
  try {
    m.run = runner(options);
  } catch (...) {
    sampler.stop();
    throw;
  }
  sampler.stop();
  for (const OperationResult& op : m.run.operations) {
    m.telemetry.push_back(
        over_window(sampler, gpus, to_clock(op.start), to_clock(op.end), interval));
  }
  if (!m.run.pairs.empty()) {
    m.pairs_telemetry = over_window(sampler, gpus, to_clock(m.run.pairs.front().start),
                                    to_clock(m.run.pairs.back().end), interval);
  }
  return m;
}

}  // namespace gpuclk::bench::nccl
