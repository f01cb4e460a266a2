// The read seam of `stat`: the readings of the GPUs over one command's run, from the command's
// own sampler (NVML in this process) or from a running `gpuclk serve`'s stream (docs/serve.md:
// this process then loads no NVML), summarised the same way (telemetry::SummaryBuilder). The
// caller never knows which, as top's feeds (tui/feed.h); it picks one with open_*_watch().
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "gpu/selection.h"
#include "telemetry/sampler.h"
#include "telemetry/summary.h"
#include "util/clock.h"

namespace gpuclk::serve {

class Client;
struct Hello;

// What one GPU did during the run.
struct WatchedGpu {
  telemetry::GpuInfo info;
  telemetry::Summary summary;
  telemetry::GpuHealth health;
  std::optional<double> truth_energy_j;  // the simulator's exact energy over the run
};

struct Watched {
  std::string sampled_by;  // "this process" or "gpuclk serve" (its socket's stream)
  telemetry::SamplerOptions sampling;
  telemetry::TimingStats timing;
  std::vector<WatchedGpu> gpus;  // every watched GPU, in the order they were given
};

class RunWatch {
 public:
  virtual ~RunWatch() = default;
  // The window starts: call it right before the command starts.
  virtual void start() = 0;
  // While the command runs (every 500 ms or so): adds to `used` the index of each watched GPU on
  // which a process that `owns` names holds a context. Never throws: a service that stopped
  // answering makes finish() throw.
  virtual void attribute(const std::function<bool(pid_t)>& owns, std::set<unsigned>& used) = 0;
  // The window ends (the command has ended): what each GPU did. Throws Error when the service
  // stopped answering during the run (no report then).
  virtual Watched finish() = 0;
};

// The command's own sampler over `devices`, with `options` (its intervals and fields).
std::unique_ptr<RunWatch> open_sampler_watch(const std::vector<gpu::Device*>& devices,
                                             const Clock& clock,
                                             const telemetry::SamplerOptions& options);

// The stream of the service whose `hello` answered through `client` (which outlives the watch),
// over a connection of its own. `select` picks the positions of the watched GPUs from the status
// answer's GPU keys (-i). nullptr when the service samples at another interval than `interval`:
// the caller samples itself. Throws Error (exit 255) when the service stops answering before the
// run.
std::unique_ptr<RunWatch> open_service_watch(
    Client& client, const Hello& hello,
    const std::function<std::vector<std::size_t>(const std::vector<gpu::DeviceKey>& keys)>& select,
    telemetry::Duration interval);

}  // namespace gpuclk::serve
