#include "bench/nccl_setup.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "bench/p2p_links.h"
#include "gpu/topology.h"
#include "telemetry/interval.h"
#include "util/error.h"

extern char** environ;

namespace gpuclk::bench::nccl {

Plan make_plan(const PlanOptions& o, bool sizes_given) {
  Plan p;
  p.run.operations = parse_operations(o.ops);
  SizeRange range = parse_sizes(o.sizes);
  range.factor = o.factor;
  p.run.sizes = size_steps(range);
  if (o.iterations < 1 || o.iterations > 100000)
    throw bad_argument(fmt::format("--iters {} is outside 1..100000", o.iterations));
  if (o.warmup < 0 || o.warmup > 1000)
    throw bad_argument(fmt::format("--warmup {} is outside 0..1000", o.warmup));
  p.run.iterations = o.iterations;
  p.run.warmup_iterations = o.warmup;
  p.run.check = !o.no_check;
  p.run.pair_bytes = o.pair_size == "0" ? 0 : parse_size(o.pair_size, "--pair-size");
  p.sizes_given = sizes_given;
  const auto interval = telemetry::parse_interval(o.interval);
  if (!interval)
    throw bad_argument(fmt::format("bad --interval {}", o.interval), "give 100ms, 0.5 or 1s");
  p.interval = *interval;
  return p;
}

std::map<std::string, std::string> nccl_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const std::size_t eq = entry.find('=');
    if (entry.rfind("NCCL_", 0) == 0 && eq != std::string_view::npos)
      env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

Topology topology(const std::vector<gpu::Device*>& devices, const std::vector<int>& ordinals) {
  const gpu::NvLinkSummary nvlinks = gpu::nvlink_summary(devices);
  Topology t;
  t.gpus = p2p::link_facts(devices, ordinals, nvlinks);
  for (std::size_t a = 0; a < devices.size(); ++a) {
    for (std::size_t b = a + 1; b < devices.size(); ++b) {
      if (auto d = p2p::direct_links(nvlinks, devices[a]->index(), devices[b]->index()))
        t.nvlink_pairs.push_back(*d);
    }
  }
  return t;
}

std::string fit_memory(Plan& p, const std::vector<DeviceMemory>& memory,
                       const std::vector<unsigned>& gpus) {
  const std::size_t fits = largest_fitting_size(memory);
  p.run.pair_bytes = std::min(p.run.pair_bytes, fits);
  const std::size_t largest = p.run.sizes.back();
  if (largest <= fits) return {};
  std::size_t tightest = 0;
  for (std::size_t i = 1; i < memory.size(); ++i)
    if (memory[i].free < memory[tightest].free) tightest = i;
  if (p.sizes_given || fits < p.run.sizes.front()) {
    throw bad_argument(
        fmt::format("{} needs two {} buffers on each GPU; GPU {} has {} MiB free, room for {} at "
                    "most",
                    size_text(largest), size_text(largest), gpus[tightest],
                    memory[tightest].free >> 20, fits ? size_text(fits) : "nothing"),
        "give smaller --sizes, or stop other jobs on the GPUs");
  }
  while (!p.run.sizes.empty() && p.run.sizes.back() > fits) p.run.sizes.pop_back();
  return fmt::format("sizes stop at {} (of {}): what fits twice in GPU {}'s free memory",
                     size_text(p.run.sizes.back()), size_text(largest), gpus[tightest]);
}

}  // namespace gpuclk::bench::nccl
