#include "control/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "gpu/clock_list.h"

namespace gpuclk::control {
namespace {

std::vector<unsigned> whole(const std::vector<units::Megahertz>& clocks) {
  std::set<unsigned> s;
  for (auto c : clocks) s.insert(static_cast<unsigned>(std::lround(c.value())));
  return {s.begin(), s.end()};
}

std::vector<unsigned> memory_clocks(const std::vector<gpu::SupportedClocks>& table) {
  std::vector<units::Megahertz> m;
  m.reserve(table.size());
  for (const auto& e : table) m.push_back(e.memory);
  return whole(m);
}

// Every graphics clock the GPU lists with any memory clock (what a GPU clock lock may name).
std::vector<unsigned> all_graphics_clocks(const std::vector<gpu::SupportedClocks>& table) {
  std::vector<units::Megahertz> g;
  for (const auto& e : table) g.insert(g.end(), e.graphics.begin(), e.graphics.end());
  return whole(g);
}

const gpu::SupportedClocks* entry_for(const std::vector<gpu::SupportedClocks>& table,
                                      unsigned memory) {
  for (const auto& e : table) {
    if (static_cast<unsigned>(std::lround(e.memory.value())) == memory) return &e;
  }
  return nullptr;
}

unsigned nearest(const std::vector<unsigned>& values, unsigned value) {
  std::vector<units::Megahertz> m;
  m.reserve(values.size());
  for (auto v : values) m.emplace_back(v);
  return static_cast<unsigned>(std::lround(gpu::nearest_clock(m, units::Megahertz(value)).value()));
}

std::string describe_list(const std::vector<unsigned>& values) {
  std::vector<units::Megahertz> m;
  m.reserve(values.size());
  for (auto v : values) m.emplace_back(v);
  return gpu::describe_clocks(m);
}

bool contains(const std::vector<unsigned>& values, unsigned v) {
  return std::binary_search(values.begin(), values.end(), v);
}

class Checker {
 public:
  Checker(const GpuFacts& facts, bool snap, GpuTarget& out)
      : facts_(facts), snap_(snap), out_(out) {}

  void problem(ExitCode code, std::string message, std::string hint = {}) {
    out_.problems.push_back(
        {facts_.index, code, fmt::format("GPU {}: {}", facts_.index, message), std::move(hint)});
  }
  void note(std::string text) { out_.notes.push_back(std::move(text)); }

  // `value` if listed; else the nearest (snap) or a problem naming the neighbours. nullopt on a
  // problem.
  std::optional<unsigned> clock(const std::vector<unsigned>& values, unsigned value,
                                const std::string& what) {
    if (contains(values, value)) return value;
    if (snap_) {
      unsigned v = nearest(values, value);
      note(fmt::format("{} {} MHz snapped to {} MHz", what, value, v));
      return v;
    }
    // The supported list once per GPU: a lock's minimum and maximum share it.
    std::string supported = describe_list(values);
    if (!described_.insert(supported).second) supported = "as above";
    problem(ExitCode::bad_argument,
            fmt::format("{} {} MHz is not supported; nearest: {} (supported: {})", what, value,
                        nearest_text(values, value), supported),
            "pick a listed value, or pass --snap to round to the nearest one");
    return std::nullopt;
  }

