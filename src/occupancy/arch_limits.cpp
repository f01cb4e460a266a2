// The limits table. Sources, cited by tag in the rows below:
//
// [PG]   CUDA C++ Programming Guide, "Technical Specifications per Compute Capability" (the CUDA
//        12.x edition for sm_50..sm_72, which CUDA 13 no longer compiles for; the CUDA 13.0
//        edition for sm_75 onwards): resident warps, resident blocks, registers per SM, block
//        and thread, shared memory per SM and per block, 48 KiB static shared memory.
// [PG-S] Programming Guide, "Shared Memory" subsections of Compute Capability 7.x, 8.x, 9.0, 10.0
//        and 12.0: the shared-memory capacities the unified L1/shared array can be set to
//        (the carveout), and that more than 48 KiB per block needs dynamic shared memory and an
//        explicit opt-in (cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize)).
// [RT]   CUDA Runtime API, cudaDeviceProp::reservedSharedMemPerBlock /
//        cudaDevAttrReservedSharedMemoryPerBlock: 1 KiB the driver reserves in every block from
//        sm_80 on, 0 before; also listed per arch in CCCL's cuda::arch::traits (arch_traits.h).
// [OCC]  The allocation rules of NVIDIA's occupancy calculator (the CUDA Occupancy Calculator
//        spreadsheet and cuda_occupancy.h of CUDA 13.0): registers are allocated per warp in
//        units of 256, per SM sub-partition (4 per SM, 2 on GP100); shared memory is allocated
//        in units of 256 bytes up to sm_7x and 128 bytes from sm_80; blocks are not rounded up
//        beyond whole warps. cuda_occupancy.h is also the source for the resident-block limit
//        of 11.0 and 12.x, where it and CCCL's arch traits disagree (CCCL: 32; cuda_occupancy.h,
//        which the driver's calculator matches: 24). The oracle test
//        (tests/unit/occupancy_oracle_test.cpp) checks every row against it.
// [DQ]   deviceQuery on the part: Jetson TX1 (sm_53) and TX2 (sm_62) report 32768 registers per
//        block; an RTX 5060 (sm_120) 1536 threads and 102400 bytes of shared memory per SM; a
//        Jetson AGX Thor (sm_110) 228 KiB of shared memory per SM.
// [ASM]  Assumption, not yet checked on hardware: sm_110 (Thor) holds 48 warps per SM like the
//        other 24-block Blackwell parts; run tests/device/occupancy_device.sh on one to confirm.
#include "occupancy/arch_limits.h"

#include <array>
#include <charconv>

