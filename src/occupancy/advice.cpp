#include "occupancy/advice.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "occupancy/sweep.h"

namespace gpuclk::occupancy {
namespace {

bool better(const Occupancy& candidate, const Occupancy& than) {
  if (!candidate.valid()) return false;
  if (!than.valid()) return true;
  return candidate.active_warps > than.active_warps;
}

std::string outcome(const Occupancy& result) {
  return fmt::format("{} ({} block{} per SM)", format_percent(result.occupancy()),
                     result.active_blocks, result.active_blocks == 1 ? "" : "s");
}

// Walks the changes of one resource from the smallest to the largest and keeps the first that
// beats the current occupancy, then the one that beats it most (if it is not the same change).
struct Steps {
  const Occupancy& current;
  std::vector<std::pair<KernelConfig, Occupancy>> found;

  void consider(const ArchLimits& arch, const KernelConfig& candidate) {
    Occupancy result = calculate(arch, candidate);
    const Occupancy& bar = found.empty() ? current : found.back().second;
    if (!better(result, bar)) return;
    if (found.size() == 2) found.pop_back();
    found.emplace_back(candidate, std::move(result));
  }
};

void advise_registers(const ArchLimits& arch, const KernelConfig& kernel, const Occupancy& current,
                      std::vector<Advice>& advice) {
  Steps steps{current, {}};
  // Bounded by the architecture, not by the request: a kernel asking for 2^31 registers is
  // advised over 0..255 like any other, in 256 steps, not 2^31.
  const int start = std::min(kernel.registers_per_thread - 1, arch.max_registers_per_thread);
  for (int registers = start; registers >= 0; --registers) {
    KernelConfig candidate = kernel;
    candidate.registers_per_thread = registers;
    steps.consider(arch, candidate);
  }
  for (auto& [changed, result] : steps.found) {
    std::string text = fmt::format("≤ {} registers per thread → {}", changed.registers_per_thread,
                                   outcome(result));
    if (result.active_blocks > 0) {
      text +=
          fmt::format(": __launch_bounds__({}, {}) or -maxrregcount={}", changed.threads_per_block,
                      result.active_blocks, changed.registers_per_thread);
    }
    advice.push_back({AdviceKind::fewer_registers, changed, result, std::move(text)});
  }
}

void advise_shared_memory(const ArchLimits& arch, const KernelConfig& kernel,
                          const Occupancy& current, std::vector<Advice>& advice) {
  if (kernel.total_shared_bytes() == 0) return;
  // Only sizes that allocate less than now can change anything: one per allocation unit,
  // the largest request that still rounds to that unit.
  const std::int64_t unit = arch.shared_memory_allocation_unit;
  const std::int64_t reserved = arch.reserved_shared_memory_per_block;
  Steps steps{current, {}};
  // At most the units one SM holds, whatever the request (a terabyte asks for 2^33 units).
  const std::int64_t most = (arch.shared_memory_per_sm + reserved + unit - 1) / unit;
  const std::int64_t first =
      std::min((kernel.total_shared_bytes() + reserved + unit - 1) / unit - 1, most);
  for (std::int64_t units = first; units >= 0; --units) {
    const std::int64_t total = std::max<std::int64_t>(0, units * unit - reserved);
    if (total >= kernel.total_shared_bytes()) continue;
    KernelConfig candidate = kernel;
    candidate.dynamic_shared_bytes = std::max<std::int64_t>(0, total - kernel.static_shared_bytes);
    candidate.static_shared_bytes = total - candidate.dynamic_shared_bytes;
    steps.consider(arch, candidate);
    if (total == 0) break;
  }
  for (auto& [changed, result] : steps.found) {
    advice.push_back({AdviceKind::less_shared_memory, changed, result,
                      fmt::format("shared memory ≤ {} per block → {}",
                                  format_bytes(changed.total_shared_bytes()), outcome(result))});
  }
}

void advise_carveout(const ArchLimits& arch, const KernelConfig& kernel, const Occupancy& current,
                     std::vector<Advice>& advice) {
  if (!kernel.carveout_percent || !arch.has_carveout()) return;
  KernelConfig candidate = kernel;
  candidate.carveout_percent.reset();
  Occupancy result = calculate(arch, candidate);
  if (!better(result, current)) return;
  std::string text = fmt::format("no carveout preference instead of {} % → {}",
                                 *kernel.carveout_percent, outcome(result));
  advice.push_back({AdviceKind::larger_carveout, candidate, std::move(result), std::move(text)});
}

void advise_block_size(const ArchLimits& arch, const KernelConfig& kernel, const Occupancy& current,
                       std::vector<Advice>& advice) {
  const Sweep all = sweep(arch, kernel);
  const SweepPoint* chosen = nullptr;
  for (const SweepPoint& point : all.points) {
    if (!point.occupancy.valid()) continue;
    if (chosen == nullptr || point.occupancy.active_warps > chosen->occupancy.active_warps) {
      chosen = &point;
      continue;
    }
    // Among equals, the size nearest the current one (the larger on a tie) changes least.
    const int distance = std::abs(point.threads_per_block - kernel.threads_per_block);
    const int chosen_distance = std::abs(chosen->threads_per_block - kernel.threads_per_block);
    if (point.occupancy.active_warps == chosen->occupancy.active_warps &&
        distance <= chosen_distance) {
      chosen = &point;
    }
  }
  if (chosen == nullptr || !better(chosen->occupancy, current)) return;
  KernelConfig changed = kernel;
  changed.threads_per_block = chosen->threads_per_block;
  advice.push_back(
      {AdviceKind::block_size, changed, chosen->occupancy,
       fmt::format(
           "block {} instead of {}{} → {}", chosen->threads_per_block, kernel.threads_per_block,
           kernel.total_shared_bytes() > 0 ? " (if shared memory per block stays the same)" : "",
           outcome(chosen->occupancy))});
}

void advise_whole_warps(const ArchLimits& arch, const KernelConfig& kernel,
                        const Occupancy& current, std::vector<Advice>& advice) {
  const int idle_lanes = current.warps_per_block * arch.warp_size - kernel.threads_per_block;
  if (!current.valid() || idle_lanes == 0) return;
  KernelConfig changed = kernel;
  changed.threads_per_block += idle_lanes;
  Occupancy result = calculate(arch, changed);
  if (!result.valid() || result.active_warps < current.active_warps) return;
  std::string text = fmt::format(
      "block {} instead of {}: a multiple of {} threads, same warps, {} idle lanes per block "
      "put to work → {}",
      changed.threads_per_block, kernel.threads_per_block, arch.warp_size, idle_lanes,
      outcome(result));
  advice.push_back({AdviceKind::whole_warps, changed, std::move(result), std::move(text)});
}

}  // namespace

std::string_view to_string(AdviceKind kind) {
  switch (kind) {
    case AdviceKind::fewer_registers:
      return "fewer_registers";
    case AdviceKind::less_shared_memory:
      return "less_shared_memory";
    case AdviceKind::larger_carveout:
      return "larger_carveout";
    case AdviceKind::block_size:
      return "block_size";
    case AdviceKind::whole_warps:
      return "whole_warps";
  }
  return "unknown";
}

std::vector<Advice> advise(const ArchLimits& arch, const KernelConfig& kernel,
                           const Occupancy& current) {
  std::vector<Advice> advice;
  const bool full = current.valid() && current.active_warps == current.max_warps;
  if (!full) {
    advise_registers(arch, kernel, current, advice);
    advise_shared_memory(arch, kernel, current, advice);
    advise_carveout(arch, kernel, current, advice);
    advise_block_size(arch, kernel, current, advice);
  }
  advise_whole_warps(arch, kernel, current, advice);
  return advice;
}

std::string format_bytes(std::int64_t bytes) {
  if (bytes != 0 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes / 1024);
  return fmt::format("{} bytes", bytes);
}

std::string format_percent(double ratio) {
  const double percent = ratio * 100.0;
  const double rounded = double(static_cast<long long>(percent * 10.0 + 0.5)) / 10.0;
  if (rounded == double(static_cast<long long>(rounded))) {
    return fmt::format("{} %", static_cast<long long>(rounded));
  }
  return fmt::format("{:.1f} %", rounded);
}

}  // namespace gpuclk::occupancy
