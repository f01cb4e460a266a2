#include "output/value_json.h"

#include <type_traits>
#include <variant>

namespace gpuclk::output {

using nlohmann::json;

json to_json(const Value& v) {
  json j = json::object();
  std::visit(
      [&j](const auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, bool>)
          j["b"] = c;
        else if constexpr (std::is_same_v<T, long long>)
          j["i"] = c;
        else if constexpr (std::is_same_v<T, double>)
          j["d"] = c;
        else if constexpr (std::is_same_v<T, std::string>)
          j["s"] = c;
      },
      v.content);
  if (!v.unit.empty()) j["unit"] = v.unit;
  if (v.precision != 0) j["precision"] = v.precision;
  return j;
}

Value value_from_json(const json& j) {
  Value v;
  if (j.contains("b"))
    v.content = j.at("b").get<bool>();
  else if (j.contains("i"))
    v.content = j.at("i").get<long long>();
  else if (j.contains("d"))
    v.content = j.at("d").get<double>();
  else if (j.contains("s"))
    v.content = j.at("s").get<std::string>();
  v.unit = j.value("unit", std::string());
  v.precision = j.value("precision", 0);
  return v;
}

json to_json(const Node& n) {
  json j{{"key", n.key}, {"label", n.label}, {"value", to_json(n.value)}};
  if (n.list) j["list"] = true;
  if (!n.children.empty()) {
    j["children"] = json::array();
    for (const auto& c : n.children) j["children"].push_back(to_json(c));
  }
  return j;
}

Node node_from_json(const json& j) {
  Node n;
  n.key = j.at("key").get<std::string>();
  n.label = j.at("label").get<std::string>();
  n.value = value_from_json(j.at("value"));
  n.list = j.value("list", false);
  if (j.contains("children")) {
    for (const auto& c : j.at("children")) n.children.push_back(node_from_json(c));
  }
  return n;
}

json to_json(const Table& t) {
  json columns = json::array(), rows = json::array();
  for (const auto& c : t.columns) {
    columns.push_back({{"key", c.key}, {"header", c.header}, {"left", c.left}, {"unit", c.unit}});
  }
  for (const auto& r : t.rows) {
    json row = json::array();
    for (const auto& v : r) row.push_back(to_json(v));
    rows.push_back(std::move(row));
  }
  return json{{"columns", columns}, {"rows", rows}};
}

Table table_from_json(const json& j) {
  Table t;
  for (const auto& c : j.at("columns")) {
    t.columns.push_back({c.at("key").get<std::string>(), c.at("header").get<std::string>(),
                         c.at("left").get<bool>(), c.at("unit").get<std::string>()});
  }
  for (const auto& r : j.at("rows")) {
    std::vector<Value> row;
    for (const auto& v : r) row.push_back(value_from_json(v));
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace gpuclk::output
