// gpuclk_sim_*: the library's own exports (see src/nvml/sim_abi.h).
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "abi_common.h"
#include "gpu_model.h"
#include "nvml/sim_abi.h"

using namespace gpuclk::sim;
using namespace gpuclk::sim::abi;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename Result, typename Body>
Result with_model(Result on_error, Body&& body) {
  Context& c = Context::get();
  std::lock_guard<std::recursive_mutex> guard(c.mutex());
  try {
    if (!c.ensure_loaded()) return on_error;
    c.sync();
    return body(c);
  } catch (const std::exception&) {
    return on_error;
  }
}

}  // namespace

GPUCLK_SIM_EXPORT double gpuclk_sim_time_scale(void) {
  return with_model(1.0, [](Context& c) { return c.speed(); });
}

GPUCLK_SIM_EXPORT double gpuclk_sim_time(void) {
  return with_model(kNaN, [](Context& c) { return c.model().now_s(); });
}

GPUCLK_SIM_EXPORT int gpuclk_sim_advance(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return -1;
  return with_model(-1, [&](Context& c) {
    c.skip(seconds);
    return 0;
  });
}

GPUCLK_SIM_EXPORT int gpuclk_sim_reset(void) {
  return with_model(-1, [](Context& c) {
    c.reset();
    return 0;
  });
}

GPUCLK_SIM_EXPORT int gpuclk_sim_gpu_truth(unsigned int index, gpuclk_sim_gpu_truth_t* out) {
  if (!out) return -1;
  return with_model(-1, [&](Context& c) {
    if (index >= c.model().gpu_count()) return -1;
    const GpuConfig& config = c.model().config(index);
    const GpuState& s = c.model().gpu(index);
    const GpuDynamics& d = s.dynamics;
    *out = {};
    out->time_s = c.model().now_s();
    out->energy_j = d.energy_j;
    out->power_w = d.power_w;
    out->power_average_w = average_power_w(s);
    out->die_c = d.die_c;
    out->sink_c = d.sink_c;
    out->sm_mhz = d.sm_mhz;
    out->memory_mhz = d.memory_mhz;
    out->event_reasons = d.event_reasons;
    out->phase_index = d.phase_index;
    out->iterations = d.iterations;
    out->total_flops = d.total_flops;
    out->total_dram_bytes = d.total_dram_bytes;
    out->total_pcie_bytes = d.total_pcie_bytes;
    out->context_active = static_cast<int>(d.context_active);
    out->lost = static_cast<int>(d.lost);
    const Phase* phase = current_phase(config, s);
    std::string name = phase ? phase->name : "off";
    std::string jobs;
    for (const InjectedJob& job : d.jobs) {
      if (job.running) jobs += (jobs.empty() ? "" : "+") + std::string(job_kinds()[job.kind].name);
    }
    if (!jobs.empty()) name = "job " + jobs;
    std::snprintf(out->phase_name, sizeof out->phase_name, "%s", name.c_str());
    return 0;
  });
}

GPUCLK_SIM_EXPORT int gpuclk_sim_gpu_settings(unsigned int index, gpuclk_sim_gpu_settings_t* out) {
  if (!out) return -1;
  return with_model(-1, [&](Context& c) {
    if (index >= c.model().gpu_count()) return -1;
    const GpuSettings& s = c.model().gpu(index).settings;
    *out = {s.locked_sm_min_mhz,     s.locked_sm_max_mhz, s.locked_memory_min_mhz,
            s.locked_memory_max_mhz, s.app_sm_mhz,        s.app_memory_mhz,
            s.power_limit_mw,        s.persistence_mode};
    return 0;
  });
}

GPUCLK_SIM_EXPORT int gpuclk_sim_host(unsigned int* cpus, unsigned int* numa_nodes) {
  if (!cpus || !numa_nodes) return -1;
  return with_model(-1, [&](Context& c) {
    *cpus = c.scenario().cpu_count;
    *numa_nodes = c.scenario().numa_nodes;
    return 0;
  });
}

GPUCLK_SIM_EXPORT double gpuclk_sim_energy_joules(unsigned int index) {
  return with_model(kNaN, [&](Context& c) {
    return index < c.model().gpu_count() ? c.model().gpu(index).dynamics.energy_j : kNaN;
  });
}

namespace {

constexpr int kCannotLoad = NVML_ERROR_UNKNOWN;

// Runs a job call for GPU `index`: NVML codes as ints (nvml/sim_abi.h).
template <typename Body>
int with_job_gpu(unsigned int index, Body&& body) {
  return with_model(static_cast<int>(kCannotLoad), [&](Context& c) {
    if (index >= c.model().gpu_count()) return static_cast<int>(NVML_ERROR_INVALID_ARGUMENT);
    return static_cast<int>(body(c, std::size_t{index}));
  });
}

}  // namespace

