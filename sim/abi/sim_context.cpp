#include "sim_context.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gpuclk::sim::abi {
namespace {

// Version 2 records the start time the node was powered on at (GPUCLK_SIM_START), so that a
// command asking for another one can say it is ignored; a version 1 file is discarded (power-on).
constexpr char kMagic[8] = {'G', 'C', 'S', 'I', 'M', 'A', 'B', '2'};
// The periodic save, so a process that joins later catches up from close to now: once at least
// 10 s of simulated time (or of wall time, for a slow clock) went by, and at most once a wall
// second. A joiner then steps at most 10 s of the model (8 GPUs: ~5 ms) at 1x, or a wall
// second's worth when time runs faster; writing the node's 58 KB every second was a fifth of the
// service's sampling thread on a simulated 8-GPU node (ext4 writes the data back on rename).
constexpr long long kSaveAtMostEveryNs = 1'000'000'000;
constexpr long long kSaveAfterNs = 10'000'000'000;
constexpr double kSaveAfterSimS = 10;

struct FileHeader {
  char magic[8];
  double speed;
  long long anchor_wall_ns;
  double anchor_sim_s;
  double powered_on_at_s;
};

long long wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

std::uint64_t hash(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Where this library lives: scenarios are installed beside it. Symlinks are followed, so a
// libnvidia-ml.so.1 link to libnvml-sim.so (how other NVML clients load it) finds them too.
std::filesystem::path library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&library_dir), &info) != 0 && info.dli_fname) {
    std::error_code error;
    const std::filesystem::path path = std::filesystem::absolute(info.dli_fname);
    const std::filesystem::path real = std::filesystem::weakly_canonical(path, error);
    return (error ? path : real).parent_path();
  }
  return {};
}

std::vector<std::filesystem::path> scenario_dirs() {
  std::vector<std::filesystem::path> dirs;
  if (const char* d = env("GPUCLK_SIM_SCENARIO_DIR")) dirs.emplace_back(d);
  const auto lib = library_dir();
  if (!lib.empty()) {
    dirs.push_back(lib / "scenarios");  // the build tree: copied beside the library
#ifdef GPUCLK_SIM_INSTALLED_SCENARIOS
    dirs.push_back((lib / GPUCLK_SIM_INSTALLED_SCENARIOS).lexically_normal());  // installed
#endif
    dirs.push_back(lib.parent_path() / "share" / "gpuclk" / "scenarios");
  }
#ifdef GPUCLK_SIM_SOURCE_SCENARIOS
  dirs.emplace_back(GPUCLK_SIM_SOURCE_SCENARIOS);
#endif
  return dirs;
}

std::filesystem::path resolve_scenario(const std::string& value, bool& by_name) {
  by_name = value.find('/') == std::string::npos && !value.ends_with(".toml");
  if (!by_name) return std::filesystem::absolute(value);
  for (const auto& dir : scenario_dirs()) {
    auto file = dir / (value + ".toml");
    if (std::filesystem::exists(file)) return file;
  }
  std::string looked;
  for (const auto& dir : scenario_dirs()) looked += (looked.empty() ? "" : ", ") + dir.string();
  throw ScenarioError("no scenario named '" + value + "' (looked in " + looked +
                      "; set GPUCLK_SIM_SCENARIO to a name or a .toml path)");
}

// The library's one context, created on first use. It outlives every atexit handler (NVML calls
// may come from those) and is freed when the library is unloaded: by dlclose (gpuclk unloads the
// simulator when its Api goes), or at the end of the process, after the atexit handlers. Without
// that, dlclose unmaps the only pointer to it and LeakSanitizer reports the whole model.
Context* g_context = nullptr;

__attribute__((destructor)) void free_context() {
  delete g_context;
  g_context = nullptr;
}

}  // namespace

Context& Context::get() {
  // A function-local static, not std::call_once: every NVML call comes here, and libstdc++'s
  // call_once sets two thread-locals each time.
  static Context* const created = g_context = new Context();
  return *created;
}

