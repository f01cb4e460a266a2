#include "control/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

// Debian's libtomlplusplus-dev 3.3 ships toml.h; upstream's single header is toml.hpp.
#if __has_include(<toml++/toml.hpp>)
#include <toml++/toml.hpp>
#else
#include <toml++/toml.h>
#endif

#include "control/setting_table.h"
#include "gpu/selection.h"
#include "util/error.h"
#include "util/file.h"
#include "util/parse.h"

namespace gpuclk::control {
namespace {

std::string where(const std::string& source, const toml::node& node) {
  const auto& src = node.source();
  return src.begin.line ? fmt::format("{}:{}", source, src.begin.line) : source;
}

// A value given as a string, or as a number/bool written without quotes ("power_limit_w = 600").
std::string text_of(const toml::node& node, const std::string& key, const std::string& source) {
  // Check the type first: toml++'s value<T>() converts between numbers and booleans.
  if (node.is_string()) return *node.value<std::string>();
  if (node.is_boolean()) return *node.value<bool>() ? "on" : "off";
  if (node.is_integer()) return std::to_string(*node.value<long long>());
  if (node.is_floating_point()) return fmt::format("{}", *node.value<double>());
  throw bad_argument(fmt::format("{}: {} must be a string or a number", where(source, node), key));
}

// "persistence_mode, application_clocks, ..., power_limit_w", from the rows.
std::string profile_keys() {
  std::string out;
  table::for_each_row([&](const auto& row) {
    out += fmt::format("{}{}", out.empty() ? "" : ", ", row.profile_key);
  });
  return out;
}

Request settings_from(const toml::table& table, const std::string& source,
                      const std::set<std::string>& allowed_extra) {
  Request r;
  for (const auto& [k, node] : table) {
    const std::string key(k.str());
    if (allowed_extra.count(key)) continue;
    std::optional<Setting> setting;
    control::table::for_each_row([&](const auto& row) {
      if (key == row.profile_key) setting = row.setting;
    });
    if (!setting) {
      throw bad_argument(
          fmt::format("{}: unknown key '{}'", where(source, node), parse::quote(key)),
          fmt::format("settings: {} (deploy/profiles/example.toml)", profile_keys()));
    }
    parse_setting(r, *setting, text_of(node, key, source),
                  fmt::format("{}: {}", where(source, node), key));
  }
  return r;
}

std::string gpus_of(const toml::table& table, const std::string& source) {
  const auto* node = table.get("gpus");
  if (!node) return {};
  auto s = node->is_string() ? node->value<std::string>() : std::nullopt;
  if (!s) {
    if (node->is_integer()) return std::to_string(*node->value<long long>());
    throw bad_argument(fmt::format(
        "{}: gpus must be a string: \"all\" or indexes, UUIDs, PCI bus ids", where(source, *node)));
  }
  // An empty selection is a mistake (an unset shell variable), never "every GPU": say so.
  if (s->find_first_not_of(" \t") == std::string::npos) {
    throw bad_argument(fmt::format("{}: gpus is empty", where(source, *node)),
                       "write gpus = \"all\", or indexes, UUIDs or PCI bus ids");
  }
  return *s;
}

}  // namespace

Profile parse_profile(const std::string& text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw bad_argument(fmt::format("{}:{}: {}", source, e.source().begin.line, e.description()));
  }
  Profile p;
  for (const auto& [k, node] : root) {
    const std::string key(k.str());
    if (key == "description") {
      p.description = node.value_or(std::string());
    } else if (key == "gpus") {
      p.gpus = gpus_of(root, source);
    } else if (key == "snap") {
      auto b = node.is_boolean() ? node.value<bool>() : std::nullopt;
      if (!b)
        throw bad_argument(fmt::format("{}: snap must be true or false", where(source, node)));
      p.snap = *b;
    } else if (key == "settings") {
      if (!node.is_table())
        throw bad_argument(fmt::format("{}: [settings] must be a table", where(source, node)));
      p.settings = settings_from(*node.as_table(), source, {});
    } else if (key == "override") {
      if (!node.is_array_of_tables()) {
        throw bad_argument(
            fmt::format("{}: override must be [[override]] tables", where(source, node)));
      }
      for (const auto& item : *node.as_array()) {
        const auto& table = *item.as_table();
        ProfileGroup g{gpus_of(table, source), settings_from(table, source, {"gpus"})};
        if (g.gpus.empty()) {
          throw bad_argument(
              fmt::format("{}: an [[override]] needs gpus = \"...\"", where(source, item)));
        }
        p.overrides.push_back(std::move(g));
      }
    } else if (key == "version") {
      if (!node.is_integer() || node.value<long long>() != 1) {
        throw bad_argument(fmt::format("{}: profile version {} is not 1", where(source, node),
                                       text_of(node, key, source)));
      }
    } else {
      throw bad_argument(
          fmt::format("{}: unknown key '{}'", where(source, node), parse::quote(key)),
          "top-level keys: version, description, gpus, snap, [settings], [[override]]");
    }
  }
  bool any = !p.settings.empty();
  for (const auto& o : p.overrides) any = any || !o.request.empty();
  if (!any) {
    throw bad_argument(fmt::format("{}: the profile names no setting", source),
                       "add a [settings] table (see deploy/profiles/example.toml)");
  }
  return p;
}

Profile load_profile(const std::filesystem::path& path) {
  auto p = parse_profile(file::read_bounded(path.string(), "profile"), path.string());
  p.path = path;
  return p;
}

namespace {

// A profile's gpus: "all" (also when it names none), or -i syntax.
std::vector<std::size_t> positions(const std::string& spec,
                                   const std::vector<gpu::DeviceKey>& keys) {
  if (spec.empty() || spec == "all") {
    std::vector<std::size_t> all(keys.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    return all;
  }
  return gpu::select_devices(spec, keys);
}

}  // namespace

std::vector<DeviceRequest> profile_requests(const Profile& profile, const gpu::DeviceSet& all,
                                            const std::vector<gpu::Device*>& selected) {
  std::vector<gpu::DeviceKey> keys;
  for (const auto& d : all)
    keys.push_back({d->index(), d->uuid(), d->identity().pci ? d->identity().pci->bus_id : ""});
  const auto covered = positions(profile.gpus, keys);
  // -i narrows the profile to some of its GPUs.
  std::vector<std::size_t> chosen;
  for (auto p : covered) {
    if (std::any_of(selected.begin(), selected.end(), [&](auto* d) { return d == &all[p]; }))
      chosen.push_back(p);
  }
  std::sort(chosen.begin(), chosen.end());
  std::vector<DeviceRequest> requests;
  for (auto p : chosen) {
    Request r = profile.settings;
    for (const auto& group : profile.overrides) {
      const auto in_group = positions(group.gpus, keys);
      if (std::find(in_group.begin(), in_group.end(), p) != in_group.end()) r.merge(group.request);
    }
    if (!r.empty()) requests.push_back({const_cast<gpu::Device*>(&all[p]), r});
  }
  return requests;
}

}  // namespace gpuclk::control
