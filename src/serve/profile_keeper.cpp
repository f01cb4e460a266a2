#include "serve/profile_keeper.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <iostream>
#include <string_view>

#include "control/validate.h"
#include "util/error.h"
#include "util/parse.h"
#include "util/thread_name.h"

namespace gpuclk::serve {

ProfileKeeper::ProfileKeeper(control::SessionOptions session, const std::string& path,
                             std::chrono::milliseconds every, bool governed,
                             const gpu::DeviceSet& all, const std::vector<gpu::Device*>& selected)
    : path_(path),
      command_("serve --profile " + path),
      journal_dir_(session.journal_dir),
      every_(every),
      read_only_(session.read_only) {
  session.command = command_;
  const auto profile = control::load_profile(path);
  auto requests = control::profile_requests(profile, all, selected);
  if (governed) {
    // The governor writes the SM clock lock; keeping the profile's would fight it.
    for (auto& r : requests) r.request.locked_gpu_clocks.reset();
    std::erase_if(requests, [](const control::DeviceRequest& r) { return r.request.empty(); });
  }
  std::vector<gpu::Device*> devices;
  devices.reserve(requests.size());
  for (const auto& r : requests) devices.push_back(r.device);
  if (read_only_) {
    dry_session_.emplace(session, true);
    controls_ = dry_session_->open(devices);
  } else {
    session_.emplace(session);
    controls_ = session_->open(devices);
  }
  // Every value against every GPU before anything is written, as `apply` checks it.
  std::vector<control::GpuCheck> gpus;
  for (std::size_t i = 0; i < requests.size(); ++i)
    gpus.push_back({requests[i].request, controls_[i]->facts()});
  const auto checked = control::validate_all(gpus, profile.snap);
  for (const auto& n : checked.notes) std::cerr << "gpuclk serve: profile: " + n + "\n";
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!checked.targets[i].empty()) changes_.push_back({controls_[i].get(), checked.targets[i]});
  }
  for (const auto& c : changes_) {
    const auto& uuid = c.gpu->facts().uuid;
    std::size_t p = 0;
    for (const auto& d : all) {
      if (d->uuid() == uuid) state_[uuid].position = p;
      ++p;
    }
  }
  std::cerr << fmt::format(
      "gpuclk serve: profile {} on {} GPU(s), checked every {} s{}{}\n", path_, changes_.size(),
      std::chrono::duration<double>(every_).count(),
      governed ? "; the governor owns the SM clock lock, so the profile's locked_gpu_clocks is "
                 "left to it"
               : "",
      read_only_ ? "; read-only mode: drift is reported, never corrected" : "");
  check(true);
}

ProfileKeeper::~ProfileKeeper() { stop(); }

control::ChangeReport ProfileKeeper::pass() {
  if (read_only_) {
    // The journal as it is now (its clock locks are what gpuclk set), never locked.
    control::Journal journal;
    try {
      journal = control::JournalStore(journal_dir_).try_load().value_or(control::Journal{});
    } catch (const std::exception&) {
    }
    control::RunOptions options;
    options.command = command_;
    options.dry_run = true;
    return control::apply_changes(
        changes_, journal, [](const control::Journal&) {}, options);
  }
  return session_->with_journal(
      [&](control::Journal& journal, const control::PersistJournal& persist) {
        auto options = session_->options();
        options.command = command_;
        // Clocks take effect within milliseconds; read back after they have.
        options.settle = control::settle;
        return control::apply_changes(changes_, journal, persist, options);
      });
}

