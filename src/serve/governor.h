// `serve --govern POLICY`: the energy governor (govern::GovernorRun) inside the service, on the
// selected GPUs, on a thread of its own with its own sampler — it needs GPM every 20 ms and no
// energy reads, the service's sampler the opposite. Its writes go through src/control with the
// journal; the journal's lock is taken for each write only (control::ResidentSession), so a
// `gpuclk set` from a shell is not kept waiting, and a GPU whose clocks such a command takes
// over is left to it until released. SIGTERM/SIGINT stop it first and restore its clocks; after
// kill -9 `gpuclk restore` does. With --profile the profile's locked_gpu_clocks is left to the
// governor (profile_keeper.h).
//
// Thread-safety: start()/stop() from the controlling thread; series() from any thread.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "control/gpu_control.h"
#include "control/session.h"
#include "govern/policy.h"
#include "govern/run.h"
#include "gpu/device.h"
#include "serve/service.h"
#include "util/clock.h"
#include "util/error.h"

namespace gpuclk::serve {

struct GovernOptions {
  std::string policy;  // threshold | geopm | phase | bandit
  govern::PolicyOptions policy_options;
  telemetry::Duration interval = std::chrono::milliseconds(20);
  std::string log;  // decision log (JSON Lines); empty: none
  bool dry_run = false;
};

class ServiceGovernor {
 public:
  // Checks the policy, the journal (a GPU whose clocks another command holds locked is refused,
  // exit 255) and opens the GPUs; nothing is written before start(). In read-only mode the
  // governor runs as a dry run (decisions logged, nothing written). `keep_profile`: serve
  // --profile keeps the GPUs' other settings, so stopping puts back only the clock lock
  // instead of restoring the GPUs whole. `all`: the service's GPUs, to label series by position.
  ServiceGovernor(control::SessionOptions session, const GovernOptions& options,
                  const std::vector<gpu::Device*>& selected, const gpu::DeviceSet& all,
                  const Clock& clock, bool keep_profile);
  ~ServiceGovernor();
  ServiceGovernor(const ServiceGovernor&) = delete;
  ServiceGovernor& operator=(const ServiceGovernor&) = delete;

  void start();
  // Stops the governor and restores its clocks; the exit code of that (ok when all went well).
  // Idempotent.
  ExitCode stop();
  std::vector<ExtraSeries> series() const;

 private:
  // The clock locks a governor that is gone left (govern::abandoned_governor_locks): put back,
  // with a line each, before this one starts. Throws Error when that fails.
  void put_back_abandoned(const std::vector<gpu::Device*>& devices, const std::string& command);
  std::atomic<bool> stop_{false};
  std::optional<control::ResidentSession> session_;
  std::optional<control::ControlSession> dry_session_;
  std::vector<std::unique_ptr<control::GpuControl>> controls_;
  std::optional<govern::GovernorRun> run_;
  std::map<std::string, std::size_t> position_;
  std::string policy_;
  bool dry_run_ = false;
  std::thread thread_;
  ExitCode failed_ = ExitCode::ok;
};

}  // namespace gpuclk::serve
