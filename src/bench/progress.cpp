#include "bench/progress.h"

#include <fmt/format.h>

#include <ostream>

#include "bench/report_view.h"

namespace gpuclk::bench {

std::string progress_text(const std::string& label, RateUnit unit,
                          std::span<const DeviceProgress> devices) {
  const DisplayUnits u = display_units(unit);
  std::string text = label;
  for (const DeviceProgress& d : devices) {
    text += fmt::format(" | cuda{} ", d.device);
    switch (d.state) {
      case DeviceProgress::State::preparing:
        text += "preparing";
        break;
      case DeviceProgress::State::warming_up:
        text += "warm-up";
        break;
      case DeviceProgress::State::checking:
        text += "checking";
        break;
      case DeviceProgress::State::measuring:
        if (d.repetitions == 0) {
          text += "measuring";
          break;
        }
        text += fmt::format("{}/{} {:.{}f} {}", d.repetition, d.repetitions, d.rate * u.rate_scale,
                            u.rate_precision, u.rate);
        break;
    }
  }
  return text;
}

bool should_show_progress(bool stderr_is_terminal, double expected_seconds, double min_seconds) {
  return stderr_is_terminal && expected_seconds >= min_seconds;
}

void ProgressLine::begin(const WorkloadSpec& spec, std::span<const int> devices) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  label_ = workload_name(spec) + " " + describe(spec);
  unit_ =
      std::holds_alternative<MemSpec>(spec) ? RateUnit::byte_per_second : RateUnit::flop_per_second;
  devices_.clear();
  for (int d : devices) devices_.push_back({d, DeviceProgress::State::preparing, 0, 0, 0});
  draw(true);
}

DeviceProgress* ProgressLine::find(int device) {
  for (auto& d : devices_) {
    if (d.device == device) return &d;
  }
  return nullptr;
}

void ProgressLine::phase(int device, Phase phase) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  DeviceProgress* d = find(device);
  if (!d) return;
  d->state = phase == Phase::prepared    ? DeviceProgress::State::warming_up
             : phase == Phase::warmed_up ? DeviceProgress::State::measuring
                                         : DeviceProgress::State::checking;
  draw(true);
}

void ProgressLine::repetition(const Progress& p) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  DeviceProgress* d = find(p.device);
  if (!d) return;
  d->state = DeviceProgress::State::measuring;
  d->repetition = p.repetition + 1;
  d->repetitions = p.repetitions;
  d->rate = p.rate;
  draw(false);
}

void ProgressLine::clear() {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  if (drawn_) out_ << "\r\x1b[K" << std::flush;
  drawn_ = false;
}

void ProgressLine::draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  // Carriage return and erase-line: the line is redrawn in place.
  // Kept short of a narrow terminal's width: a wrapped line cannot be redrawn in place.
  std::string text = progress_text(label_, unit_, devices_);
  if (text.size() > 119) text.resize(119);
  out_ << "\r\x1b[K" << text << std::flush;
  drawn_ = true;
}

void StatusLine::show(const std::string& line) {
  if (!enabled_) return;
  out_ << '\r' << line << std::string(width_ > line.size() ? width_ - line.size() : 0, ' ')
       << std::flush;
  width_ = line.size();
}

void StatusLine::clear() {
  if (!enabled_ || width_ == 0) return;
  out_ << '\r' << std::string(width_, ' ') << '\r' << std::flush;
  width_ = 0;
}

}  // namespace gpuclk::bench
