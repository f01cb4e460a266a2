// Do NVML's static reads overlap when issued from several threads? On an H100 each max, boost,
// default-applications clock and temperature-threshold read takes ~1 ms (GPUCLK_NVML_TRACE,
// docs/results/serve_h100.md), and a direct `gpuclk clocks` makes ~60 of them. This program opens
// NVML once and times the same 20 read-only calls issued by 1, 2, 4 and 8 threads, 7 rounds each,
// interleaved, and prints the medians. Then the cost of each read on its own (median of 7), with
// the batched and alternative entry points that could replace a slow one: nvmlDeviceGetFieldValues
// for the violation counters and power limits, nvmlDeviceGetClock for application, default and
// boost clocks. Read-only: it never calls a setter.
//
//   g++ -O2 -std=c++20 -pthread perf/nvml_concurrency.cpp -ldl -o nvml_concurrency
//   ./nvml_concurrency [device index]
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

namespace {

using Device = void*;
using InitFn = int (*)();
using HandleFn = int (*)(unsigned, Device*);
using ClockFn = int (*)(Device, int, unsigned*);
using AppClockFn = int (*)(Device, int, unsigned*);

template <typename F>
F symbol(void* lib, const char* name) {
  auto* f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f) {
    std::fprintf(stderr, "nvml_concurrency: %s not found in libnvidia-ml.so.1\n", name);
    std::exit(1);
  }
  return f;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned index = argc > 1 ? unsigned(std::atoi(argv[1])) : 0;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "nvml_concurrency: %s\n", dlerror());
    return 1;
  }
  const double t0 = now_ms();
  if (int rc = symbol<InitFn>(lib, "nvmlInit_v2")(); rc != 0) {
    std::fprintf(stderr, "nvml_concurrency: nvmlInit_v2 returned %d\n", rc);
    return 1;
  }
  const double t1 = now_ms();
  Device dev = nullptr;
  if (int rc = symbol<HandleFn>(lib, "nvmlDeviceGetHandleByIndex_v2")(index, &dev); rc != 0) {
    std::fprintf(stderr, "nvml_concurrency: no handle for GPU %u (NVML %d)\n", index, rc);
    return 1;
  }
  const double t2 = now_ms();
  std::printf("nvmlInit_v2 %.2f ms, first handle %.2f ms\n", t1 - t0, t2 - t1);

  const auto max_clock = symbol<ClockFn>(lib, "nvmlDeviceGetMaxClockInfo");
  const auto boost = symbol<ClockFn>(lib, "nvmlDeviceGetMaxCustomerBoostClock");
  const auto default_app = symbol<AppClockFn>(lib, "nvmlDeviceGetDefaultApplicationsClock");
  const auto app = symbol<AppClockFn>(lib, "nvmlDeviceGetApplicationsClock");
  const auto threshold = symbol<ClockFn>(lib, "nvmlDeviceGetTemperatureThreshold");

  // 20 independent static reads, as gpu::Device's identity probe makes them.
  std::vector<std::function<void()>> calls;
  for (int domain = 0; domain < 4; ++domain) {
    for (auto fn : {max_clock, boost, default_app, app}) {
      calls.push_back([fn, dev, domain] {
        unsigned v = 0;
        fn(dev, domain, &v);
      });
    }
    calls.push_back([threshold, dev, domain] {
      unsigned v = 0;
      threshold(dev, domain, &v);
    });
  }

  auto run = [&](unsigned threads) {
    std::atomic<std::size_t> next{0};
    const double start = now_ms();
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) {
      pool.emplace_back([&] {
        for (std::size_t i; (i = next++) < calls.size();) calls[i]();
      });
    }
    for (std::size_t i; (i = next++) < calls.size();) calls[i]();
    for (auto& t : pool) t.join();
    return now_ms() - start;
  };

  const unsigned widths[] = {1, 2, 4, 8};
  std::vector<std::vector<double>> times(std::size(widths));
  for (int round = 0; round < 7; ++round) {
    for (std::size_t w = 0; w < std::size(widths); ++w) times[w].push_back(run(widths[w]));
  }
  std::printf("%zu static reads, median of 7 rounds (interleaved):\n", calls.size());
  const double serial = [&] {
    auto v = times[0];
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }();
  for (std::size_t w = 0; w < std::size(widths); ++w) {
    std::sort(times[w].begin(), times[w].end());
    const double median = times[w][times[w].size() / 2];
    std::printf("  %u thread(s): %7.2f ms  (min %.2f, max %.2f)  %.2fx the serial time\n",
                widths[w], median, times[w].front(), times[w].back(), median / serial);
  }

  // Each read alone, and its alternatives.
  struct FieldValue {  // nvmlFieldValue_t
    unsigned field_id, scope_id;
    long long timestamp, latency_usec;
    int value_type, nvml_return;
    unsigned long long value;
  };
  using FieldsFn = int (*)(Device, int, FieldValue*);
  using GetClockFn = int (*)(Device, int, int, unsigned*);
  using ViolationFn = int (*)(Device, int, unsigned long long*);
  using PairFn = int (*)(Device, unsigned*, unsigned*);
  using UintFn = int (*)(Device, unsigned*);
  using MinMaxFn = int (*)(Device, int, int, unsigned*, unsigned*);
  using MemClocksFn = int (*)(Device, unsigned*, unsigned*);
  const auto fields = symbol<FieldsFn>(lib, "nvmlDeviceGetFieldValues");
  const auto get_clock = symbol<GetClockFn>(lib, "nvmlDeviceGetClock");
  const auto violation = symbol<ViolationFn>(lib, "nvmlDeviceGetViolationStatus");
  const auto constraints = symbol<PairFn>(lib, "nvmlDeviceGetPowerManagementLimitConstraints");
  const auto pstate = symbol<UintFn>(lib, "nvmlDeviceGetPerformanceState");
  const auto pcie_gen = symbol<UintFn>(lib, "nvmlDeviceGetMaxPcieLinkGeneration");
  const auto minmax = symbol<MinMaxFn>(lib, "nvmlDeviceGetMinMaxClockOfPState");
  const auto mem_clocks = symbol<MemClocksFn>(lib, "nvmlDeviceGetSupportedMemoryClocks");
  const auto clock_info = symbol<ClockFn>(lib, "nvmlDeviceGetClockInfo");
  const auto read_fields = [&](std::vector<unsigned> ids) {
    std::vector<FieldValue> v(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) v[i].field_id = ids[i];
    int rc = fields(dev, int(v.size()), v.data());
    int failed = 0;
    for (auto& f : v) failed += f.nvml_return != 0;
    return rc != 0 ? -1 : failed;
  };
  struct Probe {
    const char* name;
    std::function<void()> call;
  };
  unsigned u = 0, w = 0;
  unsigned long long ull[3] = {};
  const Probe probes[] = {
      {"GetClockInfo(SM)", [&] { clock_info(dev, 1, &u); }},
      {"GetMaxClockInfo(SM)", [&] { max_clock(dev, 1, &u); }},
      {"GetMaxCustomerBoostClock(SM)", [&] { boost(dev, 1, &u); }},
      {"GetClock(SM, CUSTOMER_BOOST_MAX)", [&] { get_clock(dev, 1, 3, &u); }},
      {"GetApplicationsClock(graphics)", [&] { app(dev, 0, &u); }},
      {"GetClock(graphics, APP_CLOCK_TARGET)", [&] { get_clock(dev, 0, 1, &u); }},
      {"GetDefaultApplicationsClock(graphics)", [&] { default_app(dev, 0, &u); }},
      {"GetClock(graphics, APP_CLOCK_DEFAULT)", [&] { get_clock(dev, 0, 2, &u); }},
      {"GetTemperatureThreshold(slowdown)", [&] { threshold(dev, 1, &u); }},
      {"GetViolationStatus(power)", [&] { violation(dev, 0, ull); }},
      {"GetFieldValues(6 PERF_POLICY)",
       [&] {
         std::printf("%s", read_fields({74, 75, 76, 77, 78, 79}) ? "(fields failed) " : "");
       }},
      {"GetFieldValues(1 PERF_POLICY)", [&] { read_fields({74}); }},
      {"GetPowerManagementLimitConstraints", [&] { constraints(dev, &u, &w); }},
      {"GetFieldValues(4 POWER limits)",
       [&] {
         read_fields({187, 188, 189, 190});
       }},
      {"GetPerformanceState", [&] { pstate(dev, &u); }},
      {"GetMinMaxClockOfPState(SM, P0)", [&] { minmax(dev, 1, 0, &u, &w); }},
      {"GetMaxPcieLinkGeneration", [&] { pcie_gen(dev, &u); }},
      {"GetSupportedMemoryClocks",
       [&] {
         unsigned list[32], n = 32;
         mem_clocks(dev, &n, list);
       }},
  };
  // The same counters two ways: nvmlDeviceGetViolationStatus's violationTime (ns) and the
  // PERF_POLICY field (unit to be checked against it).
  for (int policy = 0; policy < 6; ++policy) {
    unsigned long long v[2] = {};
    const int rc = violation(dev, policy, v);
    std::vector<FieldValue> f(1);
    f[0].field_id = 74 + unsigned(policy);
    const int frc = fields(dev, 1, f.data());
    std::printf(
        "policy %d: GetViolationStatus rc %d violationTime %llu | field rc %d/%d type %d "
        "value %llu\n",
        policy, rc, v[1], frc, f[0].nvml_return, f[0].value_type, f[0].value);
  }
  std::printf("each read alone, median of 7 (us):\n");
  for (const auto& p : probes) {
    std::vector<double> t;
    for (int i = 0; i < 7; ++i) {
      const double s = now_ms();
      p.call();
      t.push_back((now_ms() - s) * 1000);
    }
    std::sort(t.begin(), t.end());
    std::printf("  %-40s %8.1f\n", p.name, t[3]);
  }
  return 0;
}
