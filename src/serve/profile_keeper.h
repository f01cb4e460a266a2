// `serve --profile PROFILE.toml`: the service keeps the GPUs at a profile (the desired state).
// At start the profile is applied as `gpuclk apply` applies it (src/control, journaled, all or
// nothing); then every --profile-check interval each GPU is compared with it — application
// clocks, power limit and persistence from NVML, clock locks from the journal — and a GPU that
// drifted (driver reload, GPU reset, another tool's write) gets the profile again, journaled,
// with a log line naming the setting, the value found and the value restored. In read-only
// mode drift is only reported. With --govern the governor owns the SM clock lock: the profile's
// locked_gpu_clocks is neither applied nor kept. On SIGTERM the profile stays applied;
// `gpuclk restore` undoes it (docs/serve.md).
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "control/gpu_control.h"
#include "control/profile.h"
#include "control/report.h"
#include "control/session.h"
#include "control/transaction.h"
#include "gpu/device.h"
#include "serve/service.h"

namespace gpuclk::serve {

class ProfileKeeper {
 public:
  // Loads and validates the profile against the `selected` GPUs (exit 2 before any write), then
  // applies it; a change that fails is undone and thrown with apply's exit code. `governed`:
  // the governor owns the SM clock lock, so the profile's locked_gpu_clocks is left out.
  // `all`: the service's GPUs, to label series by position. `session`: where the journal is
  // and read-only mode (drift is then reported, never corrected); its command is set here.
  ProfileKeeper(control::SessionOptions session, const std::string& path,
                std::chrono::milliseconds check, bool governed, const gpu::DeviceSet& all,
                const std::vector<gpu::Device*>& selected);
  ~ProfileKeeper();
  ProfileKeeper(const ProfileKeeper&) = delete;
  ProfileKeeper& operator=(const ProfileKeeper&) = delete;

  void start();
  void stop();
  std::vector<ExtraSeries> series() const;
  // The settings the profile keeps on some GPU (delegated requests may not change them).
  std::set<control::Setting> settings() const;

 private:
  struct GpuState {
    std::size_t position = 0;
    double drifts = 0, corrections = 0;
    bool in_sync = true;
  };
  control::ChangeReport pass();
  void check(bool at_start);

  std::string path_, command_;
  std::filesystem::path journal_dir_;
  std::chrono::milliseconds every_;
  bool read_only_ = false;
  std::optional<control::ResidentSession> session_;
  std::optional<control::ControlSession> dry_session_;
  std::vector<std::unique_ptr<control::GpuControl>> controls_;
  std::vector<control::GpuChange> changes_;
  // Differences already logged (UUID, setting) → the value found, so a lasting one is not
  // logged at every check. Used by check() only (the constructor, then the check thread).
  std::map<std::pair<std::string, control::Setting>, std::string> reported_;

  mutable std::mutex mutex_;
  std::map<std::string, GpuState> state_;  // by UUID
  std::optional<double> last_check_;       // Unix time of the last completed check
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpuclk::serve
