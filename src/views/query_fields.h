// The fields `gpuclk query --fields` knows. Names follow `nvidia-smi --query-gpu` where the field
// exists there (same name, same unit); gpuclk's own additions are listed with them.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/device.h"
#include "output/value.h"

namespace gpuclk::views {

struct QueryField {
  std::string name;                  // canonical name
  std::vector<std::string> aliases;  // other spellings nvidia-smi accepts
  std::string unit;                  // as shown in CSV headers ("MHz"); "" for none
  std::string description;
  std::function<output::Value(const gpu::Device&, const gpu::DeviceSet&)> read;
};

const std::vector<QueryField>& query_fields();

// Every field of one GPU, by canonical name, as the service's "query" view caches it.
nlohmann::json read_all_query_fields(const gpu::Device& device, const gpu::DeviceSet& set);

// Resolves "clocks.sm,power.draw" (names or aliases, case-insensitive, spaces ignored) to fields.
// Throws Error (exit 2) naming the unknown field and the nearest known names.
std::vector<const QueryField*> parse_query_fields(std::string_view list);

}  // namespace gpuclk::views
