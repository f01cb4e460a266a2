#include "gpu/selection.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "util/error.h"
#include "util/parse.h"

namespace gpuclk::gpu {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool parse_hex(std::string_view s, unsigned long& out) {
  if (s.empty() || s.size() > 8) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool iequals_prefix(std::string_view prefix, std::string_view full) {
  if (prefix.size() > full.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(prefix[i])) !=
        std::tolower(static_cast<unsigned char>(full[i])))
      return false;
  }
  return true;
}

}  // namespace

std::string available_gpus(const std::vector<DeviceKey>& keys) {
  if (keys.empty()) return "no GPUs are visible";
  std::string out = "GPUs here:";
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto& k = keys[i];
    out += fmt::format("{} {} ({}{}{})", i == 0 ? "" : ";", k.index, k.uuid,
                       k.bus_id.empty() ? "" : ", ", k.bus_id);
  }
  return out;
}

namespace {

std::string available(const std::vector<DeviceKey>& keys) { return available_gpus(keys); }

// What a selection may name: on this node when its GPUs are known, else the forms only.
std::string valid_forms(const std::vector<DeviceKey>* keys) {
  const std::string forms =
      "give GPU indexes, UUIDs (GPU-…, or a unique prefix) or PCI bus ids (DDDDDDDD:BB:DD.F), "
      "comma separated";
  return keys ? forms + "; " + available(*keys) : forms;
}

}  // namespace

std::string normalize_bus_id(std::string_view text) {
  // [domain:]bus:device.function
  auto dot = text.rfind('.');
  if (dot == std::string_view::npos) return {};
  auto head = text.substr(0, dot);
  auto last_colon = head.rfind(':');
  if (last_colon == std::string_view::npos) return {};
  auto first_colon = head.find(':');
  unsigned long domain = 0, bus = 0, device = 0, function = 0;
  if (first_colon != last_colon) {
    if (!parse_hex(head.substr(0, first_colon), domain)) return {};
    if (!parse_hex(head.substr(first_colon + 1, last_colon - first_colon - 1), bus)) return {};
  } else if (!parse_hex(head.substr(0, last_colon), bus)) {
    return {};
  }
  if (!parse_hex(head.substr(last_colon + 1), device)) return {};
  if (!parse_hex(text.substr(dot + 1), function)) return {};
  if (bus > 0xff || device > 0x1f || function > 7) return {};
  return fmt::format("{:08X}:{:02X}:{:02X}.{:X}", domain, bus, device, function);
}

