#include "telemetry/fields.h"

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
    case Field::count:
      break;
  }
  return "?";
}

namespace {
std::optional<std::uint64_t> sum(const std::vector<NvLinkSample>& links,
                                 std::optional<std::uint64_t> NvLinkSample::*member) {
  std::optional<std::uint64_t> total;
  for (const auto& l : links) {
    if (l.*member) total = total.value_or(0) + *(l.*member);
  }
  return total;
}
}  // namespace

std::optional<std::uint64_t> nvlink_tx_total(const std::vector<NvLinkSample>& links) {
  return sum(links, &NvLinkSample::tx_bytes);
}
std::optional<std::uint64_t> nvlink_rx_total(const std::vector<NvLinkSample>& links) {
  return sum(links, &NvLinkSample::rx_bytes);
}

}  // namespace gpuclk::telemetry
