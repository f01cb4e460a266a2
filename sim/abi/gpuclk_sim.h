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
// The GPU's energy since power-on, joules; NaN on error.
double gpuclk_sim_energy_joules(unsigned int index);

// Paths in use, and the last load error ("" if none). Valid until the next call.
const char* gpuclk_sim_scenario_path(void);
const char* gpuclk_sim_state_path(void);
const char* gpuclk_sim_last_error(void);

#ifdef __cplusplus
}
#endif
