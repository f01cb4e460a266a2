#include "bench/nccl_library.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "telemetry/nccl.h"
#include "util/error.h"

namespace gpuclk::bench::nccl {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSoname = "libnccl.so.2";
constexpr const char* kWheelPath = "nvidia/nccl/lib/libnccl.so.2";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

// <prefix>/lib/python3*/{site,dist}-packages, sorted (so python3.12 comes after python3.10).
std::vector<std::string> package_dirs(const std::string& prefix) {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (fs::directory_iterator it(prefix + "/lib", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("python3", 0) != 0) continue;
    for (const char* kind : {"site-packages", "dist-packages"}) {
      const std::string dir = it->path().string() + "/" + kind;
      std::error_code ec2;
      if (fs::is_directory(dir, ec2)) dirs.push_back(dir);
    }
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// ncclGetVersion's code in the ≥ 2.9 numbering (major × 10000 + minor × 100 + patch); codes
// before 2.9 were major × 1000 + minor × 100 + patch.
int normalized(int code) {
  if (code >= 10000 || code <= 0) return code;
  return code / 1000 * 10000 + code % 1000;
}

std::string loaded_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
    return map->l_name;
  return fallback;
}

struct Opened {
  void* handle = nullptr;
  std::string tried;  // what was passed to dlopen
};

// The first candidate that loads; the others' errors are not interesting (most do not exist).
Opened open_first(const SearchPlan& plan, std::string& first_error) {
  for (const std::string& candidate : plan.candidates) {
    if (void* h = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) return {h, candidate};
    const char* why = dlerror();
    // A file that is there but does not load says more than "not found".
    if (first_error.empty() && candidate.find('/') != std::string::npos && why) first_error = why;
  }
  return {};
}

}  // namespace

SearchPlan search_plan(const std::string& root) {
  SearchPlan plan;
  if (const std::string explicit_lib = env("GPUCLK_NCCL_LIB"); !explicit_lib.empty()) {
    plan.candidates.push_back(explicit_lib);
    plan.looked_in.push_back("GPUCLK_NCCL_LIB=" + explicit_lib);
  }
  plan.candidates.push_back(kSoname);
  plan.looked_in.push_back(std::string("the loader's path for ") + kSoname +
                           " (LD_LIBRARY_PATH, ld.so.cache)");
  std::vector<std::string> prefixes;
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    if (const std::string p = env(var); !p.empty()) prefixes.push_back(p);
  }
  if (const std::string home = env("HOME"); !home.empty()) prefixes.push_back(home + "/.local");
  for (const char* p : {"/usr/local", "/usr", "/opt/conda"}) prefixes.emplace_back(p);
  std::vector<std::string> dirs;
  for (const std::string& prefix : prefixes) {
    for (std::string& d : package_dirs(root + prefix)) dirs.push_back(std::move(d));
  }
  dirs.push_back(root + "/usr/lib/python3/dist-packages");
  for (const std::string& dir : dirs) {
    if (std::find(plan.candidates.begin(), plan.candidates.end(), dir + "/" + kWheelPath) !=
        plan.candidates.end())
      continue;
    if (exists(dir + "/" + kWheelPath)) plan.candidates.push_back(dir + "/" + kWheelPath);
  }
  std::string searched;
  for (const std::string& prefix : prefixes) searched += (searched.empty() ? "" : ", ") + prefix;
  plan.looked_in.push_back(
      fmt::format("{} under lib/python3*/{{site,dist}}-packages of {}", kWheelPath, searched));
  plan.looked_in.push_back(std::string("/usr/lib/python3/dist-packages/") + kWheelPath);
  return plan;
}

std::unique_ptr<Library> Library::open(const std::string& requested) {
  if (requested.empty()) return open_first_of(search_plan());
  void* handle = dlopen(requested.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw Error(ExitCode::nvml_not_found,
                fmt::format("cannot load NCCL library '{}': {}", requested, why ? why : "?"),
                "check the path given with --nccl-lib");
  }
  std::unique_ptr<Library> lib(new Library());
  lib->handle_ = handle;
  lib->path_ = loaded_path(handle, requested);
  return resolve(std::move(lib));
}

std::unique_ptr<Library> Library::open_first_of(const SearchPlan& plan) {
  std::string first_error;
  const Opened opened = open_first(plan, first_error);
  if (!opened.handle) {
    std::string places;
    for (const std::string& p : plan.looked_in) places += "\n  " + p;
    throw Error(ExitCode::nvml_not_found,
                fmt::format("no NCCL library found (libnccl.so.2); looked in:{}{}", places,
                            first_error.empty() ? "" : "\n  (" + first_error + ")"),
                "install NCCL (Debian/Ubuntu: libnccl2; or pip install nvidia-nccl-cu12, "
                "which PyTorch brings), or give its path: --nccl-lib PATH or GPUCLK_NCCL_LIB");
  }
  std::unique_ptr<Library> lib(new Library());
  lib->handle_ = opened.handle;
  lib->path_ = loaded_path(opened.handle, opened.tried);
  return resolve(std::move(lib));
}

std::unique_ptr<Library> Library::resolve(std::unique_ptr<Library> lib) {
  std::vector<std::string> missing;
#define GPUCLK_NCCL_RESOLVE_REQUIRED(name, result, params)                       \
  lib->name = reinterpret_cast<decltype(lib->name)>(dlsym(lib->handle_, #name)); \
  if (!lib->name) missing.emplace_back(#name);
#define GPUCLK_NCCL_RESOLVE_OPTIONAL(name, result, params) \
  lib->name = reinterpret_cast<decltype(lib->name)>(dlsym(lib->handle_, #name));
  GPUCLK_NCCL_REQUIRED(GPUCLK_NCCL_RESOLVE_REQUIRED)
  GPUCLK_NCCL_OPTIONAL(GPUCLK_NCCL_RESOLVE_OPTIONAL)
#undef GPUCLK_NCCL_RESOLVE_REQUIRED
#undef GPUCLK_NCCL_RESOLVE_OPTIONAL

  if (!lib->ncclGetVersion) {
    throw Error(ExitCode::not_supported,
                fmt::format("'{}' is not an NCCL library (it has no ncclGetVersion)", lib->path_),
                "point --nccl-lib at libnccl.so.2, or leave it out to search for one");
  }
  int code = 0;
  if (lib->ncclGetVersion(&code) != ncclSuccess) code = 0;
  lib->version_ = normalized(code);
  if (lib->version_ < kMinimumVersion || !missing.empty()) {
    throw Error(
        ExitCode::not_supported,
        fmt::format("'{}' is NCCL {}, which lacks {} (gpuclk needs NCCL 2.7 or later)", lib->path_,
                    lib->version(), missing.empty() ? std::string("send/recv") : missing.front()),
        "install a newer NCCL (PyTorch's wheels carry one) and give its path with "
        "--nccl-lib");
  }
  return lib;
}

Library::~Library() {
  // Like the driver's NVML, NCCL is not unloaded: it may keep proxy threads until exit.
}

std::string Library::version() const { return telemetry::nccl::version_text(version_); }

void Library::check(ncclResult_t rc, const char* call, const std::string& context) const {
  if (rc == ncclSuccess) return;
  const char* text = ncclGetErrorString ? ncclGetErrorString(rc) : nullptr;
  const std::string what =
      fmt::format("{}: {} (NCCL error {})", call, text ? text : "unknown", static_cast<int>(rc));
  throw Error(ExitCode::other, context.empty() ? what : context + ": " + what,
              "NCCL_DEBUG=WARN (or INFO) makes NCCL say why");
}

}  // namespace gpuclk::bench::nccl
