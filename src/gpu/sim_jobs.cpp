#include "gpu/sim_jobs.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <sstream>

#include "nvml/api.h"
#include "nvml/sim_abi.h"
#include "util/error.h"

namespace gpuclk::gpu {

using nvml::Api;

struct SimJobs::Table {
  decltype(&gpuclk_sim_job_start) start = nullptr;
  decltype(&gpuclk_sim_job_status) status = nullptr;
  decltype(&gpuclk_sim_job_stop) stop = nullptr;
  decltype(&gpuclk_sim_job_kinds) kinds = nullptr;
  decltype(&gpuclk_sim_time) time = nullptr;
  double (*time_scale)() = nullptr;  // gpuclk_sim_time_scale
};

namespace {

// Every code the job entry points return is an NVML return code.
[[noreturn]] void fail(int code, const std::string& what) {
  switch (code) {
    case NVML_ERROR_INVALID_ARGUMENT:
      throw Error(ExitCode::bad_argument, what);
    case NVML_ERROR_GPU_IS_LOST:
      throw Error(ExitCode::gpu_lost, what + ": the GPU is lost");
    default:
      throw Error(ExitCode::other, fmt::format("{}: simulator error {}", what, code));
  }
}

template <class Fn>
Fn resolve(const Api& api, const char* name) {
  return reinterpret_cast<Fn>(api.simulator_symbol(name));
}

}  // namespace

std::optional<SimJobs> SimJobs::of(const Api& api) {
  if (!api.simulated()) return std::nullopt;
  // One table per loaded library (an Api may be opened more than once in a process).
  static std::mutex mutex;
  static std::map<const Api*, Table> tables;
  std::lock_guard<std::mutex> guard(mutex);
  Table t;
  t.start = resolve<decltype(t.start)>(api, "gpuclk_sim_job_start");
  t.status = resolve<decltype(t.status)>(api, "gpuclk_sim_job_status");
  t.stop = resolve<decltype(t.stop)>(api, "gpuclk_sim_job_stop");
  t.kinds = resolve<decltype(t.kinds)>(api, "gpuclk_sim_job_kinds");
  t.time = resolve<decltype(t.time)>(api, "gpuclk_sim_time");
  t.time_scale = resolve<decltype(t.time_scale)>(api, "gpuclk_sim_time_scale");
  if (!t.start || !t.status || !t.stop || !t.kinds || !t.time) return std::nullopt;
  tables[&api] = t;
  return SimJobs(&tables[&api]);
}

double SimJobs::time_scale() const {
  const double scale = table_->time_scale ? table_->time_scale() : 1;
  return scale > 0 ? scale : 1;
}

std::vector<std::string> SimJobs::kinds() const {
  std::vector<std::string> out;
  std::stringstream list(table_->kinds());
  for (std::string k; std::getline(list, k, ',');) out.push_back(k);
  return out;
}

std::uint64_t SimJobs::start(unsigned index, const std::string& kind, double amount,
                             double max_seconds, unsigned pid) const {
  unsigned long long id = 0;
  const int rc = table_->start(index, kind.c_str(), amount, max_seconds, pid, &id);
  if (rc == NVML_ERROR_IN_USE) {
    throw Error(ExitCode::other,
                fmt::format("GPU {} already runs 4 simulated jobs (the most one GPU shares); wait "
                            "for one or stop one",
                            index));
  }
  if (rc != NVML_SUCCESS) {
    fail(rc, fmt::format("cannot start simulated job '{}' (amount {}, max {} s) on GPU {}", kind,
                         amount, max_seconds, index));
  }
  return id;
}

SimJobStatus SimJobs::status(unsigned index, std::uint64_t id) const {
  gpuclk_sim_job_t raw{};
  const int rc = table_->status(index, id, &raw);
  if (rc != NVML_SUCCESS) fail(rc, fmt::format("no simulated job {} on GPU {}", id, index));
  SimJobStatus s;
  s.id = raw.id;
  s.running = raw.running != 0;
  s.completed = raw.completed != 0;
  s.kind = raw.kind;
  s.unit = raw.unit;
  s.amount = raw.amount;
  s.done = raw.done;
  s.start_s = raw.start_s;
  s.end_s = raw.end_s;
  s.rate = raw.rate;
  s.pid = raw.pid;
  s.energy_j = raw.energy_j;
  s.busy_s = raw.busy_s;
  return s;
}

void SimJobs::stop(unsigned index, std::uint64_t id) const {
  const int rc = table_->stop(index, id);
  if (rc != NVML_SUCCESS)
    fail(rc, fmt::format("cannot stop simulated job {} on GPU {}", id, index));
}

double SimJobs::time_s() const { return table_->time(); }

}  // namespace gpuclk::gpu
