// Physical quantities as distinct types. NVML's MHz/mW/mJ/°C are converted once, in src/gpu
// (device.cpp), into these; printers format them. Each is a double underneath.
#pragma once

#include <cmath>
#include <compare>

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

// Energy of a constant power over `seconds`.
constexpr Joules energy_over(Watts w, double seconds) { return Joules(w.value() * seconds); }
constexpr double hertz(Megahertz f) { return f.value() * 1e6; }

}  // namespace gpuclk::units
