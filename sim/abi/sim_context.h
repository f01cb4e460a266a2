// The library's process-wide state: the scenario, the node model, simulated time and the state
// file shared with other processes. Every exported function holds mutex() while it uses it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "node_model.h"
#include "nvml/nvml_abi.h"
#include "scenario.h"
#include "state_file.h"

namespace gpuclk::sim::abi {

class Context {
 public:
  static Context& get();
  std::recursive_mutex& mutex() { return mutex_; }

  // nvmlInit_v2 / nvmlShutdown, reference counted like the real library.
  nvmlReturn_t init();
  nvmlReturn_t shutdown();
  bool initialized() const { return init_count_ > 0; }

  // Loads the scenario on first use (also for the gpuclk_sim_* helpers, which need no init).
  // false with last_error() set when it cannot be loaded.
  bool ensure_loaded();
  const std::string& last_error() const { return last_error_; }

  // Brings the model to "now": re-reads the state file if another process changed it, then
  // advances simulated time. Saves now and then so late joiners start close to now.
  void sync();
  NodeModel& model() { return *model_; }
  const Scenario& scenario() const { return *scenario_; }

  // Event waits (nvml_events.cpp). events_raised() counts the changes to what an event reports
  // (a GPU lost, its volatile ECC counts), as any thread's sync, write or reload brought them;
  // wait_for_change() sleeps, without the lock, until it moves or `until` (the lock held once).
  // synced_at(): when some thread last brought the model to now (steady clock), and whether
  // that was the calling thread.
  std::uint64_t events_raised() const { return events_raised_; }
  std::chrono::steady_clock::time_point synced_at() const { return synced_at_; }
  bool synced_by_this_thread() const { return synced_by_ == std::this_thread::get_id(); }
  void wait_for_change(std::unique_lock<std::recursive_mutex>& lock, std::uint64_t seen,
                       std::chrono::steady_clock::time_point until);

  // A write: under the file lock, reload, advance, apply, save. Returns what apply returned.
  Status mutate(const std::function<Status(NodeModel&)>& apply);

  // Moves simulated time forward by `seconds` at once (tests), and saves.
  void skip(double seconds);
  // Forgets the shared state: power-on at the start time again.
  void reset();

  double speed() const { return speed_; }
  double sim_now() const;
  double sim_at(long long wall_ns) const;  // simulated time at a system_clock time, ns
  // Timestamp NVML would print for simulated time t: µs since the epoch, following sim time.
  long long timestamp_us(double sim_s) const;
  const std::filesystem::path& scenario_path() const { return scenario_path_; }
  const std::filesystem::path& state_path() const { return state_->path(); }

  // A transient or scheduled error for this call, or nullopt. `telemetry`: a changing reading
  // (the only kind random read errors hit; scheduled errors name their function).
  std::optional<nvmlReturn_t> injected_error(std::size_t gpu, const char* function, bool telemetry);

 private:
  Context() = default;
  // State file → model (true), or a fresh model at the start time, saved (false).
  bool load_or_create(bool have_lock);
  void save();  // model → state file (caller holds the file lock)
  std::string encode() const;
  // After the model moved: counts a change to what events report and wakes the waiters.
  void note_events();
  bool decode(const std::string& bytes);

  std::recursive_mutex mutex_;
  int init_count_ = 0;
  bool loaded_ = false;
  std::string last_error_;
  std::filesystem::path scenario_path_;
  std::shared_ptr<const Scenario> scenario_;
  std::unique_ptr<NodeModel> model_;
  std::unique_ptr<StateFile> state_;
  double speed_ = 1;
  bool speed_from_env_ = false;
  long long anchor_wall_ns_ = 0;  // wall time at which simulated time was anchor_sim_s_
  double anchor_sim_s_ = 0;
  double start_s_ = 0;
  double powered_on_at_s_ = 0;  // the start time the node in the state file was powered on at
  long long last_save_wall_ns_ = 0;
  double last_save_sim_s_ = 0;
  bool save_failed_ = false;
  std::uint64_t call_counter_ = 0;
  std::condition_variable_any events_cv_;
  std::uint64_t events_raised_ = 0;
  std::uint64_t event_signature_ = 0;  // the sum of every GPU's lost flag and volatile ECC counts
  std::chrono::steady_clock::time_point synced_at_{};
  std::thread::id synced_by_;
};

}  // namespace gpuclk::sim::abi
