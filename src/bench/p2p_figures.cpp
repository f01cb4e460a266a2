// The figure table and option checks of bench p2p: pure, built with or without CUDA.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "bench/p2p.h"
#include "util/error.h"
#include "util/text.h"

namespace gpuclk::bench::p2p {

const std::vector<FigureInfo>& all_figures() {
  // nvbandwidth's names as `nvbandwidth -l` lists them (v0.8); its JSON carries them as "name".
  static const std::vector<FigureInfo> figures = {
      {Figure::ce_read, "ce_read", "CE read", "device_to_device_memcpy_read_ce", true, false,
       false},
      {Figure::ce_write, "ce_write", "CE write", "device_to_device_memcpy_write_ce", true, false,
       false},
      {Figure::ce_bidirectional, "ce_bidirectional", "CE bidirectional",
       "device_to_device_bidirectional_memcpy_read_ce", true, false, true},
      {Figure::sm_read, "sm_read", "SM read", "device_to_device_memcpy_read_sm", true, false,
       false},
      {Figure::sm_write, "sm_write", "SM write", "device_to_device_memcpy_write_sm", true, false,
       false},
      {Figure::sm_bidirectional, "sm_bidirectional", "SM bidirectional",
       "device_to_device_bidirectional_memcpy_read_sm", true, false, true},
      {Figure::latency, "latency", "latency", "device_to_device_latency_sm", true, true, false},
      {Figure::host_to_device, "host_to_device", "host->device", "host_to_device_memcpy_ce", false,
       false, false},
      {Figure::device_to_host, "device_to_host", "device->host", "device_to_host_memcpy_ce", false,
       false, false},
      {Figure::local_copy, "local_copy", "local copy", "device_local_copy", false, false, false},
  };
  return figures;
}

const FigureInfo& info(Figure figure) { return all_figures().at(std::size_t(figure)); }

void validate(const Options& o) {
  constexpr std::size_t kMiB = std::size_t(1) << 20;
  if (o.bytes < kMiB || o.bytes % 16 != 0) {
    throw bad_argument(fmt::format("--mib: a copy of {} bytes is too small", o.bytes),
                       "give at least 1 MiB (nvbandwidth's default is 512)");
  }
  if (o.copies_per_sample < 1 || o.copies_per_sample > 1000) {
    throw bad_argument(fmt::format("--copies {} is outside 1..1000", o.copies_per_sample));
  }
  if (o.warmup_copies < 0 || o.warmup_copies > 10000) {
    throw bad_argument(fmt::format("warm-up copies {} is outside 0..10000", o.warmup_copies));
  }
  if (o.samples < 1 || o.samples > 1000) {
    throw bad_argument(fmt::format("--samples {} is outside 1..1000", o.samples));
  }
  if (o.latency_bytes < 4096 || o.latency_bytes % 128 != 0) {
    throw bad_argument(
        fmt::format("latency buffer of {} bytes: need a multiple of 128, ≥ 4096", o.latency_bytes));
  }
  if (o.latency_accesses < 1000 || o.latency_accesses > 100000000) {
    throw bad_argument(
        fmt::format("--latency-accesses {} is outside 1000..100000000", o.latency_accesses));
  }
}

NumaRequest parse_numa_request(std::string_view text) {
  NumaRequest request;
  if (text == "all") {
    request.all = true;
    return request;
  }
  for (const std::string& item : text::split(std::string(text))) {
    int node = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), node);
    if (ec != std::errc() || end != item.data() + item.size() || node < 0 || node > 4095) {
      throw bad_argument(fmt::format("--numa: '{}' is not a NUMA node", item),
                         "give node numbers (0,1) or all");
    }
    request.nodes.push_back(node);
  }
  if (request.nodes.empty()) {
    throw bad_argument("--numa needs a node", "give node numbers (0,1) or all");
  }
  std::sort(request.nodes.begin(), request.nodes.end());
  request.nodes.erase(std::unique(request.nodes.begin(), request.nodes.end()), request.nodes.end());
  return request;
}

}  // namespace gpuclk::bench::p2p
