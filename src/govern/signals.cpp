#include "govern/signals.h"

#include <algorithm>

namespace gpuclk::govern {

double Signals::pipe_active() const {
  double busiest = 0;
  for (const auto* r : {&tensor_active, &fp64_active, &fp32_active, &fp16_active}) {
    if (*r) busiest = std::max(busiest, (*r)->value());
  }
  return busiest;
}

ClockLadder::ClockLadder(std::vector<Megahertz> clocks, Megahertz base)
    : clocks_(std::move(clocks)), base_(base) {
  std::sort(clocks_.begin(), clocks_.end());
  clocks_.erase(std::unique(clocks_.begin(), clocks_.end()), clocks_.end());
  if (base_.value() <= 0 && !clocks_.empty()) base_ = floor(max() * 0.8);
}

ClockLadder ClockLadder::uniform(Megahertz min, Megahertz max, Megahertz step, Megahertz base) {
  std::vector<Megahertz> clocks;
  for (double f = max.value(); f >= min.value() - 1e-9; f -= step.value()) {
    clocks.push_back(Megahertz(f));
  }
  return ClockLadder(std::move(clocks), base);
}

Megahertz ClockLadder::floor(Megahertz f) const {
  auto it = std::upper_bound(clocks_.begin(), clocks_.end(), f);
  return it == clocks_.begin() ? clocks_.front() : *std::prev(it);
}

Megahertz ClockLadder::ceil(Megahertz f) const {
  auto it = std::lower_bound(clocks_.begin(), clocks_.end(), f);
  return it == clocks_.end() ? clocks_.back() : *it;
}

}  // namespace gpuclk::govern
