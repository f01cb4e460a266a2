// Checked reads of the JSON gpuclk keeps (the journal, a delegated request's typed values): an
// input like any other (a person may edit a file, a disk may corrupt it, a client may forge a
// request). Every value is type- and range-checked; nothing is converted unchecked. Each throws
// std::runtime_error naming the value and what it must be.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "control/settings.h"

namespace gpuclk::control::checked {

using json = nlohmann::ordered_json;  // keys in the order written: the journal is read by people

inline std::uint64_t whole(const json& j, const char* what, std::uint64_t max) {
  if (!j.is_number_unsigned()) {
    throw std::runtime_error(fmt::format("{} must be a whole number, not {}", what, j.type_name()));
  }
  const auto v = j.get<std::uint64_t>();
  if (v > max) throw std::runtime_error(fmt::format("{} {} is above {}", what, v, max));
  return v;
}

inline unsigned mhz(const json& j, const char* what) {
  return static_cast<unsigned>(whole(j, what, kMaxMhz));
}

inline std::string string_of(const json& j, const char* what) {
  if (!j.is_string())
    throw std::runtime_error(fmt::format("{} must be a string, not {}", what, j.type_name()));
  return j.get<std::string>();
}

inline const json& object(const json& j, const char* what) {
  if (!j.is_object())
    throw std::runtime_error(fmt::format("{} must be an object, not {}", what, j.type_name()));
  return j;
}

inline const json& array(const json& j, const char* what) {
  if (!j.is_array())
    throw std::runtime_error(fmt::format("{} must be an array, not {}", what, j.type_name()));
  return j;
}

}  // namespace gpuclk::control::checked
