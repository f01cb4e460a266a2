// What runs at each point of a sweep: the simulator's jobs (gpuclk --sim), the bench workloads
// on a real GPU (CUDA), or a user's command. A workload runs on the GPUs of one point and says
// how much work each did in the measured window; the caller samples telemetry over that window.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "gpu/sim_jobs.h"
#include "sweep/result.h"
#include "util/clock.h"

namespace gpuclk::sweep {

// The measured window: begin() right before it, end() right after (the sampler's start/stop).
struct Window {
  std::function<void()> begin, end;
};

struct WorkDone {
  double work = 0;                // in the workload's unit
  double seconds = 0;             // the window's length as this GPU's work saw it
  std::string error;              // the work failed (empty: it did not)
  unsigned runs = 1;              // command runs or measured windows inside the window
  std::vector<double> run_rates;  // each run's or window's own rate (unit/s), in order
  std::optional<double> rate;     // the point's rate when it is not work / seconds
};

// A workload's window: `warmup`, then `windows` measured windows of `measure` back to back
// (--repeat N: the point's rate is their median).
struct Timing {
  Clock::Duration warmup{}, measure{};
  unsigned windows = 1;
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual WorkUnit unit() const = 0;
  // "gemm-bf16 (simulated)", "command: python train.py"
  virtual std::string describe() const = 0;
  // The data the work moves, which sets its power (a GEMM on zeros draws a third less than on
  // random values): "random", or "the command's own".
  virtual std::string data() const = 0;
  // Runs on `gpus` at once: warms up, calls window.begin(), measures, calls window.end(), and
  // stops. Returns one WorkDone per GPU, in order. `stop` asks to end early (a signal).
  virtual std::vector<WorkDone> run(const std::vector<gpu::Device*>& gpus, const Window& window,
                                    const std::function<bool()>& stop) = 0;
};

// The bench workload names sweep accepts: gemm-bf16 … mem-triad, fma.
const std::vector<std::string>& workload_names();

// The simulator's job of kind `name` (amounts in FLOP → TFLOP, bytes → GB): each point starts
// a job with no fixed amount, waits the warm-up, and counts what the job did in the window.
std::unique_ptr<Workload> simulated_workload(gpu::SimJobs jobs, const std::string& name,
                                             const Clock& clock, Timing timing);

// The bench workload `name` on real GPUs through CUDA (throws not_supported in a build without
// CUDA, saying how to enable it).
std::unique_ptr<Workload> bench_workload(const std::string& name, Timing timing);

// A command run `repeat` times back to back per point, all inside the measured window, with
// CUDA_VISIBLE_DEVICES naming the point's GPUs (their UUIDs) and, under the simulator,
// GPUCLK_NVML_LIB naming it, so NVML clients in the command see the same node. Its work is the
// runs (rate: runs / wall time of all of them), or with `metric` the rate each run prints: the
// first capture group (else the whole match) of the last line of its standard output matching
// the regex, in `metric_unit`/s; the point's rate is then their mean. The first run that fails
// ends the point (the error names it); a signal ends it between runs. Output goes to our stderr.
struct CommandOptions {
  std::vector<std::string> argv;
  unsigned repeat = 1;
  std::optional<std::string> metric;  // regex
  std::string metric_unit = "unit";
  std::string nvml_library;  // exported as GPUCLK_NVML_LIB when set
};
std::unique_ptr<Workload> command_workload(CommandOptions options, const Clock& clock);

}  // namespace gpuclk::sweep
