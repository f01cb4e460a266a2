#include "toml_access.h"

#include <algorithm>
#include <cmath>

namespace gpuclk::sim {

void TomlAccess::fail(std::string_view key, std::string_view problem) const {
  throw ScenarioError(where_ + ": " + std::string(key) + ": " + std::string(problem));
}

const toml::node* TomlAccess::node(std::string_view key) const { return get(key); }

namespace {
thread_local KeyLog* active_log = nullptr;
}  // namespace

KeyLog::KeyLog() : previous_(active_log) { active_log = this; }
KeyLog::~KeyLog() { active_log = previous_; }
KeyLog* KeyLog::active() { return active_log; }

void KeyLog::asked(const toml::table& table, std::string_view key, const std::string& where) {
  auto& a = asked_[&table];
  if (a.where.empty()) a.where = where;
  if (std::find(a.keys.begin(), a.keys.end(), key) == a.keys.end()) a.keys.emplace_back(key);
}

void KeyLog::check(const toml::table& table) const {
  if (auto it = asked_.find(&table); it != asked_.end() && !exempt_.count(&table)) {
    for (const auto& [key, value] : table) {
      const auto& known = it->second.keys;
      if (std::find(known.begin(), known.end(), key.str()) != known.end()) continue;
      auto sorted = known;
      std::sort(sorted.begin(), sorted.end());
      std::string list;
      for (const auto& k : sorted) list += (list.empty() ? "" : ", ") + k;
      throw ScenarioError(it->second.where + ": unknown key '" + std::string(key.str()) +
                          "' (valid here: " + list + ")");
    }
  }
  for (const auto& [key, value] : table) {
    if (const auto* sub = value.as_table()) check(*sub);
    if (const auto* array = value.as_array()) {
      for (const toml::node& e : *array) {
        if (const auto* sub = e.as_table()) check(*sub);
      }
    }
  }
}

void KeyLog::refuse_unasked(const toml::table& root) const { check(root); }

TomlAccess TomlAccess::sub(std::string_view key) const {
  auto sub_table = optional_sub(key);
  if (!sub_table) fail(key, "missing table");
  return *sub_table;
}

std::optional<TomlAccess> TomlAccess::optional_sub(std::string_view key) const {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_table()) fail(key, "expected a table");
  return TomlAccess(*n->as_table(), where_ + " [" + std::string(key) + "]");
}

double TomlAccess::number(std::string_view key) const {
  const toml::node* n = node(key);
  if (!n) fail(key, "missing number");
  if (auto v = n->value<double>()) {
    // TOML allows nan and inf; no physical quantity of a scenario is either, or near 1e15.
    if (!std::isfinite(*v) || std::fabs(*v) > kMaxNumber) fail(key, "expected a finite number");
    return *v;
  }
  fail(key, "expected a number");
}

double TomlAccess::number_or(std::string_view key, double fallback) const {
  return has(key) ? number(key) : fallback;
}

std::uint64_t TomlAccess::integer(std::string_view key) const {
  const toml::node* n = node(key);
  if (!n) fail(key, "missing integer");
  if (!n->is_integer()) fail(key, "expected an integer");
  const std::int64_t v = n->as_integer()->get();
  if (v < 0) fail(key, "must not be negative");
  if (static_cast<std::uint64_t>(v) > kMaxInteger) fail(key, "is too large");
  return static_cast<std::uint64_t>(v);
}

std::uint64_t TomlAccess::integer_in(std::string_view key, std::uint64_t min,
                                     std::uint64_t max) const {
  const auto v = integer(key);
  if (v < min || v > max) {
    fail(key, "expected " + std::to_string(min) + ".." + std::to_string(max) + ", not " +
                  std::to_string(v));
  }
  return v;
}

std::uint64_t TomlAccess::integer_or(std::string_view key, std::uint64_t fallback) const {
  return has(key) ? integer(key) : fallback;
}

std::string TomlAccess::text(std::string_view key) const {
  const toml::node* n = node(key);
  if (!n) fail(key, "missing string");
  if (!n->is_string()) fail(key, "expected a string");
  return n->as_string()->get();
}

std::string TomlAccess::text_or(std::string_view key, const std::string& fallback) const {
  return has(key) ? text(key) : fallback;
}

bool TomlAccess::boolean_or(std::string_view key, bool fallback) const {
  const toml::node* n = node(key);
  if (!n) return fallback;
  if (!n->is_boolean()) fail(key, "expected true or false");
  return n->as_boolean()->get();
}

std::vector<std::uint64_t> TomlAccess::integers(std::string_view key) const {
  const toml::node* n = node(key);
  if (!n || !n->is_array()) fail(key, "expected an array of integers");
  std::vector<std::uint64_t> out;
  for (const toml::node& e : *n->as_array()) {
    if (!e.is_integer() || e.as_integer()->get() < 0 ||
        static_cast<std::uint64_t>(e.as_integer()->get()) > kMaxInteger)
      fail(key, "expected non-negative integers");
    out.push_back(static_cast<std::uint64_t>(e.as_integer()->get()));
  }
  return out;
}

std::vector<std::string> TomlAccess::texts_or(std::string_view key) const {
  std::vector<std::string> out;
  const toml::node* n = node(key);
  if (!n) return out;
  if (!n->is_array()) fail(key, "expected an array of strings");
  for (const toml::node& e : *n->as_array()) {
    if (!e.is_string()) fail(key, "expected strings");
    out.push_back(e.as_string()->get());
  }
  return out;
}

Curve TomlAccess::curve(std::string_view key) const {
  const toml::node* n = node(key);
  if (!n || !n->is_array()) fail(key, "expected [[x, y], …]");
  std::vector<CurvePoint> points;
  for (const toml::node& e : *n->as_array()) {
    const toml::array* pair = e.as_array();
    if (!pair || pair->size() != 2) fail(key, "expected [[x, y], …]");
    auto x = pair->get(0)->value<double>();
    auto y = pair->get(1)->value<double>();
    if (!x || !y) fail(key, "expected numbers in [[x, y], …]");
    if (!points.empty() && *x <= points.back().x) fail(key, "x must increase");
    points.push_back({*x, *y});
  }
  if (points.empty()) fail(key, "needs at least one point");
  return Curve(std::move(points));
}

}  // namespace gpuclk::sim