void ProfileKeeper::check(bool at_start) {
  const auto report = pass();
  if (at_start && report.exit != ExitCode::ok)
    throw Error(report.exit, fmt::format("applying profile {} failed: {}", path_, report.error),
                report.hint);
  std::map<std::string, bool> in_sync;
  std::map<std::string, double> drifts, corrections;
  for (const auto& c : changes_) in_sync[c.gpu->facts().uuid] = true;
  for (const auto& s : report.settings) {
    const auto key = std::pair{s.uuid, s.setting};
    if (s.outcome == control::Outcome::unchanged) {
      reported_.erase(key);
      continue;
    }
    const auto label = control::label_of(s.setting);
    const bool corrected = s.outcome == control::Outcome::changed;
    if (!corrected) in_sync[s.uuid] = false;
    // A difference that stays (read-only mode, a write the GPU refuses) is logged once, and
    // again only when the value found changes.
    if (corrected) {
      reported_.erase(key);
    } else {
      const auto seen = reported_.find(key);
      if (seen != reported_.end() && seen->second == s.before) continue;
      reported_[key] = s.before;
    }
    if (at_start) {
      if (corrected)
        std::cerr << fmt::format("gpuclk serve: profile applied on GPU {}: {} {} -> {}\n", s.gpu,
                                 label, s.before, s.target);
      else
        std::cerr << fmt::format(
            "gpuclk serve: GPU {} differs from the profile: {} is {}, the "
            "profile has {} (read-only mode: not written)\n",
            s.gpu, label, s.before, s.target);
      continue;
    }
    drifts[s.uuid] += 1;
    if (corrected) {
      corrections[s.uuid] += 1;
      std::cerr << fmt::format(
          "gpuclk serve: profile drift corrected on GPU {}: {} was {}, restored {}\n", s.gpu, label,
          s.before, s.target);
    } else if (s.outcome == control::Outcome::would_change) {
      std::cerr << fmt::format(
          "gpuclk serve: profile drift on GPU {}: {} is {}, the profile has {} (read-only mode: "
          "not restored)\n",
          s.gpu, label, s.before, s.target);
    } else {
      std::cerr << fmt::format(
          "gpuclk serve: profile drift on GPU {}: {} is {}; restoring {} {}{}\n", s.gpu, label,
          s.before, s.target, control::to_string(s.outcome), s.error.empty() ? "" : ": " + s.error);
    }
  }
  if (!at_start && report.exit != ExitCode::ok)
    std::cerr << fmt::format("gpuclk serve: re-applying profile {} failed: {}\n", path_,
                             report.error);
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::lock_guard lock(mutex_);
  for (auto& [uuid, g] : state_) {
    g.in_sync = in_sync[uuid];
    g.drifts += drifts[uuid];
    g.corrections += corrections[uuid];
  }
  last_check_ = now;
}

void ProfileKeeper::start() {
  thread_ = std::thread([this] {
    util::name_this_thread("gpuclk-profile");
    std::unique_lock lock(mutex_);
    while (!stop_cv_.wait_for(lock, every_, [this] { return stopping_; })) {
      lock.unlock();
      try {
        check(false);
      } catch (const std::exception& e) {
        std::cerr << fmt::format("gpuclk serve: checking profile {} failed: {}\n", path_, e.what());
        // Not known to match: the series say so until a check goes through.
        std::lock_guard guard(mutex_);
        for (auto& [uuid, g] : state_) g.in_sync = false;
      }
      lock.lock();
    }
  });
}

void ProfileKeeper::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<ExtraSeries> ProfileKeeper::series() const {
  std::lock_guard lock(mutex_);
  std::vector<ExtraSeries> out;
  out.push_back({"gpuclk_profile_info",
                 "The profile the service keeps the GPUs at (value 1)",
                 false,
                 std::nullopt,
                 {{"profile", path_}, {"read_only", read_only_ ? "1" : "0"}},
                 1.0});
  if (last_check_)
    out.push_back({"gpuclk_profile_last_check_timestamp_seconds",
                   "When the GPUs were last compared with the profile (Unix time)",
                   false,
                   std::nullopt,
                   {},
                   *last_check_});
  for (const auto& [uuid, g] : state_) {
    out.push_back({"gpuclk_profile_in_sync",
                   "1 when the GPU matched the profile at the last check (after any correction)",
                   false,
                   g.position,
                   {},
                   g.in_sync ? 1.0 : 0.0});
    out.push_back({"gpuclk_profile_drifts_total",
                   "Settings found different from the profile at a check",
                   true,
                   g.position,
                   {},
                   g.drifts});
    out.push_back({"gpuclk_profile_drift_corrections_total",
                   "Settings re-applied because the GPU had drifted from the profile",
                   true,
                   g.position,
                   {},
                   g.corrections});
  }
  return out;
}

std::set<control::Setting> ProfileKeeper::settings() const {
  std::set<control::Setting> out;
  for (const auto& c : changes_)
    for (auto s : control::kWriteOrder)
      if (c.target.has(s)) out.insert(s);
  return out;
}

}  // namespace gpuclk::serve
