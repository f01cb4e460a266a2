#include "bench/detail/timed_loop.h"

#include <array>

#include "bench/detail/cuda_resources.h"

namespace gpuclk::bench::detail {

namespace {
// Repetitions queued ahead of the one the host waits for.
constexpr int kQueuedAhead = 2;
}  // namespace

double warm_up(Kernel& kernel, cudaStream_t stream, double seconds, double chunk_seconds) {
  Event start, stop;
  // The first launch alone: it carries one-time costs (module load, cuBLAS setup) and its time
  // sizes the chunks that follow.
  start.record(stream);
  kernel.launch(stream);
  stop.record(stream);
  stop.synchronize();
  double per_launch = stop.seconds_since(start);
  const auto begin = std::chrono::steady_clock::now();
  const auto budget = std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() - begin < budget) {
    const int chunk = plan_measurement(per_launch, 0, chunk_seconds, 1).launches_per_repetition;
    start.record(stream);
    for (int i = 0; i < chunk; ++i) kernel.launch(stream);
    stop.record(stream);
    stop.synchronize();
    per_launch = stop.seconds_since(start) / chunk;
  }
  return per_launch;
}

TimedWindow measure(Kernel& kernel, cudaStream_t stream, const MeasurementPlan& plan, int device,
                    const std::function<void(const Progress&)>& on_repetition) {
  TimedWindow window;
  window.repetitions.reserve(std::size_t(plan.repetitions));
  const double work = kernel.work_per_launch() * plan.launches_per_repetition;
  Event start;
  // One end-of-repetition event per slot; a slot is reused only after the host has read it.
  std::array<Event, kQueuedAhead + 1> ends;
  auto enqueue = [&](int repetition) {
    for (int i = 0; i < plan.launches_per_repetition; ++i) kernel.launch(stream);
    ends[std::size_t(repetition) % ends.size()].record(stream);
  };

  // The stream is idle here, so the GPU starts within microseconds of window.start.
  GPUCLK_CUDA_CHECK(cudaStreamSynchronize(stream));
  window.start = std::chrono::steady_clock::now();
  start.record(stream);
  int queued = 0;
  while (queued < plan.repetitions && queued < kQueuedAhead) enqueue(queued++);

  double previous_end = 0;
  for (int r = 0; r < plan.repetitions; ++r) {
    const Event& end = ends[std::size_t(r) % ends.size()];
    end.synchronize();
    const double end_offset = end.seconds_since(start);
    if (queued < plan.repetitions) enqueue(queued++);
    Repetition repetition;
    repetition.start_seconds = previous_end;
    repetition.seconds = end_offset - previous_end;
    repetition.launches = plan.launches_per_repetition;
    repetition.rate = repetition.seconds > 0 ? work / repetition.seconds : 0;
    previous_end = end_offset;
    window.repetitions.push_back(repetition);
    if (on_repetition) {
      on_repetition(
          Progress{device, r, plan.repetitions, repetition.seconds, repetition.rate, end_offset});
    }
  }
  window.end = std::chrono::steady_clock::now();
  window.seconds = previous_end;
  return window;
}

}  // namespace gpuclk::bench::detail
