// Scenario files: sim/scenarios/*.toml. [node] says what the host is, [gpu_defaults] applies to
// every GPU, [[gpu]] overrides one GPU by index, [workloads.<name>] are referenced by name.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>

#include "nvlink.h"
#include "scenario.h"
#include "toml_access.h"

namespace gpuclk::sim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string read_text(const std::filesystem::path& file) {
  // Bounded like every input (docs/hardening.md): a regular file of at most 4 MiB. /dev/zero or
  // a FIFO given as a scenario is refused, never read.
  constexpr std::uintmax_t kMaxScenario = 4u << 20;
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (ec) throw ScenarioError(file.string() + ": cannot open");
  if (!std::filesystem::is_regular_file(status))
    throw ScenarioError(file.string() + ": not a regular file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ScenarioError(file.string() + ": cannot open");
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxScenario) throw ScenarioError(file.string() + ": larger than 4 MiB");
  }
  return text;
}

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Stable identifiers per scenario and GPU, shaped like the driver's.
std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser: nearby inputs, unrelated outputs
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string make_uuid(const std::string& scenario, std::uint32_t index) {
  const std::uint64_t a = mix(fnv1a(scenario + "/uuid/" + std::to_string(index)));
  const std::uint64_t b = mix(a);
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

std::string make_serial(const std::string& scenario, std::uint32_t index) {
  const std::uint64_t h = mix(fnv1a(scenario + "/serial/" + std::to_string(index)));
  return "1654" + std::to_string(100000000ULL + h % 900000000ULL);
}

// PCI buses of the eight GPUs of an HGX H100 board; beyond eight, every 0x10.
std::uint32_t default_bus(std::uint32_t index) {
  static constexpr std::uint32_t kBuses[] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
  return index < 8 ? kBuses[index] : 0x100 + 0x10 * (index - 8);
}

Phase parse_phase(const TomlAccess& t, const GpuSpec& spec) {
  Phase p;
  const std::string kind = t.text("kind");
  p.name = t.text_or("name", kind);
  if (kind == "compute") {
    p.kind = PhaseKind::compute;
  } else if (kind == "memory") {
    p.kind = PhaseKind::memory;
  } else if (kind == "transfer") {
    p.kind = PhaseKind::transfer;
  } else if (kind == "idle") {
    p.kind = PhaseKind::idle;
  } else if (kind == "off") {
    p.kind = PhaseKind::off;
  } else if (kind == "p2p") {
    p.kind = PhaseKind::p2p;
    // The peer is checked against the node once every GPU is known (check_p2p_peers).
    p.peer = static_cast<std::uint32_t>(t.integer_in("peer", 0, kMaxNvLinkPeers - 1));
  } else {
    t.fail("kind", "expected compute, memory, transfer, p2p, idle or off");
  }
  const std::string dtype = t.text_or("dtype", p.kind == PhaseKind::compute ? "bf16" : "fp32");
  auto parsed = parse_data_type(dtype);
  if (!parsed) t.fail("dtype", "unknown data type '" + dtype + "'");
  p.dtype = *parsed;
  p.flops = t.number_or("tflop", 0) * 1e12 + t.number_or("flops", 0);
  p.bytes = t.number_or("gib", 0) * kGiB + t.number_or("gb", 0) * 1e9 + t.number_or("bytes", 0);
  p.seconds = t.number_or("seconds", 0) + t.number_or("ms", 0) / 1000;
  p.intensity = t.number_or("intensity", 0);
  p.efficiency = t.number_or("efficiency", 0);
  p.sm_occupancy = t.number_or("sm_occupancy", -1);
  p.pcie_bytes_per_s = t.number_or("gb_per_s", 0) * 1e9;
  const std::string direction = t.text_or("direction", "to_device");
  if (direction != "to_device" && direction != "to_host")
    t.fail("direction", "expected to_device or to_host");
  p.to_host = direction == "to_host";
  // compute and memory: an amount, or a duration (seconds/ms) to run at whatever rate they reach.
  if (p.kind == PhaseKind::compute && p.flops <= 0 && p.seconds <= 0)
    t.fail("tflop", "a compute phase needs tflop or flops > 0 (or seconds, ms)");
  if (p.kind == PhaseKind::memory && p.bytes <= 0 && p.seconds <= 0)
    t.fail("gib", "a memory phase needs gib, gb or bytes > 0 (or seconds, ms)");
  if ((p.kind == PhaseKind::transfer || p.kind == PhaseKind::p2p) && p.bytes <= 0) {
    t.fail("gib", "a transfer or p2p phase needs gib, gb or bytes > 0");
  }
  if ((p.kind == PhaseKind::idle || p.kind == PhaseKind::off) && p.seconds <= 0) {
    t.fail("seconds", "an idle or off phase needs seconds or ms > 0");
  }
  if ((p.kind == PhaseKind::compute || (p.kind == PhaseKind::memory && p.intensity > 0)) &&
      spec.flop_per_clock_per_sm[static_cast<int>(p.dtype)] <= 0) {
    t.fail("dtype", "GPU model " + spec.key + " has no " + dtype + " pipe");
  }
  if (p.efficiency < 0 || p.efficiency > 1) t.fail("efficiency", "must be in 0..1");
  // input = "zeros" | "constant" | "pattern" | "random" or the data's switching activity 0..1.
  if (const toml::node* input = t.get("input")) {
    if (auto name = input->value<std::string>()) {
      if (auto activity = input_activity(spec, *name)) {
        p.data_activity = *activity;
      } else {
        t.fail("input", "expected zeros, constant, pattern, random or a number in 0..1, got '" +
                            *name + "'");
      }
    } else {
      p.data_activity = t.number("input");
      if (!(p.data_activity >= 0 && p.data_activity <= 1))
        t.fail("input", "the data's switching activity must be in 0..1 (0: zeros, 1: random)");
    }
  }
  // A GEMM's shape: m, n and k together (and an optional batch), on a compute phase.
  const bool shaped = t.has("m") || t.has("n") || t.has("k");
  if (shaped) {
    if (p.kind != PhaseKind::compute) t.fail("m", "a shape (m, n, k) is for compute phases");
    if (t.has("efficiency") || t.has("intensity"))
      t.fail("m", "a shape sets the rate and the DRAM traffic: leave out efficiency and intensity");
    constexpr std::uint64_t kMaxDim = 1ULL << 24;
    p.gemm_m = t.integer_in("m", 1, kMaxDim);
    p.gemm_n = t.integer_in("n", 1, kMaxDim);
    p.gemm_k = t.integer_in("k", 1, kMaxDim);
    p.gemm_batch = t.has("batch") ? t.integer_in("batch", 1, kMaxDim) : 1;
  } else if (t.has("batch")) {
    t.fail("batch", "batch goes with a shape (m, n, k)");
  }
  return p;
}

// process = { pid, name, memory_gib, and at most one owner: slurm_job = N, pod = "UID",
// container = "ID" or session = N }. Other keys are refused: a misspelt owner would silently
// make the process a job of its own.
Process parse_process(const TomlAccess& t) {
  constexpr std::string_view kKeys[] = {"pid",       "name", "memory_gib", "slurm_job",
                                        "container", "pod",  "session"};
  for (const auto& [key, value] : t.table()) {
    if (std::find(std::begin(kKeys), std::end(kKeys), key.str()) == std::end(kKeys))
      t.fail(key.str(), "unknown key (pid, name, memory_gib, slurm_job, pod, container, session)");
  }
  Process p;
  p.pid = static_cast<std::uint32_t>(t.integer("pid"));
  p.name = t.text_or("name", "python3");
  const double gib = t.number_or("memory_gib", 1);
  if (gib < 0 || gib > 1e6) t.fail("memory_gib", "must be in 0..1000000 (GiB)");
  p.memory_bytes = static_cast<std::uint64_t>(gib * kGiB);
  for (std::string_view key : {"slurm_job", "pod", "container", "session"}) {
    if (!t.has(key)) continue;
    if (!p.owner.empty())
      t.fail(key, "a process has one owner: slurm_job, pod, container or session");
    const bool number = key == "slurm_job" || key == "session";
    const std::string id = number ? std::to_string(t.integer(key)) : t.text(key);
    if (id.empty() || id.size() > 128 || id.find_first_of(": \t\n") != std::string::npos)
      t.fail(key, "expected an id of 1 to 128 characters without spaces or ':'");
    p.owner = std::string(key == "slurm_job" ? "slurm" : key) + ":" + id;
  }
  return p;
}

Workload parse_workload(const TomlAccess& t, const std::string& name, const GpuSpec& spec) {
  Workload w;
  w.name = name;
  w.start_s = t.number_or("start_s", 0);
  w.repeat = t.boolean_or("repeat", false);
  if (auto process = t.optional_sub("process")) {
    w.process = parse_process(*process);
  } else {
    w.process = {4000, "python3", static_cast<std::uint64_t>(kGiB), {}};
  }
  const toml::node* phases = t.get("phases");
  if (!phases || !phases->is_array_of_tables())
    t.fail("phases", "expected [[workloads." + name + ".phases]]");
  int n = 0;
  for (const toml::node& e : *phases->as_array()) {
    w.phases.push_back(parse_phase(
        TomlAccess(*e.as_table(), t.where() + " phases[" + std::to_string(n++) + "]"), spec));
  }
  return w;
}

// Applies the per-GPU keys of `t` ([gpu_defaults] or one [[gpu]]) to `gpu`.
void apply_gpu_keys(const TomlAccess& t, const TomlAccess& root,
                    const std::vector<std::filesystem::path>& model_dirs,
                    std::map<std::string, std::shared_ptr<const GpuSpec>>& specs,
                    std::string& fingerprint_text, GpuConfig& gpu);

std::shared_ptr<const GpuSpec> find_spec(
    const TomlAccess& t, const std::string& key,
    const std::vector<std::filesystem::path>& model_dirs,
    std::map<std::string, std::shared_ptr<const GpuSpec>>& specs, std::string& fingerprint_text) {
  if (auto it = specs.find(key); it != specs.end()) return it->second;
  for (const auto& dir : model_dirs) {
    const auto file = dir / "models" / (key + ".toml");
    if (std::filesystem::exists(file)) {
      fingerprint_text += read_text(file);
      auto spec = load_gpu_spec(file);
      specs[key] = spec;
      return spec;
    }
  }
  t.fail("gpu_model", "no model file models/" + key +
                          ".toml next to the scenario or in the installed scenarios");
}

// Refuses a key of `t` that is not in `known` (a misspelt fault would otherwise be a healthy link).
void refuse_unknown_keys(const TomlAccess& t, std::initializer_list<std::string_view> known) {
  for (auto&& [key, value] : t.table()) {
    if (std::find(known.begin(), known.end(), key.str()) == known.end()) {
      std::string list;
      for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      t.fail(key.str(), "unknown key (expected one of " + list + ")");
    }
  }
}

NvLinkCounter nvlink_counter_by_name(const TomlAccess& t, const std::string& name) {
  static const std::map<std::string, NvLinkCounter> kCounters = {
      {"replay", NvLinkCounter::replay},
      {"recovery", NvLinkCounter::recovery},
      {"crc_flit", NvLinkCounter::crc_flit},
      {"crc_data", NvLinkCounter::crc_data},
      {"ecc_data", NvLinkCounter::ecc_data}};
  auto it = kCounters.find(name);
  if (it == kCounters.end())
    t.fail("counter", "expected replay, recovery, crc_flit, crc_data or ecc_data");
  return it->second;
}

// nvlink_down = [links] and nvlink_errors = [{ link, counter, initial, per_hour, from_s }]. The
// link numbers are checked against the GPU's links once the node's topology is applied.
void apply_nvlink_fault_keys(const TomlAccess& t, GpuConfig& gpu) {
  if (t.has("nvlink_down")) {
    gpu.nvlink.down_mask = 0;
    for (std::uint64_t link : t.integers("nvlink_down")) {
      if (link >= kMaxNvLinks) t.fail("nvlink_down", "a link number is 0..17");
      gpu.nvlink.down_mask |= 1U << link;
    }
  }
  if (const toml::node* errors = t.get("nvlink_errors")) {
    if (!errors->is_array()) t.fail("nvlink_errors", "expected an array of tables");
    gpu.nvlink.errors.clear();
    for (const toml::node& e : *errors->as_array()) {
      if (!e.is_table()) t.fail("nvlink_errors", "expected an array of tables");
      TomlAccess et(*e.as_table(), t.where() + " nvlink_errors");
      refuse_unknown_keys(et, {"link", "counter", "initial", "per_hour", "from_s"});
      NvLinkErrorFault f;
      f.link = static_cast<std::uint32_t>(et.integer_in("link", 0, kMaxNvLinks - 1));
      f.counter = nvlink_counter_by_name(et, et.text("counter"));
      f.initial = et.number_or("initial", 0);
      f.per_hour = et.number_or("per_hour", 0);
      f.from_s = et.number_or("from_s", 0);
      if (f.initial < 0 || f.initial > 1e12) et.fail("initial", "must be in 0..1e12");
      if (f.per_hour < 0 || f.per_hour > 1e9) et.fail("per_hour", "must be in 0..1e9");
      if (!std::isfinite(f.from_s)) et.fail("from_s", "must be a number of seconds");
      gpu.nvlink.errors.push_back(f);
    }
  }
}

// The keys of the faults doctor looks for (sim/model/faults.cpp).
void apply_fault_keys(const TomlAccess& t, GpuConfig& gpu) {
  apply_nvlink_fault_keys(t, gpu);
  gpu.pcie_replays_per_hour = t.number_or("pcie_replays_per_hour", gpu.pcie_replays_per_hour);
  gpu.clock_jitter_mhz = t.number_or("clock_jitter_mhz", gpu.clock_jitter_mhz);
  if (auto pages = t.optional_sub("retired_pages")) {
    if (!gpu.spec->page_retirement)
      pages->fail("sbe", gpu.spec->key + " does not retire pages (it remaps rows, or has no ECC)");
    const std::uint64_t sbe =
        pages->has("sbe") ? pages->integer_in("sbe", 0, kMaxRetiredPages) : gpu.retired_sbe_pages;
    const std::uint64_t dbe =
        pages->has("dbe") ? pages->integer_in("dbe", 0, kMaxRetiredPages) : gpu.retired_dbe_pages;
    if (sbe + dbe > kMaxRetiredPages)
      pages->fail("dbe", "sbe + dbe must be at most " + std::to_string(kMaxRetiredPages) +
                             " (the pages a GPU can retire)");
    gpu.retired_sbe_pages = static_cast<std::uint32_t>(sbe);
    gpu.retired_dbe_pages = static_cast<std::uint32_t>(dbe);
    gpu.retired_pages_pending = pages->boolean_or("pending", gpu.retired_pages_pending);
  }
  if (auto brake = t.optional_sub("power_brake")) {
    gpu.power_brake_period_s = brake->number("period_s");
    gpu.power_brake_seconds = brake->number("seconds");
    if (gpu.power_brake_period_s <= 0 || gpu.power_brake_seconds <= 0 ||
        gpu.power_brake_seconds >= gpu.power_brake_period_s)
      brake->fail("seconds", "needs 0 < seconds < period_s");
  }
}

void apply_gpu_keys(const TomlAccess& t, const TomlAccess& root,
                    const std::vector<std::filesystem::path>& model_dirs,
                    std::map<std::string, std::shared_ptr<const GpuSpec>>& specs,
                    std::string& fingerprint_text, GpuConfig& gpu) {
  if (t.has("gpu_model")) {
    gpu.spec = find_spec(t, t.text("gpu_model"), model_dirs, specs, fingerprint_text);
    gpu.app_sm_mhz = gpu.spec->default_app_sm_mhz;
    gpu.app_memory_mhz = gpu.spec->default_app_memory_mhz;
    gpu.power_limit_mw =
        static_cast<std::uint32_t>(std::lround(gpu.spec->power_limit_default_w * 1000));
    gpu.pcie_generation = gpu.pcie_slot_max_generation = gpu.spec->pcie_max_generation;
    gpu.pcie_width = gpu.spec->pcie_max_width;
    gpu.ambient_c = gpu.spec->ambient_c;
  }
  const GpuSpec& spec = *gpu.spec;
  if (t.has("uuid")) gpu.uuid = t.text("uuid");
  if (t.has("serial")) gpu.serial = t.text("serial");
  if (t.has("pci_bus")) gpu.pci_bus = static_cast<std::uint32_t>(t.integer("pci_bus"));
  if (t.has("pci_device")) gpu.pci_device = static_cast<std::uint32_t>(t.integer("pci_device"));
  if (t.has("numa_node")) gpu.numa_node = static_cast<std::uint32_t>(t.integer("numa_node"));
  gpu.cooling_factor = t.number_or("cooling_factor", gpu.cooling_factor);
  if (!(gpu.cooling_factor >= 0) || !std::isfinite(gpu.cooling_factor))
    t.fail("cooling_factor", "expected a factor >= 0 (0: an ideal heat sink held at ambient)");
  gpu.ambient_c = t.number_or("ambient_c", gpu.ambient_c);
  gpu.persistence_mode = t.boolean_or("persistence_mode", gpu.persistence_mode);
  if (t.has("power_limit_w")) {
    const double w = t.number("power_limit_w");
    if (w < spec.power_limit_min_w || w > spec.power_limit_max_w)
      t.fail("power_limit_w", "outside the model's limits");
    gpu.power_limit_mw = static_cast<std::uint32_t>(std::lround(w * 1000));
  }
  if (auto app = t.optional_sub("applications_clocks")) {
    gpu.app_sm_mhz = static_cast<std::uint32_t>(app->integer("sm_mhz"));
    gpu.app_memory_mhz =
        static_cast<std::uint32_t>(app->integer_or("memory_mhz", spec.default_app_memory_mhz));
    if (!spec.is_supported_sm_clock(gpu.app_sm_mhz) ||
        !spec.is_supported_memory_clock(gpu.app_memory_mhz)) {
      app->fail("sm_mhz", "not a supported clock pair of " + spec.key);
    }
  }
  if (auto pcie = t.optional_sub("pcie")) {
    gpu.pcie_generation =
        static_cast<std::uint32_t>(pcie->integer_or("generation", gpu.pcie_generation));
    gpu.pcie_width = static_cast<std::uint32_t>(pcie->integer_or("width", gpu.pcie_width));
    gpu.pcie_slot_max_generation = static_cast<std::uint32_t>(
        pcie->integer_or("slot_max_generation", gpu.pcie_slot_max_generation));
    if (gpu.pcie_generation > spec.pcie_max_generation || gpu.pcie_width > spec.pcie_max_width) {
      pcie->fail("generation", "beyond what the GPU model supports");
    }
  }
  if (auto ecc = t.optional_sub("ecc")) {
    gpu.ecc_corrected = ecc->integer_or("corrected", gpu.ecc_corrected);
    gpu.ecc_uncorrected = ecc->integer_or("uncorrected", gpu.ecc_uncorrected);
    gpu.ecc_corrected_per_hour = ecc->number_or("corrected_per_hour", gpu.ecc_corrected_per_hour);
    gpu.ecc_uncorrected_per_hour =
        ecc->number_or("uncorrected_per_hour", gpu.ecc_uncorrected_per_hour);
  }
  apply_fault_keys(t, gpu);
  if (t.has("workload")) {
    const std::string name = t.text("workload");
    auto workloads = root.optional_sub("workloads");
    if (!workloads || !workloads->has(name)) t.fail("workload", "no [workloads." + name + "]");
    gpu.workload = parse_workload(workloads->sub(name), name, spec);
  }
  if (t.has("lost_at_s")) gpu.lost_at_s = t.number("lost_at_s");
  gpu.read_error_rate = t.number_or("read_error_rate", gpu.read_error_rate);
  if (t.has("read_error_code")) gpu.read_error_code = nvml_code_by_name(t.text("read_error_code"));
  if (const toml::node* errors = t.get("errors")) {
    if (!errors->is_array()) t.fail("errors", "expected an array of tables");
    gpu.errors.clear();
    for (const toml::node& e : *errors->as_array()) {
      if (!e.is_table()) t.fail("errors", "expected an array of tables");
      TomlAccess et(*e.as_table(), t.where() + " errors");
      InjectedError err;
      err.function = et.text("function");
      err.code = nvml_code_by_name(et.text_or("code", "unknown"));
      err.from_s = et.number_or("from_s", 0);
      err.until_s = et.number_or("until_s", std::numeric_limits<double>::infinity());
      gpu.errors.push_back(err);
    }
  }
}

// The node's [nvlink] table (or node.nvswitch alone, as before the table existed) applied to
// every GPU: its link count (the model's), speed, topology and partner. Pairs share each link, so
// a link down at one end is down at both.
void apply_nvlink_topology(const TomlAccess& root, const TomlAccess& node, Scenario& s) {
  NvLinkTopology topology = s.nvswitch ? NvLinkTopology::nvswitch : NvLinkTopology::none;
  std::optional<std::uint64_t> links_per_gpu;
  double gigabytes = 0;
  if (auto nv = root.optional_sub("nvlink")) {
    refuse_unknown_keys(*nv, {"links_per_gpu", "gbps_per_link", "topology"});
    const std::string name = nv->text_or("topology", s.nvswitch ? "nvswitch" : "pairs");
    if (name == "pairs") {
      topology = NvLinkTopology::pairs;
    } else if (name == "nvswitch") {
      topology = NvLinkTopology::nvswitch;
    } else if (name == "none") {
      topology = NvLinkTopology::none;
    } else {
      nv->fail("topology", "expected pairs, nvswitch or none");
    }
    if (s.nvswitch && topology != NvLinkTopology::nvswitch)
      node.fail("nvswitch", "true, but [nvlink] topology is " + name);
    if (nv->has("links_per_gpu")) links_per_gpu = nv->integer_in("links_per_gpu", 1, kMaxNvLinks);
    gigabytes = nv->number_or("gbps_per_link", 0);
    if (gigabytes < 0 || gigabytes > 1000) nv->fail("gbps_per_link", "must be in 0..1000 (GB/s)");
  }
  s.nvswitch = topology == NvLinkTopology::nvswitch;
  const auto count = static_cast<std::uint32_t>(s.gpus.size());
  for (GpuConfig& gpu : s.gpus) {
    GpuNvLink& l = gpu.nvlink;
    const std::uint32_t model_links = std::min(gpu.spec->nvlink_count, kMaxNvLinks);
    l.topology = topology;
    l.links = topology == NvLinkTopology::none ? 0 : model_links;
    if (links_per_gpu && l.links > 0) {
      if (*links_per_gpu > model_links)
        throw ScenarioError(
            s.path.string() + " [nvlink] links_per_gpu: " + std::to_string(*links_per_gpu) +
            " is more than " + gpu.spec->key + " has (" + std::to_string(model_links) + ")");
      l.links = static_cast<std::uint32_t>(*links_per_gpu);
    }
    if (topology == NvLinkTopology::pairs) {
      const std::uint32_t partner = gpu.index ^ 1U;
      l.partner = partner < count ? static_cast<std::int32_t>(partner) : -1;
      if (l.partner < 0) l.links = 0;  // an odd GPU out has no peer to link to
    }
    l.gigabytes_per_s_per_link =
        gigabytes > 0 ? gigabytes : default_nvlink_gigabytes_per_s(gpu.spec->nvlink_generation);
    const std::string where = s.path.string() + " GPU " + std::to_string(gpu.index);
    if (l.down_mask >> l.links)
      throw ScenarioError(where + " nvlink_down: a link beyond the GPU's " +
                          std::to_string(l.links) + " NVLinks");
    for (const NvLinkErrorFault& e : l.errors) {
      if (e.link >= l.links)
        throw ScenarioError(where + " nvlink_errors: link " + std::to_string(e.link) +
                            " beyond the GPU's " + std::to_string(l.links) + " NVLinks");
    }
  }
  if (topology == NvLinkTopology::pairs) {
    std::vector<std::uint32_t> masks;
    for (const GpuConfig& gpu : s.gpus) masks.push_back(gpu.nvlink.down_mask);
    for (GpuConfig& gpu : s.gpus) {
      if (gpu.nvlink.partner >= 0)
        gpu.nvlink.down_mask |= masks[static_cast<std::size_t>(gpu.nvlink.partner)];
    }
  }
  for (const GpuConfig& gpu : s.gpus) {
    for (const Phase& p : gpu.workload.phases) {
      if (p.kind == PhaseKind::p2p && (p.peer >= count || p.peer == gpu.index))
        throw ScenarioError(s.path.string() + " GPU " + std::to_string(gpu.index) + " workload " +
                            gpu.workload.name + " phase " + p.name + ": peer " +
                            std::to_string(p.peer) + " is not another GPU of the node");
    }
  }
}

}  // namespace