namespace {

// One item of a selection, classified without looking at any GPU.
struct Item {
  enum class Kind { index, uuid, bus_id } kind;
  std::string_view text;
  unsigned index = 0;  // kind index
  std::string bus;     // kind bus_id, normalized
};

// The checks that need no GPU (exit 2): empty or too long spec, empty or malformed item, index
// beyond kMaxGpuIndex. `keys`: the GPUs there are, when known, for the hints (nullptr: not).
std::vector<Item> parse_items(std::string_view spec, const std::vector<DeviceKey>* keys) {
  // Empty is never "all": `gpuclk -i "$GPU" set …` with $GPU unset must not change every GPU.
  if (trim(spec).empty()) {
    throw bad_argument("the GPU selection is empty",
                       "give indexes, UUIDs or PCI bus ids separated by commas (e.g. -i 0,2); "
                       "leave -i out to mean every GPU");
  }
  // A selection names at most every GPU a few ways; a longer one is not a selection.
  if (spec.size() > 4096) {
    throw bad_argument(fmt::format("the GPU selection '{}' is too long", parse::quote(spec)),
                       "give indexes, UUIDs or PCI bus ids separated by commas");
  }
  std::vector<Item> items;
  std::size_t start = 0;
  while (start <= spec.size()) {
    auto comma = spec.find(',', start);
    auto text =
        trim(spec.substr(start, comma == std::string_view::npos ? spec.npos : comma - start));
    start = comma == std::string_view::npos ? spec.size() + 1 : comma + 1;
    if (text.empty()) {
      throw bad_argument(fmt::format("empty item in device list '{}'", parse::quote(spec)),
                         "use indexes, UUIDs or PCI bus ids separated by commas, e.g. -i 0,2");
    }
    // An index: all digits. Checked: one that overflows is a bad argument, never GPU 0.
    if (std::all_of(text.begin(), text.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      const auto index = parse::try_unsigned(text, 0, kMaxGpuIndex);
      if (!index) {
        throw bad_argument(fmt::format("GPU index '{}' is out of range", parse::quote(text)),
                           keys ? valid_forms(keys)
                                : fmt::format("indexes run from 0 to {} at most", kMaxGpuIndex));
      }
      items.push_back({Item::Kind::index, text, static_cast<unsigned>(*index), {}});
      continue;
    }
    // A UUID (or unique prefix of at least "GPU-" plus 4 characters).
    if (iequals_prefix("GPU-", text) || iequals_prefix("MIG-", text)) {
      items.push_back({Item::Kind::uuid, text, 0, {}});
      continue;
    }
    // A PCI bus id.
    if (auto bus = normalize_bus_id(text); !bus.empty()) {
      items.push_back({Item::Kind::bus_id, text, 0, std::move(bus)});
      continue;
    }
    throw bad_argument(
        fmt::format("'{}' is not a GPU index, UUID or PCI bus id", parse::quote(text)),
        valid_forms(keys));
  }
  return items;
}

}  // namespace

void check_selection(std::string_view spec,
                     const std::function<std::optional<std::vector<DeviceKey>>()>& present) {
  try {
    parse_items(spec, nullptr);
  } catch (const Error&) {
    // The hint names the GPUs of this node when they can be listed (the message stays).
    std::optional<std::vector<DeviceKey>> keys;
    if (present) {
      try {
        keys = present();
      } catch (...) {
        keys.reset();  // no NVML here, or a command that may not load it: the forms only
      }
    }
    if (!keys) throw;
    parse_items(spec, &*keys);  // the same refusal, its hint naming this node's GPUs
    throw;
  }
}

std::vector<std::size_t> select_devices(std::string_view spec, const std::vector<DeviceKey>& keys) {
  std::vector<std::size_t> chosen;
  auto add = [&](std::size_t pos) {
    if (std::find(chosen.begin(), chosen.end(), pos) == chosen.end()) chosen.push_back(pos);
  };
  for (const auto& item : parse_items(spec, &keys)) {
    switch (item.kind) {
      case Item::Kind::index: {
        auto it = std::find_if(keys.begin(), keys.end(),
                               [&](const DeviceKey& k) { return k.index == item.index; });
        if (it == keys.end()) {
          throw Error(ExitCode::gpu_not_found, fmt::format("no GPU with index {}", item.index),
                      available(keys));
        }
        add(std::size_t(it - keys.begin()));
        break;
      }
      case Item::Kind::uuid: {
        std::vector<std::size_t> matches;
        for (std::size_t i = 0; i < keys.size(); ++i) {
          if (iequals_prefix(item.text, keys[i].uuid)) matches.push_back(i);
        }
        if (matches.empty()) {
          throw Error(ExitCode::gpu_not_found,
                      fmt::format("no GPU with UUID '{}'", parse::quote(item.text)),
                      available(keys));
        }
        if (matches.size() > 1) {
          throw bad_argument(fmt::format("UUID prefix '{}' matches {} GPUs",
                                         parse::quote(item.text), matches.size()),
                             "give more characters of the UUID");
        }
        add(matches.front());
        break;
      }
      case Item::Kind::bus_id: {
        auto it = std::find_if(keys.begin(), keys.end(), [&](const DeviceKey& k) {
          return normalize_bus_id(k.bus_id) == item.bus;
        });
        if (it == keys.end()) {
          throw Error(ExitCode::gpu_not_found,
                      fmt::format("no GPU at PCI bus id '{}'", parse::quote(item.text)),
                      available(keys));
        }
        add(std::size_t(it - keys.begin()));
        break;
      }
    }
  }
  return chosen;
}

}  // namespace gpuclk::gpu
