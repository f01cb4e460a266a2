#include "gpu/limits_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace gpuclk::gpu {
namespace {

using nlohmann::json;

constexpr int kFormat = 1;
constexpr std::size_t kMaxBytes = std::size_t(256) * 1024;
constexpr std::size_t kMaxMemoryClocks = 64;     // what probe_clock_limits asks NVML for
constexpr std::size_t kMaxGraphicsClocks = 512;  // per memory clock, likewise
constexpr double kMaxMhz = 100000;

// Only names NVML gives (GPU-<hex and dashes>, MIG-…) make a file name; anything else is not
// cached.
bool safe_name(const std::string& uuid) {
  return !uuid.empty() && uuid.size() <= 96 && std::all_of(uuid.begin(), uuid.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
  });
}

// Ours alone: owned by this user, writable by nobody else.
bool private_to_us(const struct stat& st) {
  return st.st_uid == geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

bool private_dir(const std::filesystem::path& dir) {
  struct stat st {};
  return ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && private_to_us(st);
}

json mhz_json(const Reading<Megahertz>& r) { return r ? json(r->value()) : json(nullptr); }

bool cacheable(const Reading<Megahertz>& r) { return r.status() != ReadStatus::error; }

// A clock from the file: null = not supported, else a number in (0, kMaxMhz].
std::optional<Reading<Megahertz>> mhz_from(const json& j) {
  if (j.is_null()) return Reading<Megahertz>::not_supported();
  if (!j.is_number()) return std::nullopt;
  const double v = j.get<double>();
  if (!(v > 0 && v <= kMaxMhz)) return std::nullopt;
  return Reading<Megahertz>(Megahertz(v));
}

bool clocks_from(const json& j, std::array<Reading<Megahertz>, 4>& out) {
  if (!j.is_array() || j.size() != out.size()) return false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto r = mhz_from(j[i]);
    if (!r) return false;
    out[i] = *r;
  }
  return true;
}

std::optional<Reading<std::vector<SupportedClocks>>> supported_from(const json& j) {
  using R = Reading<std::vector<SupportedClocks>>;
  if (j.is_null()) return R::not_supported();
  if (!j.is_array() || j.size() > kMaxMemoryClocks) return std::nullopt;
  std::vector<SupportedClocks> list;
  for (const auto& entry : j) {
    if (!entry.is_object() || !entry.contains("memory") || !entry.contains("graphics"))
      return std::nullopt;
    auto memory = mhz_from(entry["memory"]);
    const auto& graphics = entry["graphics"];
    if (!memory || !*memory || !graphics.is_array() || graphics.size() > kMaxGraphicsClocks)
      return std::nullopt;
    SupportedClocks s{**memory, {}};
    for (const auto& g : graphics) {
      auto clock = mhz_from(g);
      if (!clock || !*clock) return std::nullopt;
      s.graphics.push_back(**clock);
    }
    list.push_back(std::move(s));
  }
  return R(std::move(list));
}

}  // namespace

LimitsCache::LimitsCache(std::filesystem::path dir, std::string driver_version)
    : dir_(std::move(dir)), driver_version_(std::move(driver_version)) {}

std::filesystem::path LimitsCache::path_of(const std::string& uuid) const {
  return dir_ / ("limits-" + uuid + ".json");
}

std::filesystem::path LimitsCache::default_dir(bool simulated) {
  if (const char* env = std::getenv("GPUCLK_LIMITS_CACHE")) {
    const std::string v = env;
    return v == "off" ? std::filesystem::path() : std::filesystem::path(v);
  }
  if (simulated) return {};
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg && *xdg) {
    return std::filesystem::path(xdg) / "gpuclk";
  }
  // Below the service's socket folder, not in it: that one must stay searchable by every user.
  if (geteuid() == 0) return "/run/gpuclk/limits";
  return {};
}

std::optional<ClockLimits> LimitsCache::load(const std::string& uuid) const {
  if (dir_.empty() || driver_version_.empty() || !safe_name(uuid) || !private_dir(dir_))
    return std::nullopt;
  const int fd = ::open(path_of(uuid).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && private_to_us(st) &&
      std::size_t(st.st_size) <= kMaxBytes) {
    text.resize(std::size_t(st.st_size));
    const auto n = ::read(fd, text.data(), text.size());
    if (n != st.st_size) text.clear();
  }
  ::close(fd);
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("format", 0) != kFormat || j.value("uuid", "") != uuid ||
      j.value("driver", "") != driver_version_) {
    return std::nullopt;
  }
  ClockLimits limits;
  if (!j.contains("max") || !clocks_from(j["max"], limits.max_clock)) return std::nullopt;
  if (!j.contains("boost") || !clocks_from(j["boost"], limits.max_boost_clock)) return std::nullopt;
  if (!j.contains("default_applications") ||
      !clocks_from(j["default_applications"], limits.default_app_clock))
    return std::nullopt;
  if (!j.contains("supported")) return std::nullopt;
  auto supported = supported_from(j["supported"]);
  if (!supported) return std::nullopt;
  limits.supported_clocks = std::move(*supported);
  return limits;
}

void LimitsCache::store(const std::string& uuid, const ClockLimits& limits) const {
  if (dir_.empty() || driver_version_.empty() || !safe_name(uuid)) return;
  const auto all = [](const auto& clocks) {
    return std::all_of(clocks.begin(), clocks.end(), [](const auto& r) { return cacheable(r); });
  };
  if (!all(limits.max_clock) || !all(limits.max_boost_clock) || !all(limits.default_app_clock) ||
      limits.supported_clocks.status() == ReadStatus::error)
    return;

  json j;
  j["format"] = kFormat;
  j["uuid"] = uuid;
  j["driver"] = driver_version_;
  for (const auto& [key, clocks] :
       {std::pair{"max", &limits.max_clock}, std::pair{"boost", &limits.max_boost_clock},
        std::pair{"default_applications", &limits.default_app_clock}}) {
    json list = json::array();
    for (const auto& r : *clocks) list.push_back(mhz_json(r));
    j[key] = std::move(list);
  }
  if (limits.supported_clocks) {
    json list = json::array();
    for (const auto& s : *limits.supported_clocks) {
      json graphics = json::array();
      for (const auto& g : s.graphics) graphics.push_back(g.value());
      list.push_back({{"memory", s.memory.value()}, {"graphics", std::move(graphics)}});
    }
    j["supported"] = std::move(list);
  } else {
    j["supported"] = nullptr;
  }

  std::error_code ec;
  if (!std::filesystem::is_directory(dir_, ec)) {
    // A missing parent (/run/gpuclk before the service made it) as the service would make it.
    if (const auto parent = dir_.parent_path(); !parent.empty() &&
                                                !std::filesystem::exists(parent, ec) &&
                                                ::mkdir(parent.c_str(), 0755) == 0)
      ::chmod(parent.c_str(), 0755);  // whatever the umask
    if (::mkdir(dir_.c_str(), 0700) != 0) return;
  }
  if (!private_dir(dir_)) return;
  std::string tmp = (dir_ / (".limits-" + uuid + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return;
  const std::string text = j.dump();
  const bool written = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  ::close(fd);
  if (!written || ::rename(tmp.c_str(), path_of(uuid).c_str()) != 0) ::unlink(tmp.c_str());
}

}  // namespace gpuclk::gpu