std::optional<double> input_activity(const GpuSpec& spec, std::string_view name) {
  if (name == "zeros") return 0.0;
  if (name == "constant") return spec.constant_activity;
  if (name == "pattern") return spec.pattern_activity;
  if (name == "random") return 1.0;
  return std::nullopt;
}

std::uint32_t nvml_code_by_name(const std::string& name) {
  static const std::map<std::string, std::uint32_t> kCodes = {{"uninitialized", 1},
                                                              {"invalid_argument", 2},
                                                              {"not_supported", 3},
                                                              {"no_permission", 4},
                                                              {"not_found", 6},
                                                              {"insufficient_power", 8},
                                                              {"driver_not_loaded", 9},
                                                              {"timeout", 10},
                                                              {"irq_issue", 11},
                                                              {"library_not_found", 12},
                                                              {"corrupted_inforom", 14},
                                                              {"gpu_is_lost", 15},
                                                              {"reset_required", 16},
                                                              {"operating_system", 17},
                                                              {"lib_rm_version_mismatch", 18},
                                                              {"in_use", 19},
                                                              {"memory", 20},
                                                              {"no_data", 21},
                                                              {"insufficient_resources", 23},
                                                              {"not_ready", 27},
                                                              {"gpu_not_found", 28},
                                                              {"unknown", 999}};
  auto it = kCodes.find(name);
  if (it == kCodes.end()) throw ScenarioError("unknown NVML error name '" + name + "'");
  return it->second;
}

