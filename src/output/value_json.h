// Report values, trees and tables as JSON that reads back exactly: what the service sends a
// command (clocks, info, topo, query), so that the same printer prints it either way, byte for
// byte. Not a printer's JSON (printers.cpp): this one keeps units, precision and labels.
#pragma once

#include <nlohmann/json.hpp>

#include "output/value.h"

namespace gpuclk::output {

nlohmann::json to_json(const Value& v);
Value value_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Node& n);
Node node_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Table& t);
Table table_from_json(const nlohmann::json& j);

}  // namespace gpuclk::output
