// Time source for everything that waits or timestamps. The simulator runs time faster than the
// wall clock (GPUCLK_SIM_SPEED); a ScaledClock follows it so sampling intervals stay in GPU time.
#pragma once

#include <chrono>
#include <optional>
#include <thread>

namespace gpuclk {

class Clock {
 public:
  using Duration = std::chrono::nanoseconds;
  using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Duration>;

  virtual ~Clock() = default;
  // Monotonic "now" in the GPU's time base.
  virtual TimePoint now() const = 0;
  virtual void sleep_until(TimePoint deadline) const = 0;
  void sleep_for(Duration d) const { sleep_until(now() + d); }
  // The wall time until `deadline`, for a waiter that must also wake on an event (a condition
  // variable); nullopt when this clock's time does not pass by itself (a test's manual clock),
  // and the waiter must call sleep_until instead.
  virtual std::optional<std::chrono::nanoseconds> wall_time_until(TimePoint) const {
    return std::nullopt;
  }
};

// Wall time scaled by `scale` (1 on real hardware): now = start + (steady_now - start) * scale.
class ScaledClock final : public Clock {
 public:
  explicit ScaledClock(double scale = 1.0)
      : scale_(scale), origin_(std::chrono::steady_clock::now()) {}

  TimePoint now() const override {
    auto real = std::chrono::steady_clock::now() - origin_;
    return TimePoint(origin_.time_since_epoch() +
                     std::chrono::duration_cast<Duration>(real * scale_));
  }
  // A frozen clock (scale 0: the simulator's GPUCLK_SIM_SPEED=0) never reaches a deadline;
  // waiting then sleeps the deadline's distance in wall time instead of forever.
  void sleep_until(TimePoint deadline) const override {
    auto wall = *wall_time_until(deadline);
    if (wall.count() > 0) std::this_thread::sleep_for(wall);
  }
  std::optional<std::chrono::nanoseconds> wall_time_until(TimePoint deadline) const override {
    auto ahead = deadline - now();
    if (ahead.count() <= 0) return Duration::zero();
    return scale_ > 0 ? std::chrono::duration_cast<Duration>(ahead / scale_) : ahead;
  }
  double scale() const { return scale_; }

 private:
  double scale_;
  std::chrono::steady_clock::time_point origin_;
};

}  // namespace gpuclk
