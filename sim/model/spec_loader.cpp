// GPU model files: sim/scenarios/models/<key>.toml. Every physics parameter is required, so a
// new model cannot silently inherit the H100's numbers.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "scenario.h"
#include "toml_access.h"

namespace gpuclk::sim {
namespace {

Architecture parse_architecture(const TomlAccess& t, const std::string& name) {
  if (name == "volta") return Architecture::volta;
  if (name == "turing") return Architecture::turing;
  if (name == "ampere") return Architecture::ampere;
  if (name == "ada") return Architecture::ada;
  if (name == "hopper") return Architecture::hopper;
  if (name == "blackwell") return Architecture::blackwell;
  t.fail("architecture", "unknown architecture '" + name + "'");
}

PerDataType<double> per_data_type(const TomlAccess& t, std::string_view key, bool all_required) {
  PerDataType<double> out{};
  TomlAccess sub = t.sub(key);
  for (const auto& [k, v] : sub.table()) {
    if (!parse_data_type(k.str()))
      sub.fail(k.str(), "not a data type (fp64 fp32 tf32 fp16 bf16 fp8 int8)");
  }
  for (int i = 0; i < kDataTypeCount; ++i) {
    const std::string_view name = kDataTypeNames[i];
    out[i] = all_required ? sub.number(name) : sub.number_or(name, 0);
  }
  return out;
}

}  // namespace

std::shared_ptr<const GpuSpec> load_gpu_spec(const std::filesystem::path& file) {
  toml::table root;
  try {
    root = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    throw ScenarioError(file.string() + ": " + std::string(e.description()));
  }
  TomlAccess top(root, file.string());
  auto spec = std::make_shared<GpuSpec>();
  GpuSpec& s = *spec;
  s.key = file.stem().string();

  TomlAccess id = top.sub("identity");
  s.name = id.text("name");
  s.architecture = parse_architecture(id, id.text("architecture"));
  s.compute_capability_major = static_cast<int>(id.integer("compute_capability_major"));
  s.compute_capability_minor = static_cast<int>(id.integer("compute_capability_minor"));
  s.pci_device_id = static_cast<std::uint32_t>(id.integer("pci_device_id"));
  s.pci_subsystem_id = static_cast<std::uint32_t>(id.integer("pci_subsystem_id"));
  s.sm_count = static_cast<std::uint32_t>(id.integer("sm_count"));
  s.cuda_cores = static_cast<std::uint32_t>(id.integer("cuda_cores"));
  s.memory_bus_width_bits = static_cast<std::uint32_t>(id.integer("memory_bus_width_bits"));
  s.memory_total_bytes = id.integer("memory_total_bytes");
  s.memory_reserved_bytes = id.integer("memory_reserved_bytes");
  s.bar1_total_bytes = id.integer_or("bar1_total_bytes", s.bar1_total_bytes);
  s.vbios_version = id.text_or("vbios_version", "");
  s.board_part_number = id.text_or("board_part_number", "");
  s.inforom_image_version = id.text_or("inforom_image_version", "");
  s.inforom_oem_version = id.text_or("inforom_oem_version", "");
  s.inforom_ecc_version = id.text_or("inforom_ecc_version", "");

  TomlAccess clocks = top.sub("clocks");
  s.sm_min_mhz = static_cast<std::uint32_t>(clocks.integer("sm_min_mhz"));
  s.sm_max_mhz = static_cast<std::uint32_t>(clocks.integer("sm_max_mhz"));
  const double step_mhz = clocks.number("sm_step_mhz");
  if (!(step_mhz > 0 && step_mhz <= 1000) || std::nearbyint(step_mhz * 2) != step_mhz * 2)
    clocks.fail("sm_step_mhz", "must be a positive multiple of 0.5 MHz");
  s.sm_step_half_mhz = static_cast<std::uint32_t>(step_mhz * 2);
  s.sm_step_mhz = (s.sm_step_half_mhz + 1) / 2;
  s.sm_base_mhz = static_cast<std::uint32_t>(clocks.integer("sm_base_mhz"));
  for (auto m : clocks.integers("memory_mhz"))
    s.memory_clocks_mhz.push_back(static_cast<std::uint32_t>(m));
  std::sort(s.memory_clocks_mhz.rbegin(), s.memory_clocks_mhz.rend());
  s.default_app_sm_mhz = static_cast<std::uint32_t>(clocks.integer("default_applications_sm_mhz"));
  s.default_app_memory_mhz =
      static_cast<std::uint32_t>(clocks.integer("default_applications_memory_mhz"));
  s.video_idle_mhz = static_cast<std::uint32_t>(clocks.integer("video_idle_mhz"));
  s.video_max_mhz = static_cast<std::uint32_t>(clocks.integer("video_max_mhz"));
  s.memory_locked_clocks_supported = clocks.boolean_or("memory_locked_clocks", false);
  if (s.sm_min_mhz > s.sm_max_mhz || s.sm_clock_at(s.sm_clock_count() - 1) != s.sm_min_mhz) {
    clocks.fail("sm_min_mhz", "sm_min_mhz must be sm_max_mhz less a whole number of sm_step_mhz");
  }
  if (s.memory_clocks_mhz.empty()) clocks.fail("memory_mhz", "needs at least one clock");
  if (!s.is_supported_sm_clock(s.default_app_sm_mhz) ||
      !s.is_supported_memory_clock(s.default_app_memory_mhz)) {
    clocks.fail("default_applications_sm_mhz",
                "default application clocks must be supported clocks");
  }

  TomlAccess power = top.sub("power");
  s.power_limit_min_w = power.number("limit_min_w");
  s.power_limit_max_w = power.number("limit_max_w");
  s.power_limit_default_w = power.number("limit_default_w");
  s.power_controller_time_constant_s = power.number_or("controller_time_constant_s", 0);
  if (!(s.power_controller_time_constant_s >= 0) || s.power_controller_time_constant_s > 10) {
    power.fail("controller_time_constant_s", "must be in 0..10 s");
  }
  s.static_w = power.number("static_w");
  s.static_reference_c = power.number("static_reference_c");
  s.leakage_w_per_c = power.number("leakage_w_per_c");
  s.memory_interface_w = power.number("memory_interface_w");
  s.clock_tree_w = power.number("clock_tree_w");
  s.voltage_curve = power.curve("voltage_curve");
  s.pipe_full_w = per_data_type(power, "pipe_full_w", false);
  // Optional: without it every data type's pipe power follows its achieved utilisation alone.
  if (power.table().contains("pipe_busy_w")) {
    s.pipe_busy_w = per_data_type(power, "pipe_busy_w", false);
    for (int i = 0; i < kDataTypeCount; ++i) {
      if (s.pipe_busy_w[i] < 0 || s.pipe_busy_w[i] > s.pipe_full_w[i]) {
        power.sub("pipe_busy_w")
            .fail(std::string(kDataTypeNames[i]), "must be in 0..pipe_full_w." +
                                                      std::string(kDataTypeNames[i]) + " (" +
                                                      std::to_string(s.pipe_full_w[i]) + " W)");
      }
    }
  }
  s.load_store_full_w = power.number("load_store_full_w");
  s.dram_joules_per_byte = power.number("dram_picojoules_per_byte") * 1e-12;
  s.pcie_joules_per_byte = power.number("pcie_picojoules_per_byte") * 1e-12;
  // Optional: a tensor pipe's data-independent peak (none: only the average is held).
  if (power.has("pipe_peak_w")) s.pipe_peak_w = per_data_type(power, "pipe_peak_w", false);
  // Optional: power by the data (none: every input draws what random data draws).
  if (auto data = power.optional_sub("data")) {
    s.pipe_data_share = per_data_type(*data, "pipe_share", false);
    s.load_store_data_share = data->number("load_store_share");
    s.dram_data_share = data->number("dram_share");
    s.constant_activity = data->number("constant_activity");
    s.pattern_activity = data->number("pattern_activity");
    auto fraction = [&](std::string_view key, double v) {
      if (!(v >= 0 && v <= 1)) data->fail(key, "must be in 0..1");
    };
    for (int i = 0; i < kDataTypeCount; ++i) fraction("pipe_share", s.pipe_data_share[i]);
    fraction("load_store_share", s.load_store_data_share);
    fraction("dram_share", s.dram_data_share);
    fraction("constant_activity", s.constant_activity);
    fraction("pattern_activity", s.pattern_activity);
  }
  // Optional: NVML's memory power scope (the card answers it as an average only).
  if (auto memory = power.optional_sub("memory_scope")) {
    s.memory_power_supported = true;
    s.memory_scope_idle_w = memory->number("idle_w");
    s.memory_scope_joules_per_byte = memory->number("picojoules_per_byte") * 1e-12;
    if (memory->has("tile_picojoules_per_byte")) {
      s.memory_scope_tile_joules_per_byte =
          per_data_type(*memory, "tile_picojoules_per_byte", false);
      for (double& j : s.memory_scope_tile_joules_per_byte) j *= 1e-12;
      s.memory_scope_tile_data_share = memory->number("tile_share");
      if (!(s.memory_scope_tile_data_share >= 0 && s.memory_scope_tile_data_share <= 1))
        memory->fail("tile_share", "must be in 0..1");
    }
  }

  TomlAccess throughput = top.sub("throughput");
  s.flop_per_clock_per_sm = per_data_type(throughput, "flop_per_clock_per_sm", false);
  s.default_efficiency = per_data_type(throughput, "efficiency", false);
  s.memory_bandwidth_bytes_per_s = throughput.number("memory_bandwidth_gb_s") * 1e9;
  s.memory_default_efficiency = throughput.number("memory_efficiency");
  s.bandwidth_vs_sm_throughput = throughput.curve("bandwidth_vs_sm_throughput");

  // Optional: GEMM phases with a shape (m, n, k) take their rate from it; without [gemm] a shape
  // only sets the DRAM traffic and the base efficiency is the dtype's default.
  if (auto gemm = top.optional_sub("gemm")) {
    if (gemm->has("efficiency")) s.gemm_base_efficiency = per_data_type(*gemm, "efficiency", false);
    if (gemm->has("k0")) s.gemm_k0 = per_data_type(*gemm, "k0", false);
    s.gemm_call_overhead_s = gemm->number_or("call_overhead_us", 0) * 1e-6;
    s.gemm_tile_q128 = gemm->number_or("tile_q128", 1);
    s.gemm_tile_q64 = gemm->number_or("tile_q64", 1);
    s.gemm_operand_rereads = gemm->number_or("operand_rereads", 1);
    s.gemm_l2_resident = gemm->number_or("l2_resident", 1);
    s.l2_bytes = gemm->number_or("l2_mib", 0) * 1048576.0;
    for (double q : {s.gemm_tile_q128, s.gemm_tile_q64, s.gemm_l2_resident}) {
      if (!(q >= 0 && q <= 1))
        gemm->fail("tile_q128", "tile_q128, tile_q64 and l2_resident must be in 0..1");
    }
  }

  TomlAccess thermal = top.sub("thermal");
  s.ambient_c = thermal.number("ambient_c");
  s.die_k_per_w = thermal.number("die_k_per_w");
  s.die_time_constant_s = thermal.number("die_time_constant_s");
  s.sink_k_per_w = thermal.number("sink_k_per_w");
  s.sink_heat_capacity_j_per_k = thermal.number("sink_heat_capacity_j_per_k");
  s.memory_temp_offset_c = thermal.number("memory_offset_c");
  s.shutdown_c = thermal.number("shutdown_c");
  s.slowdown_c = thermal.number("slowdown_c");
  s.gpu_max_c = thermal.number("gpu_max_c");
  s.memory_max_c = thermal.number("memory_max_c");
  if (s.die_time_constant_s <= 0 || s.sink_k_per_w <= 0 || s.sink_heat_capacity_j_per_k <= 0) {
    thermal.fail("die_time_constant_s", "time constants and resistances must be positive");
  }

  TomlAccess bus = top.sub("bus");
  s.pcie_max_generation = static_cast<std::uint32_t>(bus.integer("pcie_max_generation"));
  s.pcie_max_width = static_cast<std::uint32_t>(bus.integer("pcie_max_width"));
  s.nvlink_count = static_cast<std::uint32_t>(bus.integer_or("nvlink_count", 0));
  s.nvlink_generation = static_cast<std::uint32_t>(bus.integer_or("nvlink_generation", 0));

  if (auto features = top.optional_sub("features")) {
    s.has_fan = features->boolean_or("fan", false);
    s.gpm_supported = features->boolean_or("gpm", false);
    s.ecc_supported = features->boolean_or("ecc", false);
    s.mig_supported = features->boolean_or("mig", false);
    s.power_average_supported = features->boolean_or("power_average", true);
    s.row_remapper_banks =
        static_cast<std::uint32_t>(features->integer_or("row_remapper_banks", 0));
    s.page_retirement = features->boolean_or("page_retirement", false);
    if (s.page_retirement && s.row_remapper_banks > 0)
      features->fail("page_retirement", "a GPU retires pages or remaps rows, not both");
  }
  return spec;
}

}  // namespace gpuclk::sim
