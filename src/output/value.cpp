#include "output/value.h"

#include <fmt/format.h>

#include <cmath>

namespace gpuclk::output {

Value mhz(const gpu::Reading<units::Megahertz>& r) {
  return r ? integer(std::lround(r->value()), "MHz") : na();
}
Value mhz(const std::optional<units::Megahertz>& m) {
  return m ? integer(std::lround(m->value()), "MHz") : na();
}
Value watts(const gpu::Reading<units::Watts>& r, int precision) {
  return r ? number(r->value(), "W", precision) : na();
}
Value celsius(const gpu::Reading<units::Celsius>& r) {
  return r ? integer(std::lround(r->value()), "C") : na();
}
Value percent(const gpu::Reading<units::Ratio>& r) {
  return r ? integer(std::lround(r->value() * 100.0), "%") : na();
}
Value mebibytes(const gpu::Reading<units::Bytes>& r) {
  return r ? integer(static_cast<long long>(r->value() / (1024.0 * 1024.0)), "MiB") : na();
}

std::string to_text(const Value& v, bool with_unit) {
  std::string body = std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return "N/A";
        else if constexpr (std::is_same_v<T, bool>)
          return x ? "yes" : "no";
        else if constexpr (std::is_same_v<T, long long>)
          return fmt::format("{}", x);
        else if constexpr (std::is_same_v<T, double>) {
          auto text = fmt::format("{:.{}f}", x, v.precision);
          // -0.04 at one decimal is "-0.0" (govern's savings): a sign on a zero only puzzles.
          if (text.front() == '-' && text.find_first_not_of("-0.") == std::string::npos)
            text.erase(0, 1);
          return text;
        } else
          return x;
      },
      v.content);
  if (with_unit && !v.missing() && !v.unit.empty()) {
    return body + " " + v.unit;
  }
  return body;
}

}  // namespace gpuclk::output
