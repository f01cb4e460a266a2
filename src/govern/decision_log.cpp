#include "govern/decision_log.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.h"
#include "util/file.h"

namespace gpuclk::govern {
namespace {

using nlohmann::ordered_json;

template <class Q>
ordered_json value_or_null(const std::optional<Q>& q) {
  if (!q) return nullptr;
  return q->value();
}

template <class Q>
std::optional<Q> quantity(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return Q(j[key].get<double>());
}

// The controller's clock in a "held under the cap" reason ("… under the controller's 1305 MHz
// …", budget.h); 0 for any other reason.
double held_cap_mhz(const std::string& reason) {
  static constexpr std::string_view kMark = "under the controller's ";
  const auto at = reason.find(kMark);
  if (at == std::string::npos) return 0;
  try {
    return std::stod(reason.substr(at + kMark.size()));
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

std::string to_json_line(const LogEntry& e) {
  ordered_json j;
  j["time"] = e.time;
  j["elapsed_s"] = std::round(e.elapsed_s * 1e6) / 1e6;
  j["gpu"] = e.gpu;
  j["uuid"] = e.uuid;
  const auto& s = e.signals;
  ordered_json sig;
  sig["sm_clock_mhz"] = value_or_null(s.sm_clock);
  sig["memory_clock_mhz"] = value_or_null(s.memory_clock);
  sig["power_w"] = value_or_null(s.power);
  sig["gpu_utilization"] = value_or_null(s.gpu_utilization);
  sig["sm_active"] = value_or_null(s.sm_active);
  sig["tensor_active"] = value_or_null(s.tensor_active);
  sig["dram_active"] = value_or_null(s.dram_active);
  sig["fp64_active"] = value_or_null(s.fp64_active);
  sig["fp32_active"] = value_or_null(s.fp32_active);
  sig["fp16_active"] = value_or_null(s.fp16_active);
  sig["clock_reasons"] = s.reasons ? ordered_json(s.reasons->names()) : ordered_json(nullptr);
  sig["clock_reasons_bits"] = s.reasons ? ordered_json(s.reasons->bits()) : ordered_json(nullptr);
  j["signals"] = sig;
  j["class"] = std::string(to_string(e.phase_class));
  ordered_json d;
  d["locked"] = e.decision.locked;
  d["min_mhz"] = e.decision.locked ? ordered_json(e.decision.min.value()) : ordered_json(nullptr);
  d["max_mhz"] = e.decision.locked ? ordered_json(e.decision.max.value()) : ordered_json(nullptr);
  j["decision"] = d;
  j["written"] = e.written;
  j["reason"] = e.reason;
  return j.dump();
}

LogEntry entry_from_json_line(const std::string& line) {
  const auto j = nlohmann::json::parse(line);
  LogEntry e;
  e.time = j.at("time").get<std::string>();
  e.elapsed_s = j.at("elapsed_s").get<double>();
  e.gpu = j.at("gpu").get<unsigned>();
  e.uuid = j.value("uuid", "");
  const auto& s = j.at("signals");
  e.signals.time_s = e.elapsed_s;
  e.signals.sm_clock = quantity<Megahertz>(s, "sm_clock_mhz");
  e.signals.memory_clock = quantity<Megahertz>(s, "memory_clock_mhz");
  e.signals.power = quantity<Watts>(s, "power_w");
  e.signals.gpu_utilization = quantity<Ratio>(s, "gpu_utilization");
  e.signals.sm_active = quantity<Ratio>(s, "sm_active");
  e.signals.tensor_active = quantity<Ratio>(s, "tensor_active");
  e.signals.dram_active = quantity<Ratio>(s, "dram_active");
  e.signals.fp64_active = quantity<Ratio>(s, "fp64_active");
  e.signals.fp32_active = quantity<Ratio>(s, "fp32_active");
  e.signals.fp16_active = quantity<Ratio>(s, "fp16_active");
  if (s.contains("clock_reasons_bits") && !s["clock_reasons_bits"].is_null()) {
    e.signals.reasons = gpu::ClockReasons(s["clock_reasons_bits"].get<std::uint64_t>());
  }
  const auto c = phase_class_by_name(j.at("class").get<std::string>());
  if (!c) throw std::runtime_error("unknown class '" + j.at("class").get<std::string>() + "'");
  e.phase_class = *c;
  const auto& d = j.at("decision");
  if (d.at("locked").get<bool>()) {
    e.decision = Decision::lock(Megahertz(d.at("min_mhz").get<double>()),
                                Megahertz(d.at("max_mhz").get<double>()));
  }
  e.written = j.value("written", false);
  e.reason = j.value("reason", "");
  return e;
}

DecisionLog::DecisionLog(const std::filesystem::path& file) : out_(file, std::ios::app) {
  if (!out_) {
    throw bad_argument(fmt::format("cannot open the decision log {} for writing", file.string()),
                       "give --log a path in a writable directory");
  }
}

void DecisionLog::write(const LogEntry& entry) {
  out_ << to_json_line(entry) << '\n';
  out_.flush();
}

LogSummary summarize(const std::filesystem::path& file) {
  // A regular file only, read a line at a time (/dev/zero or a FIFO is refused, never read: it
  // took 47 s and all its memory, found by fuzz_argv); "-" is a file of that name, not stdin.
  std::optional<file::LineReader> in;
  try {
    in.emplace(file == "-" ? "./-" : file.string(), "the decision log");
  } catch (const Error& e) {
    throw bad_argument(e.what(), "give --report the file that govern --log wrote");
  }
  std::map<unsigned, std::vector<LogEntry>> by_gpu;
  LogSummary out;
  std::string line;
  while (in->next(line)) {
    const std::size_t n = in->line_number();
    if (line.empty()) continue;
    try {
      auto e = entry_from_json_line(line);
      by_gpu[e.gpu].push_back(std::move(e));
      ++out.entries;
    } catch (const std::exception& ex) {
      throw bad_argument(
          fmt::format("{} line {} is not a decision log entry: {}", file.string(), n, ex.what()),
          "give --report a file written by gpuclk govern --log");
    }
  }
  for (auto& [gpu, entries] : by_gpu) {
    std::stable_sort(entries.begin(), entries.end(), [](const LogEntry& a, const LogEntry& b) {
      return a.elapsed_s < b.elapsed_s;
    });
    double top = 0;
    for (const auto& e : entries) {
      if (e.signals.sm_clock) top = std::max(top, e.signals.sm_clock->value());
      if (e.decision.locked) top = std::max(top, e.decision.max.value());
    }
    struct Acc {
      double seconds = 0, ceiling = 0, clock = 0, clock_s = 0, power = 0, extra = 0;
      std::size_t power_readings = 0;
      std::uint64_t writes = 0;
    };
    std::map<PhaseClass, Acc> acc;
    const double span = entries.back().elapsed_s - entries.front().elapsed_s;
    out.seconds = std::max(out.seconds, span);
    // The power reading logged at t averages [t - 1 s, t] (Hopper): it is booked to the class in
    // force over that whole second, and to none when the second saw two classes or began before
    // the log. Entries are written when the class changes, so the reading at a change tells the
    // class that just ended, not the new one (20 ms into it).
    for (std::size_t j = 0; j < entries.size(); ++j) {
      const auto& reading = entries[j];
      if (!reading.signals.power || j == 0) continue;
      const double from = reading.elapsed_s - kPowerAveragingSeconds;
      std::size_t k = j - 1;  // entries k .. j-1 cover (from, t]
      while (k > 0 && entries[k].elapsed_s > from) --k;
      if (entries[k].elapsed_s > from + 1e-9) continue;  // the second began before the log
      bool one_class = true;
      for (std::size_t m = k + 1; m < j; ++m)
        one_class = one_class && entries[m].phase_class == entries[k].phase_class;
      if (!one_class) continue;
      auto& a = acc[entries[k].phase_class];
      a.power += reading.signals.power->value();
      ++a.power_readings;
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const auto& e = entries[i];
      auto& a = acc[e.phase_class];
      if (e.written) {
        ++a.writes;
        ++out.writes;
      }
      if (i + 1 == entries.size()) continue;
      const double dt = entries[i + 1].elapsed_s - e.elapsed_s;
      if (dt <= 0) continue;
      const double ceiling = e.decision.locked ? e.decision.max.value() : top;
      a.seconds += dt;
      a.ceiling += ceiling * dt;
      if (e.signals.sm_clock) {
        a.clock += e.signals.sm_clock->value() * dt;
        a.clock_s += dt;
      }

      if (top > 0 && ceiling > 0) {
        const double ratio = top / ceiling;
        // A power-capped phase held under the cap reads compute-bound; it lost time against
        // the controller's clock (named in the reason, budget.h), not against the top clock.
        const double cap = held_cap_mhz(e.reason);
        if (e.phase_class == PhaseClass::compute_bound && cap > 0) {
          a.extra += dt * std::max(0.0, 1 - ceiling / cap);
        } else if (e.phase_class == PhaseClass::compute_bound) {
          a.extra += dt * (1 - 1 / ratio);
        }
        if (e.phase_class == PhaseClass::memory_bound)
          a.extra += dt * (1 - 1 / std::pow(ratio, 0.3));
      }
    }
    for (const auto& [c, a] : acc) {
      if (a.seconds <= 0 && a.writes == 0) continue;
      ClassSummary s;
      s.gpu = gpu;
      s.phase_class = c;
      s.seconds = a.seconds;
      s.share = span > 0 ? a.seconds / span : 0;
      s.mean_ceiling_mhz = a.seconds > 0 ? a.ceiling / a.seconds : 0;
      s.mean_sm_clock_mhz = a.clock_s > 0 ? a.clock / a.clock_s : std::nan("");
      s.mean_power_w = a.power_readings > 0 ? a.power / double(a.power_readings) : std::nan("");
      s.energy_j = a.power_readings > 0 ? s.mean_power_w * a.seconds : std::nan("");
      s.estimated_extra_seconds = a.extra;
      s.writes = a.writes;
      out.classes.push_back(s);
    }
  }
  return out;
}

}  // namespace gpuclk::govern