Scenario load_scenario(const std::filesystem::path& file,
                       const std::vector<std::filesystem::path>& model_dirs) {
  std::string fingerprint_text = read_text(file);
  toml::table root_table;
  try {
    root_table = toml::parse(fingerprint_text, file.string());
  } catch (const toml::parse_error& e) {
    throw ScenarioError(file.string() + ":" + std::to_string(e.source().begin.line) + ": " +
                        std::string(e.description()));
  }
  KeyLog keys;  // every key of the file is one the loader asks for (refused at the end)
  TomlAccess root(root_table, file.string());
  Scenario s;
  s.name = file.stem().string();
  s.path = file;

  TomlAccess node = root.sub("node");
  s.description = node.text_or("description", "");
  s.privileged = node.boolean_or("privileged", true);
  s.driver_version = node.text_or("driver_version", "580.159.04");
  s.nvml_version = node.text_or("nvml_version", "13.580.159.04");
  s.cuda_driver_version = static_cast<int>(node.integer_or("cuda_driver_version", 13000));
  if (node.has("init_error")) s.init_error = nvml_code_by_name(node.text("init_error"));
  s.seed = node.integer_or("seed", 1);
  s.cpu_count = static_cast<std::uint32_t>(
      node.has("cpu_count") ? node.integer_in("cpu_count", 1, 1u << 16) : 64);
  s.numa_nodes = static_cast<std::uint32_t>(
      node.has("numa_nodes") ? node.integer_in("numa_nodes", 1, 1024) : 1);
  s.nvswitch = node.boolean_or("nvswitch", false);
  const auto count = static_cast<std::uint32_t>(node.integer_in("gpu_count", 0, kMaxGpus));
  const auto per_switch = static_cast<std::uint32_t>(
      std::max<std::uint64_t>(1, node.integer_or("gpus_per_pcie_switch", 2)));
  const std::vector<std::string> uuids = node.texts_or("uuids");
  const double variation = node.number_or("silicon_variation", 0);
  if (variation < 0 || variation > 0.5)
    node.fail("silicon_variation", "expected a fraction in 0..0.5");

  std::map<std::string, std::shared_ptr<const GpuSpec>> specs;
  GpuConfig base;
  base.spec = find_spec(node, node.text("gpu_model"), model_dirs, specs, fingerprint_text);
  // Start from the model's defaults; [gpu_defaults] and [[gpu]] override.
  toml::table model_only;
  model_only.insert("gpu_model", node.text("gpu_model"));
  apply_gpu_keys(TomlAccess(model_only, file.string()), root, model_dirs, specs, fingerprint_text,
                 base);
  if (auto defaults = root.optional_sub("gpu_defaults")) {
    apply_gpu_keys(*defaults, root, model_dirs, specs, fingerprint_text, base);
  }
  // Every [[gpu]] of an index applies, in file order (a later one adds to or overrides an
  // earlier one; none is dropped).
  std::map<std::uint32_t, std::vector<const toml::table*>> overrides;
  if (const toml::node* gpus = root.get("gpu")) {
    if (!gpus->is_array_of_tables()) root.fail("gpu", "expected [[gpu]] tables");
    for (const toml::node& e : *gpus->as_array()) {
      TomlAccess g(*e.as_table(), file.string() + " [[gpu]]");
      const auto index = static_cast<std::uint32_t>(g.integer_in("index", 0, kMaxGpus));
      if (index >= count) g.fail("index", "beyond node.gpu_count");
      overrides[index].push_back(e.as_table());
    }
  }
  for (std::uint32_t i = 0; i < count; ++i) {
    GpuConfig gpu = base;
    gpu.index = i;
    gpu.uuid = i < uuids.size() ? uuids[i] : make_uuid(s.name, i);
    gpu.serial = make_serial(s.name, i);
    gpu.pci_bus = default_bus(i);
    gpu.numa_node = i * s.numa_nodes / std::max<std::uint32_t>(1, count);
    gpu.pcie_switch = i / per_switch;
    // No two boards are alike: leakage and cooling spread by ±variation, the same every run.
    const auto unit = [&](const char* what) {
      return static_cast<double>(mix(fnv1a(s.name + what + std::to_string(i))) >> 11) * 0x1.0p-53 *
                 2 -
             1;
    };
    gpu.leakage_factor = 1 + variation * unit("/leakage/");
    gpu.cooling_factor *= 1 + variation * unit("/cooling/");
    if (auto it = overrides.find(i); it != overrides.end()) {
      for (const toml::table* table : it->second) {
        apply_gpu_keys(TomlAccess(*table, file.string() + " [[gpu]] index " + std::to_string(i)),
                       root, model_dirs, specs, fingerprint_text, gpu);
      }
    }
    gpu.workload.process.pid += i;  // one process per GPU, as a DDP job launches them
    s.gpus.push_back(std::move(gpu));
  }
  apply_nvlink_topology(root, node, s);
  // A workload no GPU runs is read by none: its name is no misspelt key.
  if (auto workloads = root.optional_sub("workloads")) keys.checked_by_reader(workloads->table());
  keys.refuse_unasked(root_table);
  s.fingerprint = fnv1a(fingerprint_text);
  return s;
}

}  // namespace gpuclk::sim