namespace gpuclk::occupancy {
namespace {

constexpr int kKiB = 1024;

// [PG-S] Carveouts, in KiB.
constexpr int kVoltaCarveout[] = {0, 8, 16, 32, 64, 96};                        // sm_70, sm_72
constexpr int kTuringCarveout[] = {32, 64};                                     // sm_75
constexpr int kA100Carveout[] = {0, 8, 16, 32, 64, 100, 132, 164};              // sm_80, sm_87
constexpr int kGa10xCarveout[] = {0, 8, 16, 32, 64, 100};                       // sm_86, 89, 12x
constexpr int kHopperCarveout[] = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};  // sm_90, 10x, 110

// One row: what differs between architectures. Everything else follows from the generation.
struct Row {
  std::string_view name;
  int major, minor;
  std::string_view family;
  std::string_view examples;
  int warps_per_sm;                // [PG]
  int blocks_per_sm;               // [PG] ([OCC] for 11.0, 12.x)
  int registers_per_block;         // [PG] ([DQ] for 5.3, 6.2)
  int shared_kib_per_sm;           // [PG] ([DQ] for 11.0, 12.0)
  int shared_kib_per_block_optin;  // [PG]; 48 where there is no opt-in
  std::span<const int> carveout;   // [PG-S]
};

// clang-format off
constexpr Row kRows[] = {
  // name     cc       family      examples                               warps blocks regs/blk smem/SM optin carveout
  {"sm_50",  5, 0, "Maxwell",   "GTX 750, Quadro K2200",                        64, 32, 65536,  64,  48, {}},
  {"sm_52",  5, 2, "Maxwell",   "GTX 970/980, Titan X, Tesla M40",              64, 32, 65536,  96,  48, {}},
  {"sm_53",  5, 3, "Maxwell",   "Jetson TX1, Jetson Nano",                      64, 32, 32768,  64,  48, {}},
  {"sm_60",  6, 0, "Pascal",    "Tesla P100",                                   64, 32, 65536,  64,  48, {}},
  {"sm_61",  6, 1, "Pascal",    "GTX 10x0, Titan Xp, Tesla P4/P40",             64, 32, 65536,  96,  48, {}},
  {"sm_62",  6, 2, "Pascal",    "Jetson TX2",                                   64, 32, 32768,  64,  48, {}},
  {"sm_70",  7, 0, "Volta",     "Tesla V100, Titan V",                          64, 32, 65536,  96,  96, kVoltaCarveout},
  {"sm_72",  7, 2, "Volta",     "Jetson AGX Xavier",                            64, 32, 65536,  96,  96, kVoltaCarveout},
  {"sm_75",  7, 5, "Turing",    "T4, RTX 20x0, Quadro RTX",                     32, 16, 65536,  64,  64, kTuringCarveout},
  {"sm_80",  8, 0, "Ampere",    "A100, A30, A800",                              64, 32, 65536, 164, 163, kA100Carveout},
  {"sm_86",  8, 6, "Ampere",    "RTX 30x0, A10, A40, RTX A6000",                48, 16, 65536, 100,  99, kGa10xCarveout},
  {"sm_87",  8, 7, "Ampere",    "Jetson AGX Orin",                              48, 16, 65536, 164, 163, kA100Carveout},
  {"sm_89",  8, 9, "Ada",       "L4, L40S, RTX 40x0",                           48, 24, 65536, 100,  99, kGa10xCarveout},
  {"sm_90",  9, 0, "Hopper",    "H100, H200, GH200, H20",                       64, 32, 65536, 228, 227, kHopperCarveout},
  {"sm_100", 10, 0, "Blackwell", "B200, GB200",                                 64, 32, 65536, 228, 227, kHopperCarveout},
  {"sm_103", 10, 3, "Blackwell", "B300, GB300",                                 64, 32, 65536, 228, 227, kHopperCarveout},
  // [ASM] for the 48 warps; 24 blocks [OCC]; 228 KiB [DQ].
  {"sm_110", 11, 0, "Blackwell", "Jetson AGX Thor (sm_101 before CUDA 13)",     48, 24, 65536, 228, 227, kHopperCarveout},
  {"sm_120", 12, 0, "Blackwell", "RTX 50x0, RTX PRO 6000 Blackwell",            48, 24, 65536, 100,  99, kGa10xCarveout},
  {"sm_121", 12, 1, "Blackwell", "GB10 (DGX Spark)",                            48, 24, 65536, 100,  99, kGa10xCarveout},
};
// clang-format on

constexpr ArchLimits make_limits(const Row& row) {
  ArchLimits a;
  a.name = row.name;
  a.major = row.major;
  a.minor = row.minor;
  a.family = row.family;
  a.examples = row.examples;
  a.warp_size = 32;                // [PG]
  a.max_threads_per_block = 1024;  // [PG]
  a.max_warps_per_sm = row.warps_per_sm;
  a.max_blocks_per_sm = row.blocks_per_sm;
  a.warp_allocation_granularity = 1;  // [OCC]
  a.registers_per_sm = 65536;         // [PG] 64 K on every architecture in the table
  a.max_registers_per_block = row.registers_per_block;
  a.max_registers_per_thread = 255;                                        // [PG]
  a.register_allocation_unit = 256;                                        // [OCC]
  a.register_sub_partitions = (row.major == 6 && row.minor == 0) ? 2 : 4;  // [OCC], GP100: 2
  a.register_launch_check_sub_partitions = 4;                              // [OCC]
  a.shared_memory_per_sm = std::int64_t{row.shared_kib_per_sm} * kKiB;
  a.shared_memory_per_block = 48 * kKiB;  // [PG]
  a.shared_memory_per_block_optin = std::int64_t{row.shared_kib_per_block_optin} * kKiB;
  a.max_static_shared_memory_per_block = 48 * kKiB;                // [PG-S]
  a.shared_memory_allocation_unit = row.major >= 8 ? 128 : 256;    // [OCC]
  a.reserved_shared_memory_per_block = row.major >= 8 ? 1024 : 0;  // [RT]
  a.carveout_kib = row.carveout;
  return a;
}

constexpr auto kTable = [] {
  std::array<ArchLimits, std::size(kRows)> table{};
  for (std::size_t i = 0; i < std::size(kRows); ++i) table[i] = make_limits(kRows[i]);
  return table;
}();

bool starts_with_then_strip(std::string_view& text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return false;
  text.remove_prefix(prefix.size());
  return true;
}

}  // namespace

std::span<const ArchLimits> all_architectures() { return kTable; }

const ArchLimits* find_architecture(int major, int minor) {
  for (const ArchLimits& arch : kTable) {
    if (arch.major == major && arch.minor == minor) return &arch;
  }
  return nullptr;
}

const ArchLimits* parse_architecture(std::string_view text) {
  if (text.find('.') != std::string_view::npos) {  // "9.0"
    const auto dot = text.find('.');
    int major = 0, minor = 0;
    const auto major_text = text.substr(0, dot), minor_text = text.substr(dot + 1);
    const auto [p1, e1] =
        std::from_chars(major_text.data(), major_text.data() + major_text.size(), major);
    const auto [p2, e2] =
        std::from_chars(minor_text.data(), minor_text.data() + minor_text.size(), minor);
    if (e1 != std::errc{} || e2 != std::errc{} || p1 != major_text.data() + major_text.size() ||
        p2 != minor_text.data() + minor_text.size()) {
      return nullptr;
    }
    return find_architecture(major, minor);
  }
  starts_with_then_strip(text, "sm_") || starts_with_then_strip(text, "compute_") ||
      starts_with_then_strip(text, "sm") || starts_with_then_strip(text, "SM");
  // Feature-set suffixes (sm_90a, sm_100f) change instructions, not resource limits.
  if (text.ends_with('a') || text.ends_with('f')) text.remove_suffix(1);
  int number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty()) return nullptr;
  if (number == 101) number = 110;  // CUDA 12.8/12.9 called Thor sm_101
  return find_architecture(number / 10, number % 10);
}

std::string architecture_names() {
  std::string names;
  for (const ArchLimits& arch : kTable) {
    if (!names.empty()) names += ", ";
    names += arch.name;
  }
  return names;
}

}  // namespace gpuclk::occupancy
