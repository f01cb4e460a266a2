#include "cli/context.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/install_paths.h"
#include "gpu/limits_cache.h"
#include "gpu/selection.h"
#include "gpu/simulator.h"
#include "nvml/api.h"
#include "serve/client.h"
#include "serve/protocol.h"
#include "util/file.h"
#include "util/parse.h"
#include "views/info.h"

namespace gpuclk::cli {
namespace {

bool env_true(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

// Resolves --sim's scenario to what libnvml-sim.so reads from GPUCLK_SIM_SCENARIO: a file path
// stays a path; a name is looked up in the simulator's scenarios folder (install_paths.h).
std::string scenario_for(const std::string& sim) {
  if (sim.empty() || sim == "default") return "default";
  if (std::filesystem::exists(sim)) {
    // A path must be a regular file (never /dev/zero or a FIFO: the simulator would read it).
    file::require_regular(sim, "simulator scenario");
    return std::filesystem::absolute(sim).string();
  }
  const auto folder = install::scenarios_dir();
  auto named = folder / (sim + ".toml");
  // A name in a subfolder (doctor/ecc) reaches the simulator as its file: it takes a name with
  // a slash for a path.
  if (std::filesystem::exists(named))
    return sim.find('/') == std::string::npos ? sim : std::filesystem::absolute(named).string();
  // A path (a slash, or a .toml name) that is not there: say so, not "unknown scenario".
  if (sim.find('/') != std::string::npos || std::filesystem::path(sim).extension() == ".toml") {
    throw bad_argument(fmt::format("no such simulator scenario file '{}'", parse::quote(sim)),
                       "give the path of a scenario .toml file, or a scenario's name "
                       "(`--sim=nonsense` lists them)");
  }
  // Every name --sim takes, sorted: the folder's scenarios and those of its subfolders
  // (doctor/ecc, governor/stencil).
  std::vector<std::string> found;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(folder, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const auto& path = it->path();
    if (it.depth() > 1 || path.extension() != ".toml" || !it->is_regular_file()) continue;
    if (path.parent_path().filename() == "models") continue;  // GPU models, not scenarios
    found.push_back(std::filesystem::relative(path, folder).replace_extension().string());
  }
  std::sort(found.begin(), found.end());
  std::string names;
  for (const auto& n : found) names += (names.empty() ? "" : ", ") + n;
  throw bad_argument(fmt::format("unknown simulator scenario '{}'", parse::quote(sim)),
                     names.empty() ? "give a path to a scenario .toml file"
                                   : "valid: " + names + ", or a path to a .toml file");
}

}  // namespace

Context::Context() = default;
Context::~Context() = default;

void Context::exiting() {
  if (api_) api_->skip_shutdown_at_exit();
}

std::string Context::executable_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

void Context::effect(std::string_view what) {
  // Checked until it passes: a caller that swallows an Error (journal_dir's "no NVML") must not
  // let the next effect through with a bad -i.
  if (options.devices_given && !selection_checked_) {
    // Refused: the hint lists this node's GPUs, read through NVML (an effect of its own, which
    // must not run this check again).
    const auto present = [this]() -> std::optional<std::vector<gpu::DeviceKey>> {
      selection_checked_ = true;
      struct Again {
        bool& flag;
        ~Again() { flag = false; }
      } again{selection_checked_};
      std::vector<gpu::DeviceKey> keys;
      for (const auto* d : devices().all()) keys.push_back({d->index(), d->uuid(), d->bus_id()});
      return keys;
    };
    try {
      gpu::check_selection(options.devices, present);
    } catch (const Error& e) {
      throw Error(e.code(), fmt::format("-i: {}", e.what()), e.hint());
    }
    selection_checked_ = true;
  }
  if (before_effect) before_effect(what);
}

std::string Context::nvml_library_path() { return nvml().path(); }

nvml::Api& Context::nvml() {
  if (api_) return *api_;
  effect("load NVML");
  const std::string sim_lib = install::sim_library().string();
  if (!options.sim.empty()) {
    if (options.nvml_lib.empty() && !install::simulator_installed()) install::simulator_missing();
    ::setenv("GPUCLK_SIM_SCENARIO", scenario_for(options.sim).c_str(), 1);
    api_ = nvml::Api::open(options.nvml_lib.empty() ? sim_lib : options.nvml_lib);
    return *api_;
  }
  try {
    api_ = nvml::Api::open(options.nvml_lib);
  } catch (const Error& e) {
    // `make run` on a machine without a driver shows the simulated node instead (one line).
    const bool no_driver =
        e.code() == ExitCode::nvml_not_found || e.code() == ExitCode::driver_not_loaded;
    if (!no_driver || !options.nvml_lib.empty() || !env_true("GPUCLK_FALLBACK_SIM") ||
        !install::simulator_installed())
      throw;
    std::cerr << "gpuclk: no NVIDIA GPU here (" << e.what()
              << "); showing the simulated 4x H100 node (gpuclk --sim)\n";
    options.sim = "default";
    ::setenv("GPUCLK_SIM_SCENARIO", "default", 1);
    api_ = nvml::Api::open(sim_lib);
  }
  return *api_;
}

gpu::DeviceSet& Context::devices() {
  if (!devices_) {
    devices_ = std::make_unique<gpu::DeviceSet>(nvml());
    devices_->cache_clock_limits(gpu::LimitsCache::default_dir(nvml().simulated()));
  }
  return *devices_;
}

const serve::Hello* Context::service_hello() {
  if (options.direct) return nullptr;
  if (!service_tried_) {
    effect("connect to the service");
    service_tried_ = true;
    for (const auto& path : serve::client_socket_paths(options.socket, ::geteuid())) {
      service_ = serve::Client::connect(path);
      if (service_) break;
    }
    // The node kind is checked once, on the service's hello: only some answers (status, views)
    // name it, and a history or summary must not be taken from the wrong node either.
    if (service_) {
      try {
        service_hello_ = std::make_unique<serve::Hello>(service_->hello());
        if (!service_serves_this_node(*service_hello_)) service_.reset();
      } catch (const Error& e) {
        // The service refused this client (too many connections) or did not answer within the
        // client's timeout: the command reads the GPUs itself, as without a service, and says so.
        std::cerr << "gpuclk: " << e.what() << "; reading the GPUs directly (--direct)\n";
        service_.reset();
      }
    }
  }
  if (!service_) return nullptr;
  return service_hello_.get();
}

serve::Client* Context::service() { return service_hello() ? service_.get() : nullptr; }

std::string Context::service_socket() const { return service_ ? service_->path() : std::string(); }

bool Context::service_serves_this_node(const serve::Hello& hello) {
  // `gpuclk --sim` must not show a real node's GPUs, nor another scenario's or simulator
  // state's (tests run side by side, each on its own state file); a plain `gpuclk` shows a
  // simulated service's GPUs only when that service was named (--socket, GPUCLK_SOCKET).
  const auto& service_sim = hello.simulated;
  if (options.sim.empty()) {
    const bool named = !options.socket.empty() || std::getenv("GPUCLK_SOCKET") != nullptr;
    if (!service_sim.empty() && !named) return false;
  } else {
    const char* state = std::getenv("GPUCLK_SIM_STATE");
    if (service_sim != options.sim || hello.sim_state != (state ? state : "")) return false;
  }
  service_simulated_ = !service_sim.empty();
  return true;
}

std::vector<std::size_t> Context::select_from(const std::vector<gpu::DeviceKey>& keys) const {
  if (!options.devices_given) {  // no -i: every GPU (an empty -i is an error, never "all")
    std::vector<std::size_t> all(keys.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    return all;
  }
  try {
    return gpu::select_devices(options.devices, keys);
  } catch (const Error& e) {
    throw Error(e.code(), fmt::format("-i: {}", e.what()), e.hint());
  }
}

std::vector<unsigned> Context::indexes_from(const std::vector<gpu::DeviceKey>& keys) const {
  std::vector<unsigned> indexes;
  for (auto pos : select_from(keys)) indexes.push_back(keys.at(pos).index);
  return indexes;
}

std::vector<gpu::Device*> Context::selected() {
  if (!options.devices_given) {
    return devices().all();
  }
  return selected(options.devices, "-i");
}

std::vector<gpu::Device*> Context::selected(std::string_view spec, std::string_view option) {
  auto& set = devices();
  std::vector<gpu::DeviceKey> keys;
  for (const auto& d : set) {
    keys.push_back({d->index(), d->uuid(), d->bus_id()});
  }
  std::vector<gpu::Device*> out;
  try {
    for (auto pos : gpu::select_devices(spec, keys)) out.push_back(&set[pos]);
  } catch (const Error& e) {
    throw Error(e.code(), fmt::format("{}: {}", option, e.what()), e.hint());
  }
  return out;
}

output::Format Context::format() const { return output::parse_format(options.format); }

std::unique_ptr<output::Printer> Context::printer(std::ostream& out) const {
  return output::make_printer(format(), out);
}
std::unique_ptr<output::Printer> Context::printer() const { return printer(std::cout); }

const Clock& Context::clock() {
  if (!clock_) clock_ = std::make_unique<ScaledClock>(nvml().time_scale());
  return *clock_;
}

bool Context::read_only() const { return options.read_only || env_true("GPUCLK_READ_ONLY"); }

bool Context::simulated() {
  // Answered by a service: it said what it runs on, and loading NVML only to ask would cost
  // nvmlInit (10-14 ms on an H100: status and clocks through the service took 15 ms, not 3).
  if (!api_ && service_simulated_) return *service_simulated_;
  return nvml().simulated();
}

std::string Context::simulated_node() {
  if (!simulated()) return {};
  std::string node = options.sim.empty() ? "default" : options.sim;
  if (api_ || !service_simulated_) {
    if (const auto note = gpu::simulator_time_note(nvml()); !note.empty()) node += ", " + note;
  }
  return node;
}

host::CpuInfo Context::host_cpu() {
  if (!simulated()) return host::read_cpu_info();
  return views::node_cpu_info(devices(), options.sim.empty() ? "default" : options.sim);
}

std::string Context::state_dir() const {
  if (!options.state_dir.empty()) return options.state_dir;
  if (const char* env = std::getenv("GPUCLK_STATE_DIR"); env && *env) return env;
  return "/var/lib/gpuclk";
}

}  // namespace gpuclk::cli
