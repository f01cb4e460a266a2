#include "telemetry/fields.h"

#include <chrono>

#include "telemetry/field_table.h"
#include "telemetry/sample.h"

namespace gpuclk::telemetry {

std::string_view field_name(Field f) {
  switch (f) {
    case Field::sm_clock:
      return "sm_clock";
    case Field::memory_clock:
      return "memory_clock";
    case Field::power:
      return "power";
    case Field::gpu_temperature:
      return "gpu_temperature";
    case Field::memory_temperature:
      return "memory_temperature";
    case Field::utilization:
      return "utilization";
    case Field::clock_reasons:
      return "clock_reasons";
    case Field::memory_used:
      return "memory_used";
    case Field::pstate:
      return "pstate";
    case Field::bar1_used:
      return "bar1_used";
    case Field::protected_memory_used:
      return "protected_memory_used";
    case Field::media_utilization:
      return "media_utilization";
    case Field::energy:
      return "energy";
    case Field::pcie_throughput:
      return "pcie_throughput";
    case Field::gpm:
      return "gpm";
    case Field::ecc_errors:
      return "ecc_errors";
    case Field::pcie_replay:
      return "pcie_replay";
    case Field::violation_time:
      return "violation_time";
    case Field::nvlink:
      return "nvlink";
    case Field::processes:
      return "processes";
    case Field::nvlink_throughput:
      return "nvlink_throughput";
    case Field::count:
      break;
  }
  return "?";
}

std::optional<std::uint64_t> link_sum(const std::vector<NvLinkSample>& links,
                                      const NvLinkField& row) {
  std::optional<std::uint64_t> total;
  for (const auto& l : links) {
    if (const auto& v = l.*row.member) total = total.value_or(0) + *v;
  }
  return total;
}

std::optional<double> nvlink_rate(const SlowSample& before, const SlowSample& after,
                                  std::initializer_list<NvLinkField> rows) {
  std::uint64_t from = 0, to = 0;
  for (const auto& row : rows) {
    const auto a = link_sum(before.nvlinks, row), b = link_sum(after.nvlinks, row);
    if (!a || !b) return std::nullopt;
    from += *a;
    to += *b;
  }
  const double seconds = std::chrono::duration<double>(after.time - before.time).count();
  if (seconds <= 0 || to < from) return std::nullopt;
  return static_cast<double>(to - from) / seconds;
}

}  // namespace gpuclk::telemetry
