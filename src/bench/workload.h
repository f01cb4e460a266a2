// Benchmark workloads on NVIDIA GPUs (CUDA, optional at build time): what to run, for how long,
// and what came out. No telemetry here: a caller runs its sampler alongside and matches samples
// to Result::window_start/window_end.
//
// Built without CUDA (GPUCLK_HAVE_CUDA undefined), run(), run_concurrent(), device_count() and
// device_info() throw gpuclk::Error(ExitCode::not_supported) saying how to enable CUDA.
// Errors from CUDA or cuBLAS are gpuclk::Error too (see detail/cuda_check.h for the codes).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bench/dtype.h"
#include "bench/stats.h"
#include "bench/verify.h"

namespace gpuclk::bench {

// What the inputs hold. Under a power cap the data's bit activity sets the power and so the
// clock: on an H100 a BF16 8192³ GEMM ran 811 TFLOP/s at 1650 MHz on zeros and 673 TFLOP/s at
// 1358 MHz on random values (docs/results/power_by_data_h100.md). Random is what real data is
// closest to; zeros and a constant show what the data costs.
enum class InputKind {
  random,    // GEMM and triad: uniform in [-1, 1); copy: random bits
  zeros,     // every byte 0
  constant,  // GEMM: every element kConstantInput; copy and triad: every byte kConstantByte
};
// 0.75 is exact in every input type (FP8 E4M3, TF32, FP16, BF16) and so is every partial sum of
// k products (multiples of 0.5625 in FP32): the check is exact. 0.7 (perf/power_by_data.py's
// constant) is not: TF32 rounds it to 0.69921875, and k equal products carry that error
// coherently, past the check's bound for random data (measured: TF32 512x384x256, every sampled
// element off). A constant's power does not depend on which one it is: no bit toggles from one
// element to the next either way.
inline constexpr float kConstantInput = 0.75f;
inline constexpr unsigned char kConstantByte = 0x55;
std::string_view to_string(InputKind kind);  // "random", "zeros", "constant"
std::optional<InputKind> parse_input_kind(std::string_view name);

// D = A·B through cuBLASLt, column-major, A m×k, B k×n, D m×n; alpha 1, beta 0.
// Work per launch: 2·m·n·k FLOP. Inputs uniform random in [-1, 1) unless `input` says otherwise.
struct GemmSpec {
  GemmDtype dtype = GemmDtype::bf16;
  std::int64_t m = 8192, n = 8192, k = 8192;            // each ≥ 1 (fp8: multiples of 16)
  std::size_t workspace_bytes = std::size_t(64) << 20;  // cuBLASLt workspace (PyTorch: 32 MiB)
  // cuBLASLt heuristic results timed before measuring; the fastest wins only if it beats the
  // first by more than 2 %. 1 takes the heuristic's first choice.
  int autotune_candidates = 4;
  InputKind input = InputKind::random;
};

enum class MemKind {
  copy,         // cudaMemcpyAsync device to device (what PyTorch's dst.copy_(src) does)
  copy_kernel,  // our 16-byte vectorized copy kernel
  triad,        // a[i] = b[i] + s·c[i], FP32
};
std::string_view to_string(MemKind kind);  // "copy", "copy_kernel", "triad"
std::optional<MemKind> parse_mem_kind(std::string_view name);

// Work per launch, bytes read + written: copy 2·bytes, triad 3·bytes.
struct MemSpec {
  MemKind kind = MemKind::copy;
  std::size_t bytes = std::size_t(1) << 30;  // per array; a multiple of 16, ≥ 16
  InputKind input = InputKind::random;
};

// Independent FP32 FMA chains in registers on every resident thread: no memory traffic, so the
// rate follows the SM clock (Hopper peak: 256 FLOP per clock per SM). Work per launch:
// 2 FLOP × 256 FMA × iterations × threads.
struct FmaSpec {
  std::int64_t iterations = 2048;  // loop trips per thread (256 FMA each), 1 .. 2^31 − 1
};

using WorkloadSpec = std::variant<GemmSpec, MemSpec, FmaSpec>;

// "gemm", "mem" or "fma".
std::string workload_name(const WorkloadSpec& spec);
// The variant in words: "bf16 8192x8192x8192", "copy 1073741824 B", "fp32 2048 iterations";
// inputs other than random are part of it ("bf16 8192x8192x8192, zeros"), so `bench compare`
// never matches a run on zeros with one on random data.
std::string describe(const WorkloadSpec& spec);
// What the inputs held, in words: "random uniform in [-1, 1)", "zeros", "constant 0.75",
// "none (registers)" for fma.
std::string describe_input(const WorkloadSpec& spec);
// Throws gpuclk::Error(bad_argument) for sizes outside the ranges above.
void validate(const WorkloadSpec& spec);

enum class RateUnit { flop_per_second, byte_per_second };
std::string_view to_string(RateUnit unit);  // "FLOP/s", "B/s"

struct DeviceInfo {
  int ordinal = -1;        // CUDA ordinal (follows CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER)
  std::string name;        // "NVIDIA H100 80GB HBM3"
  std::string uuid;        // NVML's form, "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  std::string pci_bus_id;  // NVML's form, "00000000:19:00.0"
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  std::size_t memory_bytes = 0;
};

// Phases of one run, in order; run_concurrent() holds all devices at each of the first two.
enum class Phase {
  prepared,   // buffers allocated, inputs written, algorithm chosen
  warmed_up,  // warm-up done; the measured window starts next
  measured,   // measured window over; verification next
};

struct Progress {
  int device = -1;             // CUDA ordinal
  int repetition = 0;          // 0-based index of the repetition just finished
  int repetitions = 0;         // planned count
  double seconds = 0;          // its duration, GPU time (s)
  double rate = 0;             // its rate, in Result::unit
  double elapsed_seconds = 0;  // since the measured window began, GPU time (s)
};

struct RunOptions {
  double seconds = 3.0;             // target length of the measured window (s)
  double warmup_seconds = 1.0;      // launches before measuring, so clocks and power settle (s)
  double repetition_seconds = 0.1;  // target length of one repetition (s)
  int min_repetitions = 5;
  bool verify = true;
  std::uint64_t seed = 0x6770756c6bULL;  // input data
  // Called on the thread running the device (one per device in run_concurrent): keep it short
  // and thread-safe. The GPU keeps working meanwhile (the next repetition is already queued).
  std::function<void(const Progress&)> on_repetition;
  std::function<void(int device, Phase)> on_phase;
};

struct Repetition {
  double start_seconds = 0;  // from the start of the measured window, GPU time (s)
  double seconds = 0;        // duration (s)
  int launches = 0;
  double rate = 0;  // in Result::unit
};

struct Result {
  DeviceInfo device;
  std::string workload;  // workload_name()
  std::string variant;   // describe()
  std::string input;     // describe_input()
  RateUnit unit = RateUnit::flop_per_second;
  double work_per_launch = 0;  // FLOP or bytes
  std::vector<Repetition> repetitions;
  RateSummary rate;         // over repetitions; rate.median is the headline figure
  double overall_rate = 0;  // all work / whole window
  // The measured window on the host's steady clock (the GPU was idle just before the start and
  // finished just before the end): match telemetry samples against it.
  std::chrono::steady_clock::time_point window_start, window_end;
  Verification verification;
  // Facts worth printing: cuBLASLt algorithm, grid, workspace, … as (key, value) in order.
  std::vector<std::pair<std::string, std::string>> details;
};

// Runs `spec` on CUDA device `device` on the calling thread: prepare, warm up, measure, verify.
// A failed verification is reported in the result, not thrown.
Result run(const WorkloadSpec& spec, int device, const RunOptions& options);

struct DeviceOutcome {
  int device = -1;
  std::optional<Result> result;  // set on success
  std::exception_ptr error;      // set on failure (a gpuclk::Error, usually)
};

// Runs `spec` on every device at once, one host thread each; all devices finish preparing, then
// warm up together, then start the measured window together. A device that fails drops out
// without holding the others. Outcomes are in the order of `devices`.
std::vector<DeviceOutcome> run_concurrent(const WorkloadSpec& spec, std::span<const int> devices,
                                          const RunOptions& options);

// CUDA devices visible to this process. Throws gpuclk::Error (driver_not_loaded, gpu_not_found).
int device_count();
DeviceInfo device_info(int device);

// Whether this build has the CUDA workloads (false: everything above throws not_supported).
bool built_with_cuda();

// The CUDA runtime's version (cudaRuntimeGetVersion: 13000 = 13.0); 0 without CUDA. Never throws.
int cuda_runtime_version();

}  // namespace gpuclk::bench