bool Context::ensure_loaded() {
  if (loaded_) return true;
  try {
    bool by_name = true;
    const std::string name = env("GPUCLK_SIM_SCENARIO") ? env("GPUCLK_SIM_SCENARIO") : "default";
    scenario_path_ = resolve_scenario(name, by_name);
    std::vector<std::filesystem::path> model_dirs{scenario_path_.parent_path()};
    for (const auto& d : scenario_dirs()) model_dirs.push_back(d);
    scenario_ = std::make_shared<const Scenario>(load_scenario(scenario_path_, model_dirs));
    model_ = std::make_unique<NodeModel>(scenario_);

    std::string state_path;
    if (const char* p = env("GPUCLK_SIM_STATE")) {
      state_path = p;
    } else {
      std::string stem = scenario_->name;
      if (!by_name) {
        char suffix[20];
        std::snprintf(
            suffix, sizeof suffix, "-%08llx",
            static_cast<unsigned long long>(hash(scenario_path_.string()) & 0xffffffffULL));
        stem += suffix;
      }
      state_path = "/tmp/gpuclk-sim-" + std::to_string(::getuid()) + "-" + stem + ".state";
    }
    state_ = std::make_unique<StateFile>(state_path);
    if (const char* s = env("GPUCLK_SIM_SPEED")) {
      char* end = nullptr;
      const double v = std::strtod(s, &end);
      if (end == s || *end != '\0' || !(v >= 0) || !std::isfinite(v)) {
        throw ScenarioError(std::string("GPUCLK_SIM_SPEED: expected a number >= 0, got '") + s +
                            "'");
      }
      speed_ = v;
      speed_from_env_ = true;
    }
    const char* start = env("GPUCLK_SIM_START");
    if (start) start_s_ = std::max(0.0, std::strtod(start, nullptr));
    loaded_ = true;
    if (load_or_create(false) && start && std::abs(powered_on_at_s_ - start_s_) > 1e-9) {
      // The node was already on, powered on at another start time: its state file decides the
      // time, not GPUCLK_SIM_START. Said here, or README examples with a start time silently
      // show another moment. (A command that asks for the start the node had is continuing it.)
      std::fprintf(stderr,
                   "libnvml-sim: GPUCLK_SIM_START=%s ignored: the simulated node in %s is "
                   "already on (started at %g s, now at %.0f s); delete that file "
                   "(or give GPUCLK_SIM_STATE a new one) to power it on at %s s\n",
                   start, state_path.c_str(), powered_on_at_s_, model_->now_s(), start);
    }
    // GPUCLK_SIM_ADVANCE=S: this process first moves the shared node's clock S seconds on (what
    // gpuclk_sim_advance does), so a test can step past a fault's window whatever the machine's
    // load; a high GPUCLK_SIM_SPEED does that only while the process keeps up with it.
    if (const char* s = env("GPUCLK_SIM_ADVANCE")) {
      char* end = nullptr;
      const double v = std::strtod(s, &end);
      if (end == s || *end != '\0' || !(v >= 0) || !std::isfinite(v)) {
        throw ScenarioError(std::string("GPUCLK_SIM_ADVANCE: expected seconds >= 0, got '") + s +
                            "'");
      }
      skip(v);
    }
    return true;
  } catch (const std::exception& e) {
    last_error_ = e.what();
    loaded_ = false;
    model_.reset();
    return false;
  }
}

nvmlReturn_t Context::init() {
  if (!ensure_loaded()) {
    std::fprintf(stderr, "libnvml-sim: %s\n", last_error_.c_str());
    return NVML_ERROR_UNKNOWN;
  }
  if (scenario_->init_error != 0) return static_cast<nvmlReturn_t>(scenario_->init_error);
  ++init_count_;
  return NVML_SUCCESS;
}

nvmlReturn_t Context::shutdown() {
  if (init_count_ == 0) return NVML_ERROR_UNINITIALIZED;
  if (--init_count_ == 0) {
    try {
      auto lock = state_->lock();
      if (state_->changed()) {
        load_or_create(true);
      } else {
        model_->advance_to(sim_now());
        save();
      }
    } catch (const std::exception&) {
      // The state is advisory: a read-only /tmp must not make nvmlShutdown fail.
    }
  }
  return NVML_SUCCESS;
}

double Context::sim_now() const { return sim_at(wall_ns()); }

double Context::sim_at(long long wall) const {
  return anchor_sim_s_ + static_cast<double>(wall - anchor_wall_ns_) * 1e-9 * speed_;
}

long long Context::timestamp_us(double sim_s) const {
  return anchor_wall_ns_ / 1000 + std::llround((sim_s - anchor_sim_s_) * 1e6);
}

std::string Context::encode() const {
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.speed = speed_;
  h.anchor_wall_ns = anchor_wall_ns_;
  h.anchor_sim_s = anchor_sim_s_;
  h.powered_on_at_s = powered_on_at_s_;
  std::string out(sizeof h, '\0');
  std::memcpy(out.data(), &h, sizeof h);
  return out + model_->serialize();
}

bool Context::decode(const std::string& bytes) {
  FileHeader h{};
  if (bytes.size() < sizeof h) return false;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return false;
  if (!model_->deserialize(std::string_view(bytes).substr(sizeof h))) return false;
  anchor_wall_ns_ = h.anchor_wall_ns;
  anchor_sim_s_ = h.anchor_sim_s;
  powered_on_at_s_ = h.powered_on_at_s;
  if (speed_from_env_ && h.speed != speed_) {
    // This process runs time at another speed: continue from the simulated now, at ours.
    const double now =
        h.anchor_sim_s + static_cast<double>(wall_ns() - h.anchor_wall_ns) * 1e-9 * h.speed;
    anchor_wall_ns_ = wall_ns();
    anchor_sim_s_ = std::max(now, model_->now_s());
  } else {
    speed_ = h.speed;
  }
  return true;
}

