// SimJobs: the simulator's jobs on demand (gpuclk_sim_job_* in src/nvml/sim_abi.h) behind a
// typed interface, so commands and layers above never resolve simulator symbols themselves.
// Available only when the loaded library is libnvml-sim.so. Thread-safe (the library is).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuclk::nvml {
class Api;
}

namespace gpuclk::gpu {

struct SimJobStatus {
  std::uint64_t id = 0;
  bool running = false;
  bool completed = false;  // all its work done (not stopped, not timed out)
  std::string kind;        // "gemm-bf16"
  std::string unit;        // "FLOP" or "B"
  double amount = 0;       // asked for; 0: no fixed amount
  double done = 0;         // in `unit`
  double start_s = 0;      // simulated seconds since power-on
  double end_s = 0;        // when it ended; the current simulated time while it runs
  double rate = 0;         // done / (end_s - start_s), `unit` per second
  unsigned pid = 0;        // the process NVML lists for it
  // Truth for attribution: the GPU energy its time slices drew (J), the seconds its kernels ran.
  double energy_j = 0;
  double busy_s = 0;
};

class SimJobs {
 public:
  // nullopt unless `api` loaded the simulator (and it exports the job entry points).
  static std::optional<SimJobs> of(const nvml::Api& api);

  // The kinds the simulator runs ("gemm-bf16", "mem-copy", …).
  std::vector<std::string> kinds() const;
  // Starts `amount` units (0: no fixed amount) of `kind` on GPU `index`, ending by itself after
  // `max_seconds` of simulated time (0: never). `pid` is the process NVML lists (0: this one).
  // Up to 4 jobs share a GPU, time-sliced. Throws Error: 2 for an unknown kind or bad amount,
  // 255 while 4 jobs run there, 15 for a lost GPU.
  std::uint64_t start(unsigned index, const std::string& kind, double amount, double max_seconds,
                      unsigned pid = 0) const;
  // Throws Error (2) for a job id the GPU does not know (a GPU keeps its last 4 jobs).
  SimJobStatus status(unsigned index, std::uint64_t id) const;
  // Ends the job now; no-op if it already ended.
  void stop(unsigned index, std::uint64_t id) const;
  // Simulated seconds since power-on.
  double time_s() const;
  // Simulated seconds per second of wall time (GPUCLK_SIM_SPEED; 1 when time stands still).
  double time_scale() const;

 private:
  struct Table;
  explicit SimJobs(const Table* table) : table_(table) {}
  const Table* table_;
};

}  // namespace gpuclk::gpu
