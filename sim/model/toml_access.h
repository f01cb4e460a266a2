// Typed, checked access to TOML values for the scenario and model loaders: a missing or
// mistyped value throws ScenarioError naming the file and the key.
#pragma once

// Debian's libtomlplusplus-dev 3.3 ships toml.h; upstream's single header is toml.hpp.
#if __has_include(<toml++/toml.hpp>)
#include <toml++/toml.hpp>
#else
#include <toml++/toml.h>
#endif

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "curve.h"
#include "scenario.h"

namespace gpuclk::sim {

inline constexpr std::uint64_t kMaxInteger = 1ull << 50;
inline constexpr double kMaxNumber = 1e15;
// The most GPUs a simulated node may have (NVML counts in unsigned int; real nodes have <= 16).
inline constexpr std::uint64_t kMaxGpus = 1024;

// The keys a loader asked of each table, to refuse the keys it never asked of (a misspelt key
// would otherwise be a silent default). While a KeyLog is active (one per loading thread), every
// TomlAccess records into it; refuse_unasked() then walks the document.
class KeyLog {
 public:
  KeyLog();
  ~KeyLog();
  KeyLog(const KeyLog&) = delete;
  KeyLog& operator=(const KeyLog&) = delete;

  static KeyLog* active();
  void asked(const toml::table& table, std::string_view key, const std::string& where);
  // The table's keys are checked by its reader (it iterated them): never refused here.
  void checked_by_reader(const toml::table& table) { exempt_.insert(&table); }
  // Throws ScenarioError naming the first key of a table read through TomlAccess that the
  // loader never asked for, with the keys it knows there. Tables never read are not judged.
  void refuse_unasked(const toml::table& root) const;

 private:
  void check(const toml::table& table) const;
  struct Asked {
    std::string where;
    std::vector<std::string> keys;
  };
  std::map<const toml::table*, Asked> asked_;
  std::set<const toml::table*> exempt_;
  KeyLog* previous_;
};

class TomlAccess {
 public:
  TomlAccess(const toml::table& table, std::string where)
      : table_(table), where_(std::move(where)) {}

  bool has(std::string_view key) const {
    note(key);
    return table_.contains(key);
  }
  // The node under `key` (null when absent), asked for as has() is.
  const toml::node* get(std::string_view key) const {
    note(key);
    return table_.get(key);
  }
  // The table itself, for a reader that goes over its keys and refuses the unknown ones.
  const toml::table& table() const {
    if (auto* log = KeyLog::active()) log->checked_by_reader(table_);
    return table_;
  }
  const std::string& where() const { return where_; }

  // A sub-table as its own accessor; required ones throw, optional ones return nullopt.
  TomlAccess sub(std::string_view key) const;
  std::optional<TomlAccess> optional_sub(std::string_view key) const;

  double number(std::string_view key) const;
  double number_or(std::string_view key, double fallback) const;
  // Non-negative, at most kMaxInteger (2^50: bytes of any memory, with room).
  std::uint64_t integer(std::string_view key) const;
  // Also within [min, max] (counts, indexes).
  std::uint64_t integer_in(std::string_view key, std::uint64_t min, std::uint64_t max) const;
  std::uint64_t integer_or(std::string_view key, std::uint64_t fallback) const;
  std::string text(std::string_view key) const;
  std::string text_or(std::string_view key, const std::string& fallback) const;
  bool boolean_or(std::string_view key, bool fallback) const;
  std::vector<std::uint64_t> integers(std::string_view key) const;
  std::vector<std::string> texts_or(std::string_view key) const;
  Curve curve(std::string_view key) const;  // [[x, y], …], x ascending

  [[noreturn]] void fail(std::string_view key, std::string_view problem) const;

 private:
  const toml::node* node(std::string_view key) const;
  void note(std::string_view key) const {
    if (auto* log = KeyLog::active()) log->asked(table_, key, where_);
  }

  const toml::table& table_;
  std::string where_;
};

}  // namespace gpuclk::sim
