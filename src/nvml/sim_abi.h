// Introspection exported by libnvml-sim.so next to the NVML ABI, for gpuclk's Clock and for
// tests: what the simulated GPUs really did, and control over simulated time. C ABI; resolve
// with dlsym. Each function loads the scenario on first use; none needs nvmlInit.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

// Simulated seconds per wall second (GPUCLK_SIM_SPEED, default 1; 0 freezes time).
double gpuclk_sim_time_scale(void);
// Simulated time now, seconds since the scenario powered on. NaN if the scenario cannot load.
double gpuclk_sim_time(void);
// Jumps simulated time forward by `seconds` for every process sharing the state. 0 on success.
int gpuclk_sim_advance(double seconds);
// Powers the node on again at GPUCLK_SIM_START (settings and counters back to the scenario's).
int gpuclk_sim_reset(void);

// Ground truth for one GPU at the current simulated time.
typedef struct gpuclk_sim_gpu_truth_st {
  double time_s;
  double energy_j;         // exact integral of power (the NVML counter truncates to mJ)
  double power_w;          // instant
  double power_average_w;  // last second
  double die_c;
  double sink_c;
  unsigned int sm_mhz;
  unsigned int memory_mhz;
  unsigned long long event_reasons;
  unsigned int phase_index;       // index into the workload's phases; == count when finished
  unsigned long long iterations;  // completed passes over the phases
  double total_flops;
  double total_dram_bytes;
  double total_pcie_bytes;
  int context_active;
  int lost;
  char phase_name[64];  // "off" outside the workload
} gpuclk_sim_gpu_truth_t;

// 0 on success; -1 if the scenario cannot load or index is out of range.
int gpuclk_sim_gpu_truth(unsigned int index, gpuclk_sim_gpu_truth_t* out);
// The settings a GPU holds now, clock locks included (NVML cannot read those back): what the
// fault tests decode after each fault. 0 both for a lock's min and max: not locked.
typedef struct gpuclk_sim_gpu_settings_st {
  unsigned int locked_sm_min_mhz;
  unsigned int locked_sm_max_mhz;
  unsigned int locked_memory_min_mhz;
  unsigned int locked_memory_max_mhz;
  unsigned int app_sm_mhz;
  unsigned int app_memory_mhz;
  unsigned int power_limit_mw;
  unsigned int persistence_mode;
} gpuclk_sim_gpu_settings_t;

// 0 on success; -1 if the scenario cannot load or index is out of range.
int gpuclk_sim_gpu_settings(unsigned int index, gpuclk_sim_gpu_settings_t* out);
// The GPU's energy since power-on, joules; NaN on error.
double gpuclk_sim_energy_joules(unsigned int index);

// Jobs on demand: an amount of work of one kind that takes over a GPU (its process holds a
// context, NVML lists it) until it is done, stopped or out of time; the scenario's own workload
// on that GPU pauses meanwhile and resumes after. Up to 4 jobs share one GPU at a time,
// time-sliced (each gets an equal share of the GPU's time, as CUDA shares a GPU between
// processes without MPS); NVML lists each job's process and its SM utilization every 0.25 s
// (nvmlDeviceGetProcessUtilization). Jobs need no privilege. Kinds: gemm-bf16, gemm-fp16,
// gemm-tf32, gemm-fp32, gemm-fp8, fma (amounts in FLOP) and mem-copy, mem-triad (amounts in bytes
// of DRAM traffic, read + write). Each returns an NVML return code: 0 success, 2 invalid argument
// (unknown GPU or kind, bad amount, unknown job id), 19 in use (4 jobs run on that GPU), 15 GPU
// lost, 999 cannot load.

// Starts `amount` units of `kind` on GPU `index` (amount 0: no fixed amount, runs until
// stopped or max_seconds); it ends by itself after `max_seconds` of simulated time (0: never;
// at least one of the two must be given). `pid` is the process NVML lists (0: the caller's).
int gpuclk_sim_job_start(unsigned int index, const char* kind, double amount, double max_seconds,
                         unsigned int pid, unsigned long long* job_id);

typedef struct gpuclk_sim_job_st {
  unsigned long long id;
  int running;       // 1 while it runs
  int completed;     // 1 once all its work was done; 0 while running, stopped or timed out
  char kind[32];     // "gemm-bf16"
  char unit[8];      // "FLOP" or "B"
  double amount;     // asked for (0: no fixed amount)
  double done;       // done so far, in `unit`
  double start_s;    // simulated time it started
  double end_s;      // simulated time it ended; the current time while it runs
  double rate;       // done / (end_s - start_s): its own mean rate, `unit` per second
  unsigned int pid;  // the process NVML lists for it
  // Truth for attribution: the GPU's energy its time slices drew, joules (each 10 ms tick's
  // energy split over the jobs that ran in it by time share × the board power of each job's own
  // activity), and the seconds its kernels ran.
  double energy_j;
  double busy_s;
} gpuclk_sim_job_t;

// The state of job `job_id` at the current simulated time (a GPU keeps its last 4 jobs).
int gpuclk_sim_job_status(unsigned int index, unsigned long long job_id, gpuclk_sim_job_t* out);
// Ends job `job_id` now (no-op if it already ended).
int gpuclk_sim_job_stop(unsigned int index, unsigned long long job_id);
// The job kinds, comma separated.
const char* gpuclk_sim_job_kinds(void);

// Who process `pid` works for, when it is one of the scenario's processes: "slurm:1234",
// "pod:UID", "container:ID", "session:N" (the scenario's process keys), "process:PID" when the
// scenario names no owner. Copied with its NUL into `owner` (`length` bytes). NVML codes: 0
// success, 2 NULL owner, 6 not found (not a scenario process: a process of this host, such as
// a job's), 7 insufficient size, 999 cannot load.
int gpuclk_sim_process_owner(unsigned int pid, char* owner, unsigned int length);

// The simulated host: logical CPUs and NUMA nodes of the scenario ([node] cpu_count, numa_nodes;
// the GPUs' CPU affinity splits the CPUs evenly over the nodes). 0 on success, -1 if the scenario
// cannot load or an argument is NULL. *cpus is 0 when the scenario gives none.
int gpuclk_sim_host(unsigned int* cpus, unsigned int* numa_nodes);

// Paths in use, and the last load error ("" if none). Valid until the next call.
const char* gpuclk_sim_scenario_path(void);
const char* gpuclk_sim_state_path(void);
const char* gpuclk_sim_last_error(void);

#ifdef __cplusplus
}
#endif
