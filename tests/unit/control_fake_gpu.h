// FakeGpu: a GpuControl in memory for the control layer's unit tests, shaped like an H100 SXM5
// (graphics 345–1980 MHz step 15 with memory 2619 or 1593 MHz, power 200–700 W). Every write
// and every journal save is appended to a shared event log, so tests can assert the order; a
// method named in fail_on throws as the driver would.
#pragma once

#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "control/gpu_control.h"
#include "util/error.h"

namespace gpuclk::control::testing {

inline GpuFacts h100_facts(unsigned index) {
  GpuFacts f;
  f.index = index;
  f.uuid = fmt::format("GPU-0000000{}-0000-0000-0000-000000000000", index);
  f.name = "NVIDIA H100 80GB HBM3";
  f.architecture = "Hopper";
  f.hopper = true;
  std::vector<gpu::SupportedClocks> table;
  for (unsigned mem : {2619u, 1593u}) {
    gpu::SupportedClocks e{units::Megahertz(mem), {}};
    for (unsigned g = 1980; g >= 345; g -= 15) e.graphics.emplace_back(g);
    table.push_back(e);
  }
  f.supported_clocks = table;
  f.power_constraints = gpu::PowerConstraints{units::Watts(200), units::Watts(700),
                                              units::Milliwatts(200000), units::Milliwatts(700000)};
  f.default_power_limit_mw = units::Milliwatts(700000);
  f.default_application_clocks = ApplicationClocks{2619, 1980};
  return f;
}

class FakeGpu final : public GpuControl {
 public:
  FakeGpu(unsigned index, std::vector<std::string>& events)
      : facts_(h100_facts(index)), events_(events) {}

  // State as the "driver" holds it.
  bool persistence = true;
  ApplicationClocks app{2619, 1980};
  ClockLock gpu_lock, memory_lock;
  std::uint32_t power_mw = 700000;
  // Method name → exit code its next calls throw with (until erased).
  std::map<std::string, ExitCode> fail_on;

  GpuFacts& mutable_facts() { return facts_; }
  const GpuFacts& facts() const override { return facts_; }
  Settings read_settings() const override {
    Settings s;
    s.persistence_mode = persistence;
    s.application_clocks = app;
    s.power_limit_mw = units::Milliwatts(power_mw);
    return s;
  }
  LiveClocks live_clocks() const override {
    LiveClocks c;
    c.sm = units::Megahertz(gpu_lock.locked && !gpu_lock.min.symbolic() ? gpu_lock.max.mhz : 1980);
    c.memory = units::Megahertz(app.memory_mhz);
    return c;
  }

  void set_persistence_mode(bool on) override {
    call("set_persistence_mode", [&] { persistence = on; });
  }
  void set_application_clocks(ApplicationClocks c) override {
    call("set_application_clocks", [&] { app = c; });
  }
  void reset_application_clocks() override {
    call("reset_application_clocks", [&] { app = {2619, 1980}; });
  }
  void lock_gpu_clocks(ClockBound lo, ClockBound hi) override {
    call("lock_gpu_clocks", [&] { gpu_lock = ClockLock::range(lo, hi); });
  }
  void reset_gpu_locked_clocks() override {
    call("reset_gpu_locked_clocks", [&] { gpu_lock = ClockLock::none(); });
  }
  void lock_memory_clocks(ClockBound lo, ClockBound hi) override {
    call("lock_memory_clocks", [&] { memory_lock = ClockLock::range(lo, hi); });
  }
  void reset_memory_locked_clocks() override {
    call("reset_memory_locked_clocks", [&] { memory_lock = ClockLock::none(); });
  }
  void set_power_limit(units::Milliwatts mw) override {
    call("set_power_limit", [&] { power_mw = static_cast<std::uint32_t>(mw.count()); });
  }

 private:
  template <class F>
  void call(const std::string& name, F&& apply) {
    auto it = fail_on.find(name);
    if (it != fail_on.end()) {
      events_.push_back(fmt::format("gpu{}.{} FAILED", facts_.index, name));
      throw Error(it->second, fmt::format("{}: injected failure", name));
    }
    apply();
    events_.push_back(fmt::format("gpu{}.{}", facts_.index, name));
  }

  GpuFacts facts_;
  std::vector<std::string>& events_;
};

}  // namespace gpuclk::control::testing
