#include "control/request.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>

#include "control/setting_table.h"
#include "util/error.h"
#include "util/parse.h"
#include "util/text.h"

namespace gpuclk::control {
namespace {

bool is_default_word(const std::string& s) { return s == "default" || s == "reset"; }

// Whole MHz; no clock of any GPU is near 100 GHz, so more is a typo, not a request.
std::optional<unsigned> parse_mhz(std::string_view text) {
  if (text.size() > 3 && text.substr(text.size() - 3) == "mhz") text.remove_suffix(3);
  auto v = parse::try_unsigned(text, 0, 100'000);
  if (!v) return std::nullopt;
  return static_cast<unsigned>(*v);
}

std::optional<ClockBound> parse_bound(std::string_view text) {
  if (text == "tdp" || text == "base") return ClockBound::tdp();
  if (text == "unlimited" || text == "max") return ClockBound::unlimited();
  if (auto mhz = parse_mhz(text)) return ClockBound::megahertz(*mhz);
  return std::nullopt;
}

}  // namespace

bool Request::has(Setting s) const {
  return table::with_row(s, [&](const auto& row) { return (this->*row.asked).has_value(); });
}

bool Request::empty() const {
  return std::none_of(kWriteOrder.begin(), kWriteOrder.end(), [&](Setting s) { return has(s); });
}

void Request::merge(const Request& over) {
  table::for_each_row([&](const auto& row) {
    if (over.*row.asked) this->*row.asked = over.*row.asked;
  });
}

bool parse_on_off(std::string_view text, std::string_view option) {
  auto s = text::lower_without_space(text);
  if (s == "on" || s == "1" || s == "true" || s == "enabled" || s == "enable") return true;
  if (s == "off" || s == "0" || s == "false" || s == "disabled" || s == "disable") return false;
  throw bad_argument(fmt::format("{}: '{}' is not on or off", option, parse::quote(text)),
                     "write on or off");
}

Change<ApplicationClocks> parse_application_clocks(std::string_view text, std::string_view option) {
  auto s = text::lower_without_space(text);
  if (is_default_word(s)) return Change<ApplicationClocks>::driver_default();
  auto comma = s.find(',');
  std::optional<unsigned> memory, graphics;
  if (comma != std::string::npos) {
    memory = parse_mhz(std::string_view(s).substr(0, comma));
    graphics = parse_mhz(std::string_view(s).substr(comma + 1));
  }
  if (!memory || !graphics) {
    throw bad_argument(fmt::format("{}: '{}' is not MEM,GFX", option, parse::quote(text)),
                       "give the memory and the graphics clock in MHz, memory first as nvidia-smi "
                       "-ac takes them (e.g. 2619,1755), or 'default'; `gpuclk clocks` lists the "
                       "supported pairs");
  }
  return Change<ApplicationClocks>::of({*memory, *graphics});
}

Change<ClockLock> parse_clock_lock(std::string_view text, std::string_view option) {
  auto s = text::lower_without_space(text);
  if (is_default_word(s) || s == "unlocked" || s == "none")
    return Change<ClockLock>::driver_default();
  auto comma = s.find(',');
  auto lo = parse_bound(std::string_view(s).substr(0, comma));
  auto hi = comma == std::string::npos ? lo : parse_bound(std::string_view(s).substr(comma + 1));
  const std::string form =
      "give MIN[,MAX] in MHz (e.g. 1755 or 1410,1755), or the driver's limits: tdp (the base "
      "clock), tdp,unlimited, unlimited,tdp; 'default' unlocks";
  if (!lo || !hi)
    throw bad_argument(fmt::format("{}: '{}' is not a clock range", option, parse::quote(text)),
                       form);
  if (lo->symbolic() != hi->symbolic()) {
    throw bad_argument(
        fmt::format("{}: '{}' mixes MHz and a symbolic limit", option, parse::quote(text)),
        "the driver takes two MHz values or two of tdp/unlimited, not one of each");
  }
  if (!lo->symbolic() && lo->mhz > hi->mhz) {
    throw bad_argument(
        fmt::format("{}: minimum {} MHz is above maximum {} MHz", option, lo->mhz, hi->mhz), form);
  }
  // The driver documents unlimited,unlimited as the same as a reset.
  if (lo->kind == ClockBound::Kind::unlimited && hi->kind == ClockBound::Kind::unlimited) {
    return Change<ClockLock>::driver_default();
  }
  return Change<ClockLock>::of(ClockLock::range(*lo, *hi));
}

Change<units::Milliwatts> parse_power_limit(std::string_view text, std::string_view option) {
  auto s = text::lower_without_space(text);
  if (is_default_word(s)) return Change<units::Milliwatts>::driver_default();
  if (!s.empty() && s.back() == 'w') s.pop_back();
  const auto mw = parse::try_fixed(s, 3, std::numeric_limits<std::uint64_t>::max());
  if (!mw || *mw == 0) {
    throw bad_argument(
        fmt::format("{}: '{}' is not a power in watts", option, parse::quote(text)),
        "give watts with at most three decimals (e.g. 600 or 612.5), or 'default'; "
        "`gpuclk query --query-gpu=power.min_limit,power.max_limit` shows the range");
  }
  return Change<units::Milliwatts>::of(units::Milliwatts(*mw));
}

std::string setting_text(const Settings& settings, Setting s) {
  if (!settings.has(s)) return {};
  return table::with_row(s, [&](const auto& row) { return row.text(*(settings.*row.value)); });
}

void parse_setting(Request& request, Setting s, std::string_view text, std::string_view option) {
  table::with_row(s, [&](const auto& row) { request.*row.asked = row.parse(text, option); });
}

std::string option_of(Setting s) {
  return std::string(table::with_row(s, [](const auto& row) { return row.option; }));
}

std::string asked_text(const Request& request) {
  std::string out;
  table::for_each_row([&](const auto& row) {
    if (const auto& asked = request.*row.asked) {
      out +=
          fmt::format("{}{}={}", out.empty() ? "" : " ", row.key, table::asked_text(row, *asked));
    }
  });
  return out;
}

std::string request_to_json(const Request& request) {
  auto j = checked::json::object();
  table::for_each_row([&](const auto& row) {
    if (const auto& asked = request.*row.asked)
      j[std::string(row.journal_key)] = table::asked_json(row, *asked);
  });
  return j.dump();
}

namespace {

// "keys: persistence_mode, ..., power_limit (text, as gpuclk set takes it), power_limit_mw (the
// journal's form)", from the rows.
std::string request_keys() {
  std::string text, journal;
  table::for_each_row([&](const auto& row) {
    text += fmt::format("{}{}", text.empty() ? "" : ", ", row.key);
    if (row.journal_key != row.key)
      journal += fmt::format("{}{}", journal.empty() ? "" : ", ", row.journal_key);
  });
  return fmt::format("keys: {} (text, as gpuclk set takes it), {} (the journal's form)", text,
                     journal);
}

// One setting of a delegated request: `value` under `key`, which is the row's key or its
// journal key. A string is text as gpuclk set takes it ("600", "default"); anything else is the
// typed form the journal writes, under the journal's key.
template <class Row>
void read_one(Request& r, const Row& row, const std::string& key, const checked::json& value,
              std::string_view where) {
  const auto option = fmt::format("{}.{}", where, key);
  if (value.is_string()) {
    r.*row.asked = row.parse(value.get<std::string>(), option);
    return;
  }
  if (key != row.journal_key) {
    throw bad_argument(fmt::format("{} must be a string, as gpuclk set takes it", option),
                       fmt::format("or give {}.{}: the journal's form", where, row.journal_key));
  }
  try {
    const auto v = row.from_json(value);
    using Asked = typename Row::asked_type;
    if constexpr (std::is_same_v<Asked, typename Row::value_type>)
      r.*row.asked = v;
    else
      r.*row.asked = Asked::of(v);
  } catch (const std::exception& e) {  // a type or range error of the value (json_checked.h)
    throw bad_argument(fmt::format("{}: {}", option, e.what()));
  }
}

}  // namespace

Request request_from_json(const std::string& settings, std::string_view where) {
  checked::json j;
  try {
    j = checked::json::parse(settings);
  } catch (const std::exception&) {
    j = nullptr;
  }
  if (!j.is_object() || j.empty())
    throw bad_argument(fmt::format("{} must be an object naming one or more settings", where),
                       request_keys());
  Request r;
  for (const auto& item : j.items()) {
    // Named references: clang before 16 cannot capture structured bindings in a lambda.
    const std::string& key = item.key();
    const auto& value = item.value();
    bool known = false;
    table::for_each_row([&](const auto& row) {
      if (known || (key != row.key && key != row.journal_key)) return;
      known = true;
      read_one(r, row, key, value, where);
    });
    if (!known)
      throw bad_argument(fmt::format("unknown setting '{}'", parse::quote(key)), request_keys());
  }
  return r;
}

}  // namespace gpuclk::control
