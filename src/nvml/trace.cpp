#include "nvml/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "nvml/api.h"

namespace gpuclk::nvml::trace {
namespace {

using SteadyClock = std::chrono::steady_clock;

struct Stat {
  const char* name;
  std::atomic<std::uint64_t> calls{0}, total_ns{0}, max_ns{0};

  void add(SteadyClock::duration d) {
    const auto ns =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
    calls.fetch_add(1, std::memory_order_relaxed);
    total_ns.fetch_add(ns, std::memory_order_relaxed);
    auto seen = max_ns.load(std::memory_order_relaxed);
    while (ns > seen && !max_ns.compare_exchange_weak(seen, ns, std::memory_order_relaxed)) {
    }
  }
};

std::string g_path;
Stat g_open{"(dlopen and symbol lookup)"};

// One real pointer, one Stat and one trampoline per entry point.
// NOLINTBEGIN(bugprone-macro-parentheses): `params` is a parameter list, spliced as written.
#define GPUCLK_NVML_TRACED(name, params, args)   \
  nvmlReturn_t(*real_##name) params = nullptr;   \
  Stat stat_##name{#name};                       \
  nvmlReturn_t traced_##name params {            \
    const auto start = SteadyClock::now();       \
    const nvmlReturn_t rc = real_##name args;    \
    stat_##name.add(SteadyClock::now() - start); \
    return rc;                                   \
  }
GPUCLK_NVML_ALL(GPUCLK_NVML_TRACED)
#undef GPUCLK_NVML_TRACED
// NOLINTEND(bugprone-macro-parentheses)

std::vector<Stat*> all_stats() {
  std::vector<Stat*> out{&g_open};
#define GPUCLK_NVML_STAT(name, params, args) out.push_back(&stat_##name);
  GPUCLK_NVML_ALL(GPUCLK_NVML_STAT)
#undef GPUCLK_NVML_STAT
  return out;
}

}  // namespace

bool install(Api& api, std::chrono::nanoseconds opened) {
  const char* path = std::getenv("GPUCLK_NVML_TRACE");
  if (!path || !*path) return false;
  g_path = path;
  g_open.add(opened);
#define GPUCLK_NVML_WRAP(name, params, args) \
  if (api.name) {                            \
    real_##name = api.name;                  \
    api.name = traced_##name;                \
  }
  GPUCLK_NVML_ALL(GPUCLK_NVML_WRAP)
#undef GPUCLK_NVML_WRAP
  return true;
}

void write() {
  if (g_path.empty()) return;
  auto stats = all_stats();
  stats.erase(
      std::remove_if(stats.begin(), stats.end(), [](const Stat* s) { return s->calls == 0; }),
      stats.end());
  std::sort(stats.begin(), stats.end(),
            [](const Stat* a, const Stat* b) { return a->total_ns > b->total_ns; });
  std::uint64_t calls = 0, total = 0;
  for (const auto* s : stats) calls += s->calls, total += s->total_ns;
  std::FILE* f = std::fopen(g_path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "gpuclk: cannot write the NVML trace to %s\n", g_path.c_str());
    return;
  }
  std::fputs(
      fmt::format("# NVML calls: {} calls, {:.3f} ms in all (wall time inside the library)\n",
                  calls, double(total) / 1e6)
          .c_str(),
      f);
  std::fputs(fmt::format("{:<48} {:>7} {:>10} {:>10} {:>10}\n", "entry point", "calls", "total ms",
                         "mean us", "max us")
                 .c_str(),
             f);
  for (const auto* s : stats) {
    std::fputs(fmt::format("{:<48} {:>7} {:>10.3f} {:>10.1f} {:>10.1f}\n", s->name, s->calls.load(),
                           double(s->total_ns) / 1e6, double(s->total_ns) / 1e3 / double(s->calls),
                           double(s->max_ns) / 1e3)
                   .c_str(),
               f);
  }
  std::fclose(f);
}

}  // namespace gpuclk::nvml::trace
