// Clock locks cannot be read back from NVML: these series say what gpuclk's journal records as
// applied (`gpuclk status`'s "Set by gpuclk"). A thread of its own rereads the journal every
// second (a small file, renamed into place whole, so no lock is needed); a scrape copies the
// result — civetweb's threads have small stacks and no time for file reads. A GPU without a
// journal entry is unlocked as far as gpuclk knows.
//
// Thread-safety: start()/stop() from the controlling thread; series() from any thread.
#pragma once

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "serve/service.h"

namespace gpuclk::serve {

class JournalLocks {
 public:
  JournalLocks(std::filesystem::path journal_dir, const Service& service)
      : journal_dir_(std::move(journal_dir)), service_(service) {}
  ~JournalLocks() { stop(); }
  JournalLocks(const JournalLocks&) = delete;
  JournalLocks& operator=(const JournalLocks&) = delete;

  void start();
  void stop();  // idempotent
  std::vector<ExtraSeries> series() const;

 private:
  void refresh();
  std::vector<ExtraSeries> read() const;

  std::filesystem::path journal_dir_;
  const Service& service_;
  mutable std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::vector<ExtraSeries> series_;
  std::thread thread_;
};

}  // namespace gpuclk::serve
