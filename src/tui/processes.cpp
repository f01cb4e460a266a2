#include "tui/processes.h"

#include <algorithm>

#include "host/process.h"

namespace gpuclk::tui {

std::vector<ProcessRow> ProcessTable::rows(const std::vector<Entry>& entries) {
  std::vector<ProcessRow> out;
  const auto now = std::chrono::steady_clock::now();
  // Forget processes not seen for a minute (they ended), so the table does not grow.
  std::erase_if(
      seen_, [&](const auto& entry) { return now - entry.second.when > std::chrono::minutes(1); });
  for (const auto& e : entries) {
    ProcessRow row;
    row.pid = e.pid;
    row.gpu_memory = e.gpu_memory;
    if (auto p = host::read_process(e.pid)) {
      row.user = p->user;
      row.command = p->command;
      const double cpu = p->cpu_time.count();
      auto [it, fresh] = seen_.try_emplace(e.pid, Seen{now, cpu, std::nullopt});
      const double wall = std::chrono::duration<double>(now - it->second.when).count();
      // A process on several GPUs is read once per GPU within microseconds: those reads reuse
      // the figure of the first.
      if (!fresh && wall > 0.05)
        it->second = {now, cpu, std::max(0.0, 100.0 * (cpu - it->second.cpu_seconds) / wall)};
      row.cpu_percent = it->second.percent;
    } else if (driver_name_) {
      if (auto name = driver_name_(e.pid)) row.command = *name;
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace gpuclk::tui