  const GpuFacts& facts_;
  bool snap_;
  GpuTarget& out_;
  std::set<std::string> described_;  // supported lists already written out for this GPU
};

void check_application_clocks(const Change<ApplicationClocks>& change, Checker& c,
                              Settings& target) {
  const auto& f = c.facts_;
  if (change.to_default) {
    if (!f.default_application_clocks) {
      c.problem(ExitCode::not_supported, "this GPU or driver reports no default application clocks",
                "application clocks are not supported here; `gpuclk clocks` shows what is");
      return;
    }
    target.application_clocks = *f.default_application_clocks;
    return;
  }
  if (!f.supported_clocks || f.supported_clocks->empty()) {
    c.problem(ExitCode::not_supported,
              "application clocks cannot be set: this GPU or driver lists no supported clocks",
              "use --lock-gpu-clocks where the GPU supports it (Volta and later)");
    return;
  }
  const auto& table = *f.supported_clocks;
  auto memory = c.clock(memory_clocks(table), change.value.memory_mhz, "memory clock");
  if (!memory) return;
  const auto* entry = entry_for(table, *memory);
  auto graphics = c.clock(whole(entry->graphics), change.value.graphics_mhz,
                          fmt::format("graphics clock (with memory {} MHz)", *memory));
  if (!graphics) return;
  target.application_clocks = ApplicationClocks{*memory, *graphics};
}

void check_lock(const Change<ClockLock>& change, bool memory, Checker& c, Settings& target) {
  const auto& f = c.facts_;
  auto& slot = memory ? target.locked_memory_clocks : target.locked_gpu_clocks;
  if (memory && f.hopper) {
    if (change.to_default) {
      c.note("memory clocks cannot be locked on Hopper: nothing to reset");
      return;
    }
    c.problem(ExitCode::not_supported,
              fmt::format("{} ({}) cannot lock memory clocks at run time: the driver does not "
                          "support it on Hopper",
                          f.name, f.architecture.empty() ? "Hopper" : f.architecture),
              "choose the memory clock with application clocks instead: --app-clocks MEM,GFX "
              "(`gpuclk clocks` lists the pairs); lock the SM clock with --lock-gpu-clocks");
    return;
  }
  if (change.to_default) {
    slot = ClockLock::none();
    return;
  }
  ClockLock lock = change.value;
  if (!lock.min.symbolic() && f.supported_clocks && !f.supported_clocks->empty()) {
    const auto values =
        memory ? memory_clocks(*f.supported_clocks) : all_graphics_clocks(*f.supported_clocks);
    const std::string what = memory ? "memory clock" : "GPU clock";
    auto lo = c.clock(values, lock.min.mhz, "minimum " + what);
    auto hi = c.clock(values, lock.max.mhz, "maximum " + what);
    if (!lo || !hi) return;
    lock.min.mhz = *lo;
    lock.max.mhz = *hi;
  }
  if (memory && lock.min.symbolic()) {
    c.problem(ExitCode::bad_argument, "memory clock locks take MHz, not tdp/unlimited",
              "give MIN[,MAX] in MHz from the supported memory clocks");
    return;
  }
  slot = lock;
}

void check_power_limit(const Change<units::Milliwatts>& change, Checker& c, Settings& target) {
  const auto& f = c.facts_;
  if (change.to_default) {
    if (!f.default_power_limit_mw) {
      c.problem(ExitCode::not_supported, "this GPU or driver reports no default power limit",
                "power limits cannot be managed on this GPU");
      return;
    }
    target.power_limit_mw = *f.default_power_limit_mw;
    return;
  }
  if (!f.power_constraints) {
    c.problem(ExitCode::not_supported, "this GPU or driver does not allow setting a power limit",
              "power limits cannot be managed on this GPU");
    return;
  }
  // All in integer milliwatts: the request is exactly what the user typed, never wrapped.
  const auto lo = f.power_constraints->min_mw;
  const auto hi = f.power_constraints->max_mw;
  auto mw = change.value;
  if (mw < lo || mw > hi) {
    const auto range = fmt::format("{}\u2013{}", describe_watts(lo), describe_watts(hi));
    if (!c.snap_) {
      c.problem(ExitCode::bad_argument,
                fmt::format("power limit {} is outside this GPU's range {}; nearest: {}",
                            describe_watts(mw), range, describe_watts(mw < lo ? lo : hi)),
                "give a limit inside the range, or pass --snap to clamp it");
      return;
    }
    const auto clamped = std::clamp(mw, lo, hi);
    c.note(fmt::format("power limit {} clamped to {} (range {})", describe_watts(mw),
                       describe_watts(clamped), range));
    mw = clamped;
  }
  target.power_limit_mw = mw;
}

}  // namespace

std::string nearest_text(const std::vector<unsigned>& values, unsigned value) {
  auto above = std::lower_bound(values.begin(), values.end(), value);
  std::vector<std::string> parts;
  if (above != values.begin()) parts.push_back(fmt::format("{} MHz", *std::prev(above)));
  if (above != values.end()) parts.push_back(fmt::format("{} MHz", *above));
  if (parts.empty()) return "none";
  return parts.size() == 1 ? parts[0] : parts[0] + " or " + parts[1];
}

GpuTarget validate(const Request& request, const GpuFacts& facts, bool snap) {
  GpuTarget out;
  Checker c(facts, snap, out);
  if (facts.unavailable_code != 0 || facts.lost) {
    // Nothing can be checked or written on a GPU that could not be opened; a lost one is exit 15
    // wherever it shows up.
    if (facts.lost) {
      c.problem(ExitCode::gpu_lost, "the GPU is lost (fell off the bus); nothing can be set on it",
                "check `gpuclk status` and the kernel log (Xid 79); a reset or reboot brings it "
                "back");
    } else {
      c.problem(ExitCode::other,
                fmt::format("the GPU could not be opened (NVML error {})", facts.unavailable_code),
                "check `gpuclk status`");
    }
    return out;
  }
  if (request.persistence_mode) out.target.persistence_mode = *request.persistence_mode;
  if (request.application_clocks)
    check_application_clocks(*request.application_clocks, c, out.target);
  if (request.locked_gpu_clocks) check_lock(*request.locked_gpu_clocks, false, c, out.target);
  if (request.locked_memory_clocks) check_lock(*request.locked_memory_clocks, true, c, out.target);
  if (request.power_limit) check_power_limit(*request.power_limit, c, out.target);
  return out;
}

void throw_problems(const std::vector<Problem>& problems) {
  std::string message = problems.size() == 1
                            ? problems[0].message
                            : fmt::format("{} problems, nothing was changed:", problems.size());
  if (problems.size() > 1) {
    for (const auto& p : problems) message += "\n  " + p.message;
  } else {
    message += "; nothing was changed";
  }
  std::string hint;
  std::set<std::string> seen;
  for (const auto& p : problems) {
    if (!p.hint.empty() && seen.insert(p.hint).second)
      hint += (hint.empty() ? "" : "\ngpuclk: ") + p.hint;
  }
  // A lost GPU decides the exit code wherever it is in the list (exit 15 everywhere).
  auto code = problems.empty() ? ExitCode::bad_argument : problems[0].code;
  for (const auto& p : problems) {
    if (p.code == ExitCode::gpu_lost) code = ExitCode::gpu_lost;
  }
  throw Error(code, message, hint);
}

CheckedGpus validate_all(const std::vector<GpuCheck>& gpus, bool snap) {
  CheckedGpus out;
  std::vector<Problem> problems;
  for (const auto& gpu : gpus) {
    auto checked = validate(gpu.request, gpu.facts, snap);
    problems.insert(problems.end(), checked.problems.begin(), checked.problems.end());
    for (const auto& n : checked.notes)
      out.notes.push_back(fmt::format("GPU {}: {}", gpu.facts.index, n));
    out.targets.push_back(checked.target);
  }
  if (!problems.empty()) throw_problems(problems);
  return out;
}

}  // namespace gpuclk::control