void Context::save() {
  last_save_wall_ns_ = wall_ns();
  last_save_sim_s_ = model_->now_s();
  try {
    state_->write(encode());
  } catch (const std::exception& e) {
    // Still a working simulator, only not shared with other processes: say so once.
    if (!save_failed_)
      std::fprintf(stderr, "libnvml-sim: state not shared with other processes: %s\n", e.what());
    save_failed_ = true;
  }
}

bool Context::load_or_create(bool have_lock) {
  if (auto bytes = state_->read(); bytes && decode(*bytes)) {
    model_->advance_to(sim_now());
    return true;
  }
  // No state yet (or another scenario's): power on now, at the start time. Under the lock, so two
  // processes starting together agree on one timeline. (flock is per open file: taking it again
  // while holding it would wait forever.)
  std::optional<StateFile::Lock> lock;
  if (!have_lock) lock.emplace(state_->path().string() + ".lock");
  if (auto bytes = state_->read(); bytes && decode(*bytes)) {
    model_->advance_to(sim_now());
    return true;
  }
  model_->reset();
  anchor_wall_ns_ = wall_ns();
  anchor_sim_s_ = start_s_;
  powered_on_at_s_ = start_s_;
  model_->advance_to(start_s_);
  save();
  return false;
}

void Context::sync() {
  // GPUCLK_SIM_HANG_WHILE=PATH: while PATH exists, every call hangs here with the library's lock
  // held, as a driver call stuck on a GPU that stopped answering does (the fault tests'
  // stalled sampler). Looked up once; a stat() a call only while it is set.
  static const char* const hang_while = env("GPUCLK_SIM_HANG_WHILE");
  if (hang_while) {
    struct stat st {};
    while (::stat(hang_while, &st) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Each clock read once: every NVML call syncs, the sampler makes ~90 of them a tick.
  const auto steady = std::chrono::steady_clock::now();
  const std::uint64_t tick = model_->tick();
  bool reloaded = false;
  if (state_->changed(
          std::chrono::duration_cast<std::chrono::nanoseconds>(steady.time_since_epoch())
              .count())) {
    load_or_create(false);
    reloaded = true;
  }
  const long long wall = wall_ns();
  model_->advance_to(sim_at(wall));
  const long long since = wall - last_save_wall_ns_;
  if (since > kSaveAtMostEveryNs &&
      (since > kSaveAfterNs || model_->now_s() - last_save_sim_s_ >= kSaveAfterSimS)) {
    auto lock = state_->lock();
    if (state_->changed()) {
      load_or_create(true);
      reloaded = true;
    } else {
      save();
    }
  }
  synced_at_ = steady;
  synced_by_ = std::this_thread::get_id();
  // Most calls of a tick find the model where the first left it: nothing new to raise.
  if (reloaded || model_->tick() != tick) note_events();
}

void Context::note_events() {
  std::uint64_t signature = 0;
  for (std::size_t i = 0; i < model_->gpu_count(); ++i) {
    const GpuDynamics& d = model_->gpu(i).dynamics;
    signature += d.lost + d.ecc_corrected_volatile + d.ecc_uncorrected_volatile;
  }
  if (signature == event_signature_) return;
  event_signature_ = signature;
  ++events_raised_;
  events_cv_.notify_all();
}

void Context::wait_for_change(std::unique_lock<std::recursive_mutex>& lock, std::uint64_t seen,
                              std::chrono::steady_clock::time_point until) {
  events_cv_.wait_until(lock, until, [&] { return events_raised_ != seen; });
}

Status Context::mutate(const std::function<Status(NodeModel&)>& apply) {
  auto lock = state_->lock();
  if (state_->changed()) load_or_create(true);
  model_->advance_to(sim_now());
  const Status status = apply(*model_);
  if (status == Status::ok) save();
  note_events();
  return status;
}

void Context::skip(double seconds) {
  auto lock = state_->lock();
  if (state_->changed()) load_or_create(true);
  anchor_sim_s_ += seconds;
  model_->advance_to(sim_now());
  save();
  note_events();
}

void Context::reset() {
  auto lock = state_->lock();
  model_->reset();
  anchor_wall_ns_ = wall_ns();
  anchor_sim_s_ = start_s_;
  powered_on_at_s_ = start_s_;
  model_->advance_to(start_s_);
  save();
  note_events();
}

std::optional<nvmlReturn_t> Context::injected_error(std::size_t gpu, const char* function,
                                                    bool telemetry) {
  const GpuConfig& config = scenario_->gpus[gpu];
  const double t = model_->now_s();
  for (const InjectedError& e : config.errors) {
    const bool matches = e.function == function || (e.function == "*" && telemetry);
    if (matches && t >= e.from_s && t < e.until_s) return static_cast<nvmlReturn_t>(e.code);
  }
  if (telemetry && config.read_error_rate > 0) {
    const std::uint64_t r =
        splitmix64(scenario_->seed ^ (static_cast<std::uint64_t>(gpu) << 40) ^ ++call_counter_);
    const double u = static_cast<double>(r >> 11) * 0x1.0p-53;
    if (u < config.read_error_rate) return static_cast<nvmlReturn_t>(config.read_error_code);
  }
  return std::nullopt;
}

}  // namespace gpuclk::sim::abi
