// What top's screen (screen.cpp) writes in its cells: readings as text in their units, the tone
// of a value against its limit, the mark a setting puts on the SM bar, and each graph's series
// binned to the columns it has.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tui/screen.h"

namespace gpuclk::tui::cells {

// Terminal columns of UTF-8 text: one per character (the header's "·" is two bytes, one column).
int columns_of(const std::string& text);
// `text` in at most `width` columns: its start and "…" when it is longer.
std::string fit(const std::string& text, int width);

// A reading as the screen shows it; "N/A" when missing.
std::string mhz(const std::optional<units::Megahertz>& v);
std::string watts(const std::optional<units::Watts>& v);
std::string celsius(const std::optional<units::Celsius>& v);
std::string percent(const std::optional<units::Ratio>& v);
std::string gib(const std::optional<units::Bytes>& v);
std::string mib(const std::optional<units::Bytes>& v);

template <class Q>
double fraction(const std::optional<Q>& value, const std::optional<Q>& of) {
  if (!value || !of || of->value() <= 0) return 0;
  return value->value() / of->value();
}

// How close to its limit: good below 85 %, warn to 97 %, bad at the limit.
Tone load_tone(double f);
// Bad at the slowdown temperature, warn within 5 °C of it.
Tone temperature_tone(const GpuFrame& g);

// The clock a setting holds the SM clock to (application clock, or the top of a lock), as a
// fraction of the maximum: the mark on the SM bar.
std::optional<double> sm_mark(const GpuFrame& g);

// The clock event reasons in words ("GPU LOST", "N/A", "-" when none), and their tone.
std::string reasons_text(const GpuFrame& g);
Tone reasons_tone(const GpuFrame& g);

// The reading a graph shows, as a number in its row's unit (telemetry/field_table.h).
std::optional<double> metric_value(const telemetry::FastSample& s, Metric m);

// One graph's series: label, the latest value's text, the scale's top, and how to read a sample.
struct Series {
  std::string label;
  std::string latest;
  double top = 1;
  std::function<std::optional<double>(const telemetry::FastSample&)> value;
  Tone tone = Tone::good;
  std::string scale;  // `top` as the y-scale's label ("1980", "700", "79.6")
};

Series metric_series(const GpuFrame& g, Metric m);

// The history in `columns` time bins over [end - span, end]: each bin's mean.
std::vector<std::optional<double>> bins(const std::vector<telemetry::FastSample>& history,
                                        telemetry::TimePoint end, telemetry::Duration span,
                                        int columns, const Series& series);

}  // namespace gpuclk::tui::cells
