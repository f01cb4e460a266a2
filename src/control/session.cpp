#include "control/session.h"

#include <fmt/format.h>

#include <iostream>
#include <thread>

#include "host/process.h"

namespace gpuclk::control {

void settle() { std::this_thread::sleep_for(kSettleTime); }

namespace {

// What process `pid` runs (host::read_process's command line), its program named without its
// folder: "gpuclk set -i 0 --power-limit 500"; empty when it cannot be read.
std::string command_of(long pid) {
  const auto info = host::read_process(static_cast<unsigned>(pid));
  if (!info) return {};
  std::string text = info->command;
  if (const auto slash = text.find_last_of('/', text.find(' ')); slash != std::string::npos)
    text.erase(0, slash + 1);
  if (text.size() > 120) {
    text.resize(117);
    text += "...";
  }
  return text;
}

// The line a writer prints while another gpuclk holds the journal's lock: who holds it.
std::function<void(long)> waiting_line(const std::string& name, const JournalStore& store) {
  return [&name, &store](long pid) {
    const auto command = pid > 0 ? command_of(pid) : std::string();
    std::cerr << name << ": waiting for another gpuclk"
              << (pid > 0 ? fmt::format(" (pid {}{})", pid, command.empty() ? "" : ": " + command)
                          : "")
              << " to finish with " << store.dir().string() << "\n";
  };
}

std::vector<std::unique_ptr<GpuControl>> open_controls(const std::vector<gpu::Device*>& devices,
                                                       const std::optional<WriteAccess>& access) {
  std::vector<std::unique_ptr<GpuControl>> out;
  out.reserve(devices.size());
  for (auto* d : devices) out.push_back(std::make_unique<NvmlGpuControl>(*d, access));
  return out;
}

}  // namespace

void wait_for_journal(const SessionOptions& options) {
  const JournalStore store(options.journal_dir);
  store.lock(waiting_line(options.name, store), options.give_up);
}

Journal load_current(const JournalStore& store, const SessionOptions& options) {
  auto journal = store.load();
  const auto boot = current_boot_id();
  if (!journal.boot_id.empty() && !boot.empty() && journal.boot_id != boot &&
      !(options.simulated && options.simulated())) {
    const auto moved = store.archive("boot-" + journal.boot_id.substr(0, 8));
    std::cerr << options.name
              << ": the journal is from an earlier boot; a reboot reset those GPUs, so it was "
                 "moved to "
              << moved.string() << "\n";
    journal = Journal{};
  }
  return journal;
}

ControlSession::ControlSession(SessionOptions options, bool dry_run)
    : options_(std::move(options)), dry_run_(dry_run), store_(options_.journal_dir) {
  if (!dry_run_) access_ = allow_writes(options_.read_only, options_.command);
  if (dry_run_) {
    journal_ = store_.try_load().value_or(Journal{});
    return;
  }
  if (options_.before_lock) options_.before_lock("lock the journal");
  lock_.emplace(store_.lock(waiting_line(options_.name, store_), options_.give_up));
  signals_.emplace();
  journal_ = load_current(store_, options_);
}

PersistJournal ControlSession::persist() {
  return [this](const Journal& j) { store_.save(j); };
}

RunOptions ControlSession::options() const {
  RunOptions o;
  o.command = options_.command;
  o.dry_run = dry_run_;
  o.after_write = options_.after_write;
  if (signals_) o.interrupted = [this] { return signals_->interrupted(); };
  // Clock changes take effect within milliseconds; read back after they have.
  o.settle = settle;
  return o;
}

std::vector<std::unique_ptr<GpuControl>> ControlSession::open(
    const std::vector<gpu::Device*>& devices) const {
  return open_controls(devices, access_);
}

ResidentSession::ResidentSession(SessionOptions options)
    : options_(std::move(options)),
      access_(allow_writes(options_.read_only, options_.command)),
      store_(options_.journal_dir) {
  if (options_.before_lock) options_.before_lock("lock the journal");
  auto lock = store_.lock(waiting_line(options_.name, store_), options_.give_up);
  load_current(store_, options_);
}

ChangeReport ResidentSession::with_journal(const Change& change) {
  auto lock = store_.lock(waiting_line(options_.name, store_), options_.give_up);
  auto journal = load_current(store_, options_);
  return change(journal, [this](const Journal& j) { store_.save(j); });
}

RunOptions ResidentSession::options() const {
  RunOptions o;
  o.command = options_.command;
  return o;
}

std::vector<std::unique_ptr<GpuControl>> ResidentSession::open(
    const std::vector<gpu::Device*>& devices) const {
  return open_controls(devices, access_);
}

}  // namespace gpuclk::control
