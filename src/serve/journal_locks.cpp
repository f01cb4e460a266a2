#include "serve/journal_locks.h"

#include <optional>

#include "control/journal_store.h"
#include "control/settings.h"
#include "util/thread_name.h"

namespace gpuclk::serve {

void JournalLocks::start() {
  refresh();
  thread_ = std::thread([this] {
    util::name_this_thread("gpuclk-locks");
    std::unique_lock lock(mutex_);
    while (!stop_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; })) {
      lock.unlock();
      refresh();
      lock.lock();
    }
  });
}

void JournalLocks::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<ExtraSeries> JournalLocks::series() const {
  std::lock_guard lock(mutex_);
  return series_;
}

void JournalLocks::refresh() {
  auto fresh = read();
  std::lock_guard lock(mutex_);
  series_ = std::move(fresh);
}

std::vector<ExtraSeries> JournalLocks::read() const {
  std::vector<ExtraSeries> out;
  std::optional<control::Journal> journal;
  try {
    journal = control::JournalStore(journal_dir_).try_load();
  } catch (const std::exception&) {
    // Unreadable: no locks known, as with no journal.
  }
  const auto& facts = service_.facts();
  for (std::size_t i = 0; i < facts.size(); ++i) {
    const auto* entry = journal ? journal->find(facts[i].key.uuid) : nullptr;
    for (const auto& [setting, domain] :
         {std::pair{control::Setting::locked_gpu_clocks, "sm"},
          std::pair{control::Setting::locked_memory_clocks, "memory"}}) {
      control::ClockLock lock;
      if (entry && entry->applied.has(setting))
        lock = setting == control::Setting::locked_gpu_clocks
                   ? *entry->applied.locked_gpu_clocks
                   : *entry->applied.locked_memory_clocks;
      out.push_back({"gpuclk_gpu_locked_clocks",
                     "1 while gpuclk's journal records a clock lock set on the GPU",
                     false,
                     i,
                     {{"domain", domain}},
                     lock.locked ? 1.0 : 0.0});
      if (!lock.locked) continue;
      if (!lock.min.symbolic())
        out.push_back({"gpuclk_gpu_locked_clock_min_hertz",
                       "Lower end of the clock lock gpuclk set",
                       false,
                       i,
                       {{"domain", domain}},
                       lock.min.mhz * 1e6});
      if (!lock.max.symbolic())
        out.push_back({"gpuclk_gpu_locked_clock_max_hertz",
                       "Upper end of the clock lock gpuclk set",
                       false,
                       i,
                       {{"domain", domain}},
                       lock.max.mhz * 1e6});
    }
  }
  return out;
}

}  // namespace gpuclk::serve
