// Physical quantities as distinct types. NVML's MHz/mW/mJ/°C are converted once, in src/gpu
// (device.cpp), into these; printers format them. Each is a double underneath.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>

namespace gpuclk::units {

template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double value) : value_(value) {}
  constexpr double value() const { return value_; }

  constexpr auto operator<=>(const Quantity&) const = default;
  constexpr Quantity operator+(Quantity o) const { return Quantity(value_ + o.value_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(value_ - o.value_); }
  constexpr Quantity operator*(double k) const { return Quantity(value_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(value_ / k); }
  constexpr double operator/(Quantity o) const { return value_ / o.value_; }
  constexpr Quantity& operator+=(Quantity o) {
    value_ += o.value_;
    return *this;
  }

 private:
  double value_ = 0;
};

struct MegahertzTag {};
struct WattsTag {};
struct JoulesTag {};
struct CelsiusTag {};
struct BytesTag {};
struct RatioTag {};
struct BytesPerSecondTag {};
struct FlopsTag {};

using Megahertz = Quantity<MegahertzTag>;  // clock frequency
using Watts = Quantity<WattsTag>;
using Joules = Quantity<JoulesTag>;
using Celsius = Quantity<CelsiusTag>;
using Bytes = Quantity<BytesTag>;
using Ratio = Quantity<RatioTag>;  // 0..1 (utilization, efficiency)
using BytesPerSecond = Quantity<BytesPerSecondTag>;
using FlopsPerSecond = Quantity<FlopsTag>;

// Conversions from NVML's integer units; used only at the NVML boundary.
constexpr Watts from_milliwatts(unsigned long long mw) { return Watts(double(mw) / 1000.0); }
constexpr Joules from_millijoules(unsigned long long mj) { return Joules(double(mj) / 1000.0); }
constexpr Ratio from_percent(double pct) { return Ratio(pct / 100.0); }
inline unsigned to_milliwatts(Watts w) {
  return static_cast<unsigned>(std::lround(w.value() * 1000.0));
}

// Power as NVML reads and writes it: whole milliwatts, an integer. A power limit travels in this
// one type from the user's text (control::parse_power_limit, exact decimal, no floating point)
// through validation and the journal to the driver, so a restore writes back exactly the number
// that was read and no value wraps on the way (64 bits: a request far above any GPU's range
// stays that request, and is refused or clamped, never truncated).
class Milliwatts {
 public:
  constexpr Milliwatts() = default;
  constexpr explicit Milliwatts(std::uint64_t count) : count_(count) {}
  constexpr std::uint64_t count() const { return count_; }
  constexpr Watts watts() const { return Watts(double(count_) / 1000.0); }
  constexpr auto operator<=>(const Milliwatts&) const = default;

 private:
  std::uint64_t count_ = 0;
};

// Energy of a constant power over `seconds`.
constexpr Joules energy_over(Watts w, double seconds) { return Joules(w.value() * seconds); }
constexpr double hertz(Megahertz f) { return f.value() * 1e6; }

}  // namespace gpuclk::units
