#include "tui/screen_cells.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpu/clock_reasons.h"
#include "telemetry/field_table.h"

namespace gpuclk::tui::cells {

using telemetry::FastSample;

int columns_of(const std::string& text) {
  int n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

std::string fit(const std::string& text, int width) {
  if (columns_of(text) <= width) return text;
  std::string out;
  int n = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = text[i];
    if ((c & 0xC0) != 0x80 && ++n > width - 1) break;
    out += text[i];
  }
  return out + "…";
}

std::string mhz(const std::optional<units::Megahertz>& v) {
  return v ? fmt::format("{:.0f}", v->value()) : "N/A";
}
std::string watts(const std::optional<units::Watts>& v) {
  return v ? fmt::format("{:.0f}", v->value()) : "N/A";
}
std::string celsius(const std::optional<units::Celsius>& v) {
  return v ? fmt::format("{:.0f}", v->value()) : "N/A";
}
std::string percent(const std::optional<units::Ratio>& v) {
  return v ? fmt::format("{:.0f}%", v->value() * 100) : "N/A";
}
std::string gib(const std::optional<units::Bytes>& v) {
  return v ? fmt::format("{:.1f}", v->value() / (1024.0 * 1024 * 1024)) : "N/A";
}
std::string mib(const std::optional<units::Bytes>& v) {
  return v ? fmt::format("{:.0f} MiB", v->value() / (1024.0 * 1024)) : "N/A";
}

Tone load_tone(double f) { return f >= 0.97 ? Tone::bad : f >= 0.85 ? Tone::warn : Tone::good; }

Tone temperature_tone(const GpuFrame& g) {
  const auto& t = g.fast ? g.fast->gpu_temperature : std::nullopt;
  const auto& s = g.facts.slowdown_temperature;
  if (!t || !s) return Tone::plain;
  if (t->value() >= s->value()) return Tone::bad;
  return t->value() >= s->value() - 5 ? Tone::warn : Tone::plain;
}

std::optional<double> sm_mark(const GpuFrame& g) {
  const auto& max = g.facts.max_sm_clock;
  if (!max || max->value() <= 0) return std::nullopt;
  const auto& lock = g.facts.locked_gpu_clocks;
  if (!lock.empty() && lock != "unlocked") {
    // "990–1005 MHz" or "1410 MHz": the upper bound is the last number.
    auto end = lock.find_last_of("0123456789");
    if (end != std::string::npos) {
      auto begin = lock.find_last_not_of("0123456789", end);
      begin = begin == std::string::npos ? 0 : begin + 1;
      return std::stod(lock.substr(begin, end - begin + 1)) / max->value();
    }
  }
  if (g.facts.app_sm_clock && g.facts.default_app_sm_clock &&
      g.facts.app_sm_clock->value() != g.facts.default_app_sm_clock->value())
    return g.facts.app_sm_clock->value() / max->value();
  return std::nullopt;
}

std::string reasons_text(const GpuFrame& g) {
  if (g.health.lost) return "GPU LOST";
  if (!g.fast || !g.fast->clock_reasons) return "N/A";
  auto words = reasons_in_words(g.fast->clock_reasons->bits());
  return words.empty() ? "-" : words;
}

Tone reasons_tone(const GpuFrame& g) {
  if (g.health.lost) return Tone::bad;
  if (!g.fast || !g.fast->clock_reasons) return Tone::plain;
  return g.fast->clock_reasons->limiting() ? Tone::bad : Tone::plain;
}

std::optional<double> metric_value(const FastSample& s, Metric m) {
  namespace F = telemetry::fields;
  const auto value = [&s](const auto& field) -> std::optional<double> {
    const auto& v = s.*field.member;
    return v ? std::optional(v->value()) : std::nullopt;
  };
  switch (m) {
    case Metric::temperature:
      return value(F::gpu_temperature);
    case Metric::gpu_utilization:
      return value(F::gpu_utilization);
    case Metric::memory_clock:
      return value(F::memory_clock);
    case Metric::memory_used:
      return value(F::memory_used);
    case Metric::memory_temperature:
      return value(F::memory_temperature);
  }
  return std::nullopt;
}

Series metric_series(const GpuFrame& g, Metric m) {
  Series s;
  s.value = [m](const FastSample& f) { return metric_value(f, m); };
  s.tone = Tone::accent;
  const auto* f = g.fast ? &*g.fast : nullptr;
  switch (m) {
    case Metric::temperature:
      s.label = "temperature";
      s.latest = f ? celsius(f->gpu_temperature) + " C" : "N/A";
      s.top = g.facts.slowdown_temperature ? g.facts.slowdown_temperature->value() : 100;
      s.scale = fmt::format("{:.0f}", s.top);
      break;
    case Metric::gpu_utilization:
      s.label = "utilization";
      s.latest = f ? percent(f->gpu_utilization) : "N/A";
      s.top = 1;
      s.scale = "100%";
      break;
    case Metric::memory_clock:
      s.label = "memory clock";
      s.latest = f ? mhz(f->memory_clock) + " MHz" : "N/A";
      s.top = g.max_memory_clock ? g.max_memory_clock->value() : 1;
      s.scale = mhz(g.max_memory_clock);
      break;
    case Metric::memory_used:
      s.label = "memory used";
      s.latest = f ? gib(f->memory_used) + " GiB" : "N/A";
      s.top = g.memory_total ? g.memory_total->value() : 1;
      s.scale = gib(g.memory_total);
      break;
    case Metric::memory_temperature:
      s.label = "memory temp";
      s.latest = f ? celsius(f->memory_temperature) + " C" : "N/A";
      s.top = 105;
      s.scale = "105";
      break;
  }
  return s;
}

std::vector<std::optional<double>> bins(const std::vector<FastSample>& history,
                                        telemetry::TimePoint end, telemetry::Duration span,
                                        int columns, const Series& series) {
  std::vector<double> sum(static_cast<std::size_t>(columns), 0);
  std::vector<int> count(static_cast<std::size_t>(columns), 0);
  const auto start = end - span;
  for (const auto& s : history) {
    if (s.time < start || s.time > end) continue;
    auto v = series.value(s);
    if (!v) continue;
    const double at = std::chrono::duration<double>(s.time - start) / span;
    const auto c =
        static_cast<std::size_t>(std::clamp(static_cast<int>(at * columns), 0, columns - 1));
    sum[c] += *v;
    ++count[c];
  }
  std::vector<std::optional<double>> out(static_cast<std::size_t>(columns));
  for (std::size_t c = 0; c < out.size(); ++c)
    if (count[c] > 0) out[c] = sum[c] / count[c] / (series.top > 0 ? series.top : 1);
  // Columns narrower than the samples' spacing: a column without a sample holds the value
  // before it (between the first and the last sample only).
  std::size_t last = out.size();
  while (last > 0 && !out[last - 1]) --last;
  for (std::size_t c = 1; c < last; ++c)
    if (!out[c] && out[c - 1]) out[c] = out[c - 1];
  return out;
}

}  // namespace gpuclk::tui::cells
