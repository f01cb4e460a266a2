// What commands hand to printers: values with their unit, tables of them, and trees of them.
// Commands build these; printers (printer.h) turn them into text. A missing reading is a Value
// with no content: tables show "N/A", JSON null, CSV "[N/A]" as nvidia-smi does.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "gpu/reading.h"
#include "gpu/units.h"

namespace gpuclk::output {

struct Value {
  std::variant<std::monostate, bool, long long, double, std::string> content;
  std::string unit;   // shown after the number in tables, in CSV headers; "" for none
  int precision = 0;  // digits after the point for doubles

  bool missing() const { return std::holds_alternative<std::monostate>(content); }
};

inline Value na() { return {}; }
inline Value text(std::string s) { return {std::move(s), "", 0}; }
inline Value flag(bool b) { return {b, "", 0}; }
inline Value integer(long long v, std::string unit = {}) { return {v, std::move(unit), 0}; }
inline Value number(double v, std::string unit = {}, int precision = 1) {
  return {v, std::move(unit), precision};
}

// Unit-typed readings to values, in the unit users read them in.
Value mhz(const gpu::Reading<units::Megahertz>& r);
Value watts(const gpu::Reading<units::Watts>& r, int precision = 2);
Value celsius(const gpu::Reading<units::Celsius>& r);
Value percent(const gpu::Reading<units::Ratio>& r);
Value mebibytes(const gpu::Reading<units::Bytes>& r);
// The same for a value that may be absent (no reading: a setting, a fact): N/A when it is.
Value mhz(const std::optional<units::Megahertz>& m);
template <class T>
Value from(const gpu::Reading<T>& r, std::string unit = {}) {
  if (!r) return na();
  if constexpr (std::is_same_v<T, std::string>)
    return text(*r);
  else if constexpr (std::is_same_v<T, bool>)
    return flag(*r);
  else
    return integer(static_cast<long long>(*r), std::move(unit));
}

struct Column {
  std::string key;     // JSON key and CSV header name ("clocks.sm")
  std::string header;  // short table header ("SM MHz"); key when empty
  bool left = false;   // left-align (text) instead of right-align (numbers)
  std::string unit;    // CSV header unit ("clocks.sm [MHz]"); else the first row's value unit
};

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<Value>> rows;
};

// A tree for reports like `gpuclk info` and `gpuclk clocks`: a node has a value or children.
struct Node {
  std::string key;    // JSON key (snake_case)
  std::string label;  // human label ("Max Boost Clock"); key when empty
  Value value;
  std::vector<Node> children;
  bool list = false;  // children are an array in JSON (GPUs), not an object

  Node& add(std::string child_key, std::string child_label, Value v) {
    children.push_back({std::move(child_key), std::move(child_label), std::move(v), {}, false});
    return children.back();
  }
  Node& section(std::string child_key, std::string child_label, bool is_list = false) {
    children.push_back({std::move(child_key), std::move(child_label), {}, {}, is_list});
    return children.back();
  }
};

// "1980 MHz", "N/A", "yes": how a value reads in a table or tree.
std::string to_text(const Value& v, bool with_unit = true);

}  // namespace gpuclk::output
