// gpuclk-sampler-overhead: what the telemetry sampler costs, measured on this machine's GPUs (or
// the simulator with --nvml-lib / GPUCLK_NVML_LIB). Prints one JSON object:
//   fast_sample_us   CPU and wall µs of one fast sample (every fast field of FieldSet::standard)
//                    per GPU, through GpuSource as the sampler reads it (issue 4 goal: <= 5 µs)
//   per_field_us     the same, one field at a time
//   raw_clock_power_us  nvmlDeviceGetClockInfo + nvmlDeviceGetPowerUsage called directly
//                    (docs/calibration.md: 0.66 µs), to separate NVML's cost from ours
//   jitter           fast-tick lateness (sample time - schedule) with the slow fields on:
//                    "standard" (energy, GPM, ECC, violations every 1 s) and "all_slow_every_tick"
//                    (those plus PCIe throughput every fast tick) (goal: p99 <= 2 ms at 100 ms)
// Usage: gpuclk-sampler-overhead [--nvml-lib PATH] [--samples N] [--jitter-seconds S]
//                                [--interval-ms MS]
// Read-only: it calls NVML getters only. A plain program rather than google-benchmark so that the
// portable device build (docs/device.md) carries it without extra libraries.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "nvml/api.h"
#include "telemetry/sampler.h"
#include "util/error.h"

namespace {

using namespace gpuclk;
using namespace std::chrono_literals;
using telemetry::Field;
using telemetry::FieldSet;

double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) / 1e3;
}
double wall_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Cost {
  double cpu_us = 0, wall_us = 0;
};

// Per-GPU cost of one read_fast() of `fields`, averaged over `samples` rounds of every GPU.
Cost fast_read_cost(std::vector<std::unique_ptr<telemetry::GpuSource>>& sources,
                    const FieldSet& fields, int samples) {
  telemetry::FastSample s;
  for (auto& src : sources) src->read_fast(fields, s);  // warm: capability cache, page faults
  const double c0 = thread_cpu_us(), w0 = wall_us();
  for (int i = 0; i < samples; ++i) {
    for (auto& src : sources) src->read_fast(fields, s);
  }
  const double n = double(samples) * double(sources.size());
  return {(thread_cpu_us() - c0) / n, (wall_us() - w0) / n};
}

Cost raw_clock_power_cost(const nvml::Api& api, const gpu::DeviceSet& devices, int samples) {
  unsigned mhz = 0, mw = 0;
  const double c0 = thread_cpu_us(), w0 = wall_us();
  for (int i = 0; i < samples; ++i) {
    for (const auto& d : devices) {
      api.nvmlDeviceGetClockInfo(d->handle(), NVML_CLOCK_SM, &mhz);
      nvml::Api::call(api.nvmlDeviceGetPowerUsage, d->handle(), &mw);
    }
  }
  const double n = double(samples) * double(devices.size());
  return {(thread_cpu_us() - c0) / n, (wall_us() - w0) / n};
}

double ms(telemetry::Duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

std::string jitter_json(const char* name, const gpu::DeviceSet& devices, const Clock& clock,
                        FieldSet fields, telemetry::Duration interval,
                        telemetry::Duration slow_interval, double seconds) {
  telemetry::SamplerOptions o;
  o.fast_interval = interval;
  o.slow_interval = slow_interval;
  o.fields = fields;
  telemetry::Sampler sampler(telemetry::device_sources(devices.all(), fields), clock, o);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  sampler.stop();
  const auto t = sampler.timing();
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "{\"name\": \"%s\", \"interval_ms\": %.1f, \"slow_interval_ms\": %.1f, \"ticks\": %llu, "
      "\"missed_ticks\": %llu, \"lateness_p50_ms\": %.4f, \"lateness_p99_ms\": %.4f, "
      "\"lateness_max_ms\": %.4f, \"tick_cost_mean_ms\": %.4f, \"tick_cost_p99_ms\": %.4f}",
      name, ms(o.fast_interval), ms(sampler.options().slow_interval),
      static_cast<unsigned long long>(t.ticks), static_cast<unsigned long long>(t.missed_ticks),
      ms(t.lateness_p50), ms(t.lateness_p99), ms(t.lateness_max), ms(t.tick_cost_mean),
      ms(t.tick_cost_p99));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::string lib;
  int samples = 20000;
  double jitter_seconds = 10;
  double interval_ms = 100;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--nvml-lib")
      lib = next();
    else if (a == "--samples")
      samples = std::atoi(next().c_str());
    else if (a == "--jitter-seconds")
      jitter_seconds = std::atof(next().c_str());
    else if (a == "--interval-ms")
      interval_ms = std::atof(next().c_str());
    else {
      std::fprintf(
          stderr,
          "usage: %s [--nvml-lib PATH] [--samples N] [--jitter-seconds S] [--interval-ms MS]\n",
          argv[0]);
      return 2;
    }
  }
  try {
    auto api = nvml::Api::open(lib);
    gpu::DeviceSet devices(*api);
    ScaledClock clock(api->time_scale());
    const FieldSet fast = FieldSet::standard().fast();
    auto sources = telemetry::device_sources(devices.all(), fast);

    const Cost sample = fast_read_cost(sources, fast, samples);
    std::string per_field;
    for (int f = 0; f < int(Field::count); ++f) {
      const Field field = Field(f);
      if (!fast.has(field)) continue;
      const Cost c = fast_read_cost(sources, FieldSet{field}, samples);
      per_field += (per_field.empty() ? "" : ", ") + std::string("\"") +
                   std::string(telemetry::field_name(field)) + "\": " + std::to_string(c.cpu_us);
    }
    const Cost raw = raw_clock_power_cost(*api, devices, samples);

    const auto interval = std::chrono::duration_cast<telemetry::Duration>(
        std::chrono::duration<double, std::milli>(interval_ms));
    std::string jitter;
    if (jitter_seconds > 0) {
      jitter = jitter_json("standard", devices, clock, FieldSet::standard(), interval, 1s,
                           jitter_seconds) +
               ", " +
               jitter_json("all_slow_every_tick", devices, clock, FieldSet::all(), interval,
                           interval, jitter_seconds);
    }
    std::printf(
        "{\"library\": \"%s\", \"simulated\": %s, \"gpus\": %zu, \"gpu_name\": \"%s\", "
        "\"samples\": %d,\n"
        " \"fast_sample_us\": {\"cpu\": %.3f, \"wall\": %.3f},\n"
        " \"per_field_us\": {%s},\n"
        " \"raw_clock_power_us\": {\"cpu\": %.3f, \"wall\": %.3f},\n"
        " \"jitter\": [%s]}\n",
        api->path().c_str(), api->simulated() ? "true" : "false", devices.size(),
        devices.size() ? devices[0].name().c_str() : "", samples, sample.cpu_us, sample.wall_us,
        per_field.c_str(), raw.cpu_us, raw.wall_us, jitter.c_str());
    return 0;
  } catch (const gpuclk::Error& e) {
    std::fprintf(stderr, "gpuclk-sampler-overhead: %s\n", e.what());
    return static_cast<int>(e.code());
  }
}
