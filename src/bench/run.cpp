// Orchestration of a run on one device and on several at once, and the device facts a result
// carries. One host thread per device: CUDA's current device is per thread, and each device's
// timing loop must wait on its own events without holding up the others.
#include <barrier>
#include <cstdio>
#include <thread>

#include "bench/detail/cuda_resources.h"
#include "bench/detail/kernel.h"
#include "bench/detail/timed_loop.h"
#include "bench/plan.h"
#include "bench/workload.h"

namespace gpuclk::bench {

namespace {

void validate(const RunOptions& options) {
  if (!(options.seconds > 0)) throw bad_argument("bench: --seconds must be positive");
  if (!(options.warmup_seconds >= 0)) throw bad_argument("bench: warm-up must not be negative");
  if (!(options.repetition_seconds > 0)) {
    throw bad_argument("bench: repetition length must be positive");
  }
  if (options.min_repetitions < 1) throw bad_argument("bench: need at least one repetition");
}

std::unique_ptr<detail::Kernel> make_kernel(const WorkloadSpec& spec, const DeviceInfo& device,
                                            const RunOptions& options, cudaStream_t stream) {
  if (const auto* gemm = std::get_if<GemmSpec>(&spec)) {
    return detail::make_gemm(*gemm, device, options, stream);
  }
  if (const auto* mem = std::get_if<MemSpec>(&spec)) {
    return detail::make_mem(*mem, device, options, stream);
  }
  return detail::make_fma(std::get<FmaSpec>(spec), device, options, stream);
}

std::string format_seconds(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", seconds);
  return buffer;
}

}  // namespace

int device_count() {
  int count = 0;
  GPUCLK_CUDA_CHECK(cudaGetDeviceCount(&count));
  return count;
}

DeviceInfo device_info(int device) {
  cudaDeviceProp prop{};
  GPUCLK_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceInfo info;
  info.ordinal = device;
  info.name = prop.name;
  info.sm_count = prop.multiProcessorCount;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.memory_bytes = prop.totalGlobalMem;
  char pci[32];
  std::snprintf(pci, sizeof pci, "%08X:%02X:%02X.0", unsigned(prop.pciDomainID),
                unsigned(prop.pciBusID), unsigned(prop.pciDeviceID));
  info.pci_bus_id = pci;
  // NVML prints the same 16 bytes as GPU-8-4-4-4-12 lowercase hex.
  std::string uuid = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) uuid += '-';
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x",
                  unsigned(static_cast<unsigned char>(prop.uuid.bytes[i])));
    uuid += hex;
  }
  info.uuid = uuid;
  return info;
}

bool built_with_cuda() { return true; }

int cuda_runtime_version() {
  int version = 0;
  return cudaRuntimeGetVersion(&version) == cudaSuccess ? version : 0;
}

Result run(const WorkloadSpec& spec, int device, const RunOptions& options) {
  validate(spec);
  validate(options);
  // Declared first so it is destroyed last: everything below belongs to `device`.
  detail::DeviceGuard guard(device);
  const DeviceInfo info = device_info(device);
  detail::Stream stream;
  auto phase = [&](Phase p) {
    if (options.on_phase) options.on_phase(device, p);
  };

  std::unique_ptr<detail::Kernel> kernel = make_kernel(spec, info, options, stream.get());
  phase(Phase::prepared);
  const double per_launch =
      detail::warm_up(*kernel, stream.get(), options.warmup_seconds, options.repetition_seconds);
  const MeasurementPlan plan = plan_measurement(
      per_launch, options.seconds, options.repetition_seconds, options.min_repetitions);
  phase(Phase::warmed_up);
  detail::TimedWindow window =
      detail::measure(*kernel, stream.get(), plan, device, options.on_repetition);
  phase(Phase::measured);

  Result result;
  result.device = info;
  result.workload = workload_name(spec);
  result.variant = describe(spec);
  result.input = describe_input(spec);
  result.unit = kernel->unit();
  result.work_per_launch = kernel->work_per_launch();
  std::vector<double> rates;
  rates.reserve(window.repetitions.size());
  for (const Repetition& r : window.repetitions) rates.push_back(r.rate);
  result.rate = summarize(rates);
  const double launches = double(plan.launches_per_repetition) * plan.repetitions;
  result.overall_rate = window.seconds > 0 ? result.work_per_launch * launches / window.seconds : 0;
  result.repetitions = std::move(window.repetitions);
  result.window_start = window.start;
  result.window_end = window.end;
  if (options.verify) result.verification = kernel->verify(stream.get());
  result.details = kernel->details();
  result.details.emplace_back("launches_per_repetition",
                              std::to_string(plan.launches_per_repetition));
  result.details.emplace_back("seconds_per_launch_after_warmup", format_seconds(per_launch));
  return result;
}

std::vector<DeviceOutcome> run_concurrent(const WorkloadSpec& spec, std::span<const int> devices,
                                          const RunOptions& options) {
  validate(spec);
  validate(options);
  std::vector<DeviceOutcome> outcomes(devices.size());
  // Every device arrives at the barrier after preparing and after warming up; one that fails
  // drops out, which lowers the count the others wait for.
  std::barrier sync(std::ptrdiff_t(devices.size()));
  auto work = [&](std::size_t slot) {
    DeviceOutcome& outcome = outcomes[slot];
    outcome.device = devices[slot];
    int arrivals_left = 2;
    RunOptions mine = options;
    mine.on_phase = [&](int device, Phase p) {
      if (options.on_phase) options.on_phase(device, p);
      if (p == Phase::prepared || p == Phase::warmed_up) {
        --arrivals_left;
        sync.arrive_and_wait();
      }
    };
    try {
      outcome.result = run(spec, outcome.device, mine);
    } catch (...) {
      outcome.error = std::current_exception();
      if (arrivals_left > 0) (void)sync.arrive_and_drop();
    }
  };
  std::vector<std::jthread> threads;
  threads.reserve(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) threads.emplace_back(work, i);
  threads.clear();  // joins
  return outcomes;
}

}  // namespace gpuclk::bench