GPUCLK_SIM_EXPORT int gpuclk_sim_job_start(unsigned int index, const char* kind, double amount,
                                           double max_seconds, unsigned int pid,
                                           unsigned long long* job_id) {
  if (!kind || !job_id) return NVML_ERROR_INVALID_ARGUMENT;
  const auto owner = pid != 0 ? pid : static_cast<unsigned int>(::getpid());
  return with_job_gpu(index, [&](Context& c, std::size_t i) {
    std::uint64_t id = 0;
    const Status status = c.mutate(
        [&](NodeModel& m) { return m.start_job(i, kind, amount, max_seconds, owner, id); });
    if (status == Status::ok) *job_id = id;
    return to_nvml(status);
  });
}

GPUCLK_SIM_EXPORT int gpuclk_sim_job_status(unsigned int index, unsigned long long job_id,
                                            gpuclk_sim_job_t* out) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  return with_job_gpu(index, [&](Context& c, std::size_t i) {
    const InjectedJob* found = find_job(c.model().gpu(i).dynamics, job_id);
    if (!found) return NVML_ERROR_INVALID_ARGUMENT;
    const InjectedJob& job = *found;
    const JobKind& kind = job_kinds()[job.kind];
    *out = {};
    out->id = job.id;
    out->running = static_cast<int>(job.running);
    out->completed = static_cast<int>(job.completed);
    std::snprintf(out->kind, sizeof out->kind, "%s", std::string(kind.name).c_str());
    std::snprintf(out->unit, sizeof out->unit, "%s", std::string(kind.unit).c_str());
    out->amount = job.amount;
    out->done = job.done;
    out->start_s = job.start_s;
    out->end_s = job.running ? c.model().now_s() : job.end_s;
    const double elapsed = out->end_s - out->start_s;
    out->rate = elapsed > 0 ? job.done / elapsed : 0;
    out->pid = job.pid;
    out->energy_j = job.energy_j;
    out->busy_s = job.busy_s;
    return NVML_SUCCESS;
  });
}

GPUCLK_SIM_EXPORT int gpuclk_sim_job_stop(unsigned int index, unsigned long long job_id) {
  return with_job_gpu(index, [&](Context& c, std::size_t i) {
    return to_nvml(c.mutate([&](NodeModel& m) { return m.stop_job(i, job_id); }));
  });
}

GPUCLK_SIM_EXPORT const char* gpuclk_sim_job_kinds(void) {
  static const std::string names = [] {
    std::string out;
    for (const JobKind& k : job_kinds()) out += (out.empty() ? "" : ",") + std::string(k.name);
    return out;
  }();
  return names.c_str();
}

GPUCLK_SIM_EXPORT int gpuclk_sim_process_owner(unsigned int pid, char* owner, unsigned int length) {
  if (!owner) return NVML_ERROR_INVALID_ARGUMENT;
  return with_model(static_cast<int>(kCannotLoad), [&](Context& c) {
    for (std::size_t i = 0; i < c.model().gpu_count(); ++i) {
      const Process& p = c.model().config(i).workload.process;
      if (p.pid != pid) continue;
      const std::string text = p.owner.empty() ? "process:" + std::to_string(pid) : p.owner;
      if (text.size() + 1 > length) return static_cast<int>(NVML_ERROR_INSUFFICIENT_SIZE);
      std::memcpy(owner, text.c_str(), text.size() + 1);
      return static_cast<int>(NVML_SUCCESS);
    }
    return static_cast<int>(NVML_ERROR_NOT_FOUND);
  });
}

GPUCLK_SIM_EXPORT const char* gpuclk_sim_scenario_path(void) {
  static thread_local std::string path;
  return with_model<const char*>("", [&](Context& c) {
    path = c.scenario_path().string();
    return path.c_str();
  });
}

GPUCLK_SIM_EXPORT const char* gpuclk_sim_state_path(void) {
  static thread_local std::string path;
  return with_model<const char*>("", [&](Context& c) {
    path = c.state_path().string();
    return path.c_str();
  });
}

GPUCLK_SIM_EXPORT const char* gpuclk_sim_last_error(void) {
  static thread_local std::string error;
  Context& c = Context::get();
  std::lock_guard<std::recursive_mutex> guard(c.mutex());
  c.ensure_loaded();
  error = c.last_error();
  return error.c_str();
}
