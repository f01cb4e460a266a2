#include "cli/journal_facts.h"

#include "cli/cmd_control.h"
#include "cli/context.h"
#include "control/consistency.h"

namespace gpuclk::cli {

void add_journal_facts(Context& ctx, std::vector<rules::GpuWindow>& gpus) {
  const auto journal = peek_journal(ctx);
  if (!journal || journal->clean()) return;
  for (auto& w : gpus) {
    if (w.facts.uuid.empty()) continue;
    control::Settings settings;
    control::add_journal_locks(settings, *journal, w.facts.uuid);
    if (settings.has(control::Setting::locked_gpu_clocks))
      w.facts.locked_gpu_clocks = control::describe(settings, control::Setting::locked_gpu_clocks);
    if (settings.has(control::Setting::locked_memory_clocks))
      w.facts.locked_memory_clocks =
          control::describe(settings, control::Setting::locked_memory_clocks);
  }
}

}  // namespace gpuclk::cli
