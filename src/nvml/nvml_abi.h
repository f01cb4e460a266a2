// Our own declarations of the part of the NVML C ABI gpuclk uses.
//
// Written from NVIDIA's public NVML API reference (docs.nvidia.com/deploy/nvml-api); no NVIDIA
// header is copied. Values and layouts must match the driver's libnvidia-ml.so.1 exactly: they
// are the wire format between gpuclk, the real library and libnvml-sim.so. Only src/nvml/ and
// sim/abi/ include this file; everything above speaks gpu::Device and unit types.
#pragma once

#include <cstddef>

extern "C" {

// Every enum below has a fixed underlying type (int, the size a C enum has in the driver's ABI),
// so any value a C caller passes is a value of the type: the simulator checks it and answers
// INVALID_ARGUMENT, instead of loading a value the enum cannot hold (undefined behaviour, which
// UBSan reported for nvmlDeviceSetPersistenceMode(device, 7)).

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;

typedef enum nvmlReturn_enum : int {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_ENABLED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef enum nvmlClockType_enum : int {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3
} nvmlClockType_t;

typedef enum nvmlClockId_enum : int {
  NVML_CLOCK_ID_CURRENT = 0,
  NVML_CLOCK_ID_APP_CLOCK_TARGET = 1,
  NVML_CLOCK_ID_APP_CLOCK_DEFAULT = 2,
  NVML_CLOCK_ID_CUSTOMER_BOOST_MAX = 3
} nvmlClockId_t;

typedef enum nvmlEnableState_enum : int {
  NVML_FEATURE_DISABLED = 0,
  NVML_FEATURE_ENABLED = 1
} nvmlEnableState_t;

// P0 (max performance) .. P15 (min); 32 = unknown.
typedef enum nvmlPStates_enum : int {
  NVML_PSTATE_0 = 0,
  NVML_PSTATE_15 = 15,
  NVML_PSTATE_UNKNOWN = 32
} nvmlPstates_t;

typedef enum nvmlTemperatureSensors_enum : int {
  NVML_TEMPERATURE_GPU = 0
} nvmlTemperatureSensors_t;

typedef enum nvmlTemperatureThresholds_enum : int {
  NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,
  NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,
  NVML_TEMPERATURE_THRESHOLD_MEM_MAX = 2,
  NVML_TEMPERATURE_THRESHOLD_GPU_MAX = 3,
  NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MIN = 4,
  NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_CURR = 5,
  NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MAX = 6
} nvmlTemperatureThresholds_t;

typedef enum nvmlComputeMode_enum : int {
  NVML_COMPUTEMODE_DEFAULT = 0,
  NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,
  NVML_COMPUTEMODE_PROHIBITED = 2,
  NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3
} nvmlComputeMode_t;

typedef enum nvmlPcieUtilCounter_enum : int {
  NVML_PCIE_UTIL_TX_BYTES = 0,
  NVML_PCIE_UTIL_RX_BYTES = 1
} nvmlPcieUtilCounter_t;

typedef enum nvmlPerfPolicyType_enum : int {
  NVML_PERF_POLICY_POWER = 0,
  NVML_PERF_POLICY_THERMAL = 1,
  NVML_PERF_POLICY_SYNC_BOOST = 2,
  NVML_PERF_POLICY_BOARD_LIMIT = 3,
  NVML_PERF_POLICY_LOW_UTILIZATION = 4,
  NVML_PERF_POLICY_RELIABILITY = 5,
  NVML_PERF_POLICY_TOTAL_APP_CLOCKS = 10,
  NVML_PERF_POLICY_TOTAL_BASE_CLOCKS = 11
} nvmlPerfPolicyType_t;

typedef enum nvmlGpuTopologyLevel_enum : int {
  NVML_TOPOLOGY_INTERNAL = 0,
  NVML_TOPOLOGY_SINGLE = 10,
  NVML_TOPOLOGY_MULTIPLE = 20,
  NVML_TOPOLOGY_HOSTBRIDGE = 30,
  NVML_TOPOLOGY_NODE = 40,
  NVML_TOPOLOGY_SYSTEM = 50
} nvmlGpuTopologyLevel_t;

typedef enum nvmlMemoryErrorType_enum : int {
  NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
  NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
} nvmlMemoryErrorType_t;
typedef enum nvmlEccCounterType_enum : int {
  NVML_VOLATILE_ECC = 0,
  NVML_AGGREGATE_ECC = 1
} nvmlEccCounterType_t;

// nvmlDeviceGetRetiredPages filters by cause. An integer with named values (not an enum type), so
// a caller's out-of-range cause is a value to refuse, not undefined behaviour.
typedef unsigned int nvmlPageRetirementCause_t;
enum : unsigned int {
  NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
  NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1,
  NVML_PAGE_RETIREMENT_CAUSE_COUNT = 2
};

// nvmlDeviceGetArchitecture values.
typedef unsigned int nvmlDeviceArchitecture_t;
enum {
  NVML_DEVICE_ARCH_KEPLER = 2,
  NVML_DEVICE_ARCH_MAXWELL = 3,
  NVML_DEVICE_ARCH_PASCAL = 4,
  NVML_DEVICE_ARCH_VOLTA = 5,
  NVML_DEVICE_ARCH_TURING = 6,
  NVML_DEVICE_ARCH_AMPERE = 7,
  NVML_DEVICE_ARCH_ADA = 8,
  NVML_DEVICE_ARCH_HOPPER = 9,
  NVML_DEVICE_ARCH_BLACKWELL = 10,
  NVML_DEVICE_ARCH_UNKNOWN = 0xffffffff
};

// Clock event ("throttle") reason bits, nvmlDeviceGetCurrentClocksEventReasons.
enum : unsigned long long {
  nvmlClocksEventReasonGpuIdle = 0x1ULL,
  nvmlClocksEventReasonApplicationsClocksSetting = 0x2ULL,
  nvmlClocksEventReasonSwPowerCap = 0x4ULL,
  nvmlClocksThrottleReasonHwSlowdown = 0x8ULL,
  nvmlClocksEventReasonSyncBoost = 0x10ULL,
  nvmlClocksEventReasonSwThermalSlowdown = 0x20ULL,
  nvmlClocksThrottleReasonHwThermalSlowdown = 0x40ULL,
  nvmlClocksThrottleReasonHwPowerBrakeSlowdown = 0x80ULL,
  nvmlClocksEventReasonDisplayClockSetting = 0x100ULL
};

#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80
#define NVML_NVLINK_MAX_LINKS 18

typedef struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  // combined 16-bit device id and 16-bit vendor id
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];  // "domain:bus:device.function", hex
} nvmlPciInfo_t;

typedef struct nvmlUtilization_st {
  unsigned int gpu;     // percent of time a kernel ran, over the driver's sample period
  unsigned int memory;  // percent of time device memory was read or written
} nvmlUtilization_t;

typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlViolationTime_st {
  unsigned long long referenceTime;  // timestamp, µs
  unsigned long long violationTime;  // accumulated time the policy held clocks down, ns
} nvmlViolationTime_t;

typedef struct nvmlProcessInfo_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef enum nvmlValueType_enum : int {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_SIGNED_INT = 5,
  NVML_VALUE_TYPE_UNSIGNED_SHORT = 6
} nvmlValueType_t;

typedef union nvmlValue_st {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;  // µs since epoch
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;

// GPM (Hopper and later): two samples in time give metrics over the window between them.
#define NVML_GPM_SUPPORT_VERSION 1
#define NVML_GPM_METRICS_GET_VERSION 1
// The library reads numMetrics entries; our array only has to hold as many as we ask for.
#define GPUCLK_GPM_METRICS_CAPACITY 32

typedef enum nvmlGpmMetricId_enum : int {
  NVML_GPM_METRIC_GRAPHICS_UTIL = 1,
  NVML_GPM_METRIC_SM_UTIL = 2,
  NVML_GPM_METRIC_SM_OCCUPANCY = 3,
  NVML_GPM_METRIC_INTEGER_UTIL = 4,
  NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
  NVML_GPM_METRIC_DFMA_TENSOR_UTIL = 6,
  NVML_GPM_METRIC_HMMA_TENSOR_UTIL = 7,
  NVML_GPM_METRIC_IMMA_TENSOR_UTIL = 9,
  NVML_GPM_METRIC_DRAM_BW_UTIL = 10,
  NVML_GPM_METRIC_FP64_UTIL = 11,
  NVML_GPM_METRIC_FP32_UTIL = 12,
  NVML_GPM_METRIC_FP16_UTIL = 13
} nvmlGpmMetricId_t;

typedef struct nvmlGpmSupport_st {
  unsigned int version;
  unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

typedef struct nvmlGpmMetric_st {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;  // percent for the utilization metrics
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
} nvmlGpmMetric_t;

typedef struct nvmlGpmMetricsGet_st {
  unsigned int version;
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[GPUCLK_GPM_METRICS_CAPACITY];
} nvmlGpmMetricsGet_t;

const char* nvmlErrorString(nvmlReturn_t result);

}  // extern "C"

// Every NVML entry point gpuclk may call: X(name, parameter list, argument names).
// REQUIRED ones must resolve or the library is rejected; OPTIONAL ones disable a feature only.
// The loader (src/nvml/api.cpp) and the simulator (sim/abi/) are both written against this list,
// so a signature mismatch between them is a compile error, not a crash.
#define GPUCLK_NVML_REQUIRED(X)                                                                  \
  X(nvmlInit_v2, (void), ())                                                                     \
  X(nvmlShutdown, (void), ())                                                                    \
  X(nvmlDeviceGetCount_v2, (unsigned int* count), (count))                                       \
  X(nvmlDeviceGetHandleByIndex_v2, (unsigned int index, nvmlDevice_t* device), (index, device))  \
  X(nvmlDeviceGetName, (nvmlDevice_t device, char* name, unsigned int length),                   \
    (device, name, length))                                                                      \
  X(nvmlDeviceGetUUID, (nvmlDevice_t device, char* uuid, unsigned int length),                   \
    (device, uuid, length))                                                                      \
  X(nvmlDeviceGetClockInfo, (nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock),    \
    (device, type, clock))                                                                       \
  X(nvmlDeviceGetMaxClockInfo, (nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock), \
    (device, type, clock))

#define GPUCLK_NVML_OPTIONAL(X)                                                                    \
  X(nvmlSystemGetDriverVersion, (char* version, unsigned int length), (version, length))           \
  X(nvmlSystemGetNVMLVersion, (char* version, unsigned int length), (version, length))             \
  X(nvmlSystemGetCudaDriverVersion_v2, (int* version), (version))                                  \
  X(nvmlSystemGetProcessName, (unsigned int pid, char* name, unsigned int length),                 \
    (pid, name, length))                                                                           \
  X(nvmlDeviceGetHandleByUUID, (const char* uuid, nvmlDevice_t* device), (uuid, device))           \
  X(nvmlDeviceGetHandleByPciBusId_v2, (const char* bus_id, nvmlDevice_t* device),                  \
    (bus_id, device))                                                                              \
  X(nvmlDeviceGetIndex, (nvmlDevice_t device, unsigned int* index), (device, index))               \
  X(nvmlDeviceGetSerial, (nvmlDevice_t device, char* serial, unsigned int length),                 \
    (device, serial, length))                                                                      \
  X(nvmlDeviceGetPciInfo_v3, (nvmlDevice_t device, nvmlPciInfo_t * pci), (device, pci))            \
  X(nvmlDeviceGetArchitecture, (nvmlDevice_t device, nvmlDeviceArchitecture_t * arch),             \
    (device, arch))                                                                                \
  X(nvmlDeviceGetCudaComputeCapability, (nvmlDevice_t device, int* major, int* minor),             \
    (device, major, minor))                                                                        \
  X(nvmlDeviceGetNumGpuCores, (nvmlDevice_t device, unsigned int* cores), (device, cores))         \
  X(nvmlDeviceGetMemoryBusWidth, (nvmlDevice_t device, unsigned int* bits), (device, bits))        \
  X(nvmlDeviceGetMemoryInfo, (nvmlDevice_t device, nvmlMemory_t * memory), (device, memory))       \
  X(nvmlDeviceGetApplicationsClock,                                                                \
    (nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock), (device, type, clock))       \
  X(nvmlDeviceGetDefaultApplicationsClock,                                                         \
    (nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock), (device, type, clock))       \
  X(nvmlDeviceGetMaxCustomerBoostClock,                                                            \
    (nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock), (device, type, clock))       \
  X(nvmlDeviceGetSupportedMemoryClocks,                                                            \
    (nvmlDevice_t device, unsigned int* count, unsigned int* clocks), (device, count, clocks))     \
  X(nvmlDeviceGetSupportedGraphicsClocks,                                                          \
    (nvmlDevice_t device, unsigned int memory_clock, unsigned int* count, unsigned int* clocks),   \
    (device, memory_clock, count, clocks))                                                         \
  X(nvmlDeviceGetMinMaxClockOfPState,                                                              \
    (nvmlDevice_t device, nvmlClockType_t type, nvmlPstates_t pstate, unsigned int* min,           \
     unsigned int* max),                                                                           \
    (device, type, pstate, min, max))                                                              \
  X(nvmlDeviceGetPerformanceState, (nvmlDevice_t device, nvmlPstates_t * pstate),                  \
    (device, pstate))                                                                              \
  X(nvmlDeviceGetCurrentClocksEventReasons, (nvmlDevice_t device, unsigned long long* reasons),    \
    (device, reasons))                                                                             \
  X(nvmlDeviceGetSupportedClocksEventReasons, (nvmlDevice_t device, unsigned long long* reasons),  \
    (device, reasons))                                                                             \
  X(nvmlDeviceGetViolationStatus,                                                                  \
    (nvmlDevice_t device, nvmlPerfPolicyType_t policy, nvmlViolationTime_t * time),                \
    (device, policy, time))                                                                        \
  X(nvmlDeviceGetPowerUsage, (nvmlDevice_t device, unsigned int* milliwatts),                      \
    (device, milliwatts))                                                                          \
  X(nvmlDeviceGetPowerManagementLimit, (nvmlDevice_t device, unsigned int* milliwatts),            \
    (device, milliwatts))                                                                          \
  X(nvmlDeviceGetPowerManagementLimitConstraints,                                                  \
    (nvmlDevice_t device, unsigned int* min_milliwatts, unsigned int* max_milliwatts),             \
    (device, min_milliwatts, max_milliwatts))                                                      \
  X(nvmlDeviceGetPowerManagementDefaultLimit, (nvmlDevice_t device, unsigned int* milliwatts),     \
    (device, milliwatts))                                                                          \
  X(nvmlDeviceGetEnforcedPowerLimit, (nvmlDevice_t device, unsigned int* milliwatts),              \
    (device, milliwatts))                                                                          \
  X(nvmlDeviceGetTotalEnergyConsumption, (nvmlDevice_t device, unsigned long long* millijoules),   \
    (device, millijoules))                                                                         \
  X(nvmlDeviceGetTemperature,                                                                      \
    (nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int* celsius),                 \
    (device, sensor, celsius))                                                                     \
  X(nvmlDeviceGetTemperatureThreshold,                                                             \
    (nvmlDevice_t device, nvmlTemperatureThresholds_t threshold, unsigned int* celsius),           \
    (device, threshold, celsius))                                                                  \
  X(nvmlDeviceGetFanSpeed, (nvmlDevice_t device, unsigned int* percent), (device, percent))        \
  X(nvmlDeviceGetUtilizationRates, (nvmlDevice_t device, nvmlUtilization_t * utilization),         \
    (device, utilization))                                                                         \
  X(nvmlDeviceGetPersistenceMode, (nvmlDevice_t device, nvmlEnableState_t * mode), (device, mode)) \
  X(nvmlDeviceGetComputeMode, (nvmlDevice_t device, nvmlComputeMode_t * mode), (device, mode))     \
  X(nvmlDeviceGetEccMode,                                                                          \
    (nvmlDevice_t device, nvmlEnableState_t * current, nvmlEnableState_t * pending),               \
    (device, current, pending))                                                                    \
  X(nvmlDeviceGetRemappedRows,                                                                     \
    (nvmlDevice_t device, unsigned int* corrected_rows, unsigned int* uncorrected_rows,            \
     unsigned int* is_pending, unsigned int* failure_occurred),                                    \
    (device, corrected_rows, uncorrected_rows, is_pending, failure_occurred))                      \
  X(nvmlDeviceGetRetiredPages,                                                                     \
    (nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int* page_count,               \
     unsigned long long* addresses),                                                               \
    (device, cause, page_count, addresses))                                                        \
  X(nvmlDeviceGetRetiredPagesPendingStatus, (nvmlDevice_t device, nvmlEnableState_t * is_pending), \
    (device, is_pending))                                                                          \
  X(nvmlDeviceGetTotalEccErrors,                                                                   \
    (nvmlDevice_t device, nvmlMemoryErrorType_t type, nvmlEccCounterType_t counter,                \
     unsigned long long* count),                                                                   \
    (device, type, counter, count))                                                                \
  X(nvmlDeviceGetCurrPcieLinkGeneration, (nvmlDevice_t device, unsigned int* gen), (device, gen))  \
  X(nvmlDeviceGetMaxPcieLinkGeneration, (nvmlDevice_t device, unsigned int* gen), (device, gen))   \
  X(nvmlDeviceGetGpuMaxPcieLinkGeneration, (nvmlDevice_t device, unsigned int* gen),               \
    (device, gen))                                                                                 \
  X(nvmlDeviceGetCurrPcieLinkWidth, (nvmlDevice_t device, unsigned int* width), (device, width))   \
  X(nvmlDeviceGetMaxPcieLinkWidth, (nvmlDevice_t device, unsigned int* width), (device, width))    \
  X(nvmlDeviceGetPcieThroughput,                                                                   \
    (nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int* kilobytes_per_second),      \
    (device, counter, kilobytes_per_second))                                                       \
  X(nvmlDeviceGetTopologyCommonAncestor,                                                           \
    (nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuTopologyLevel_t * level),                  \
    (device1, device2, level))                                                                     \
  X(nvmlDeviceGetNvLinkState, (nvmlDevice_t device, unsigned int link, nvmlEnableState_t* active), \
    (device, link, active))                                                                        \
  X(nvmlDeviceGetNvLinkRemotePciInfo_v2,                                                           \
    (nvmlDevice_t device, unsigned int link, nvmlPciInfo_t* pci), (device, link, pci))             \
  X(nvmlDeviceGetNvLinkVersion, (nvmlDevice_t device, unsigned int link, unsigned int* version),   \
    (device, link, version))                                                                       \
  X(nvmlDeviceGetNvLinkErrorCounter,                                                               \
    (nvmlDevice_t device, unsigned int link, nvmlNvLinkErrorCounter_t counter,                     \
     unsigned long long* value),                                                                   \
    (device, link, counter, value))                                                                \
  X(nvmlDeviceGetNvLinkRemoteDeviceType,                                                           \
    (nvmlDevice_t device, unsigned int link, nvmlIntNvLinkDeviceType_t* type),                     \
    (device, link, type))                                                                          \
  X(nvmlDeviceGetCpuAffinity,                                                                      \
    (nvmlDevice_t device, unsigned int cpu_set_size, unsigned long* cpu_set),                      \
    (device, cpu_set_size, cpu_set))                                                               \
  X(nvmlDeviceGetNumaNodeId, (nvmlDevice_t device, unsigned int* node), (device, node))            \
  X(nvmlDeviceGetComputeRunningProcesses_v3,                                                       \
    (nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_t* infos), (device, count, infos))  \
  X(nvmlDeviceGetProcessUtilization,                                                               \
    (nvmlDevice_t device, nvmlProcessUtilizationSample_t * samples, unsigned int* count,           \
     unsigned long long last_seen_us),                                                             \
    (device, samples, count, last_seen_us))                                                        \
  X(nvmlDeviceGetFieldValues, (nvmlDevice_t device, int count, nvmlFieldValue_t* values),          \
    (device, count, values))                                                                       \
  X(nvmlGpmQueryDeviceSupport, (nvmlDevice_t device, nvmlGpmSupport_t * support),                  \
    (device, support))                                                                             \
  X(nvmlGpmSampleAlloc, (nvmlGpmSample_t * sample), (sample))                                      \
  X(nvmlGpmSampleFree, (nvmlGpmSample_t sample), (sample))                                         \
  X(nvmlGpmSampleGet, (nvmlDevice_t device, nvmlGpmSample_t sample), (device, sample))             \
  X(nvmlGpmMetricsGet, (nvmlGpmMetricsGet_t * metrics), (metrics))                                 \
  X(nvmlDeviceSetPersistenceMode, (nvmlDevice_t device, nvmlEnableState_t mode), (device, mode))   \
  X(nvmlDeviceSetApplicationsClocks,                                                               \
    (nvmlDevice_t device, unsigned int memory_mhz, unsigned int graphics_mhz),                     \
    (device, memory_mhz, graphics_mhz))                                                            \
  X(nvmlDeviceResetApplicationsClocks, (nvmlDevice_t device), (device))                            \
  X(nvmlDeviceSetGpuLockedClocks,                                                                  \
    (nvmlDevice_t device, unsigned int min_mhz, unsigned int max_mhz), (device, min_mhz, max_mhz)) \
  X(nvmlDeviceResetGpuLockedClocks, (nvmlDevice_t device), (device))                               \
  X(nvmlDeviceSetMemoryLockedClocks,                                                               \
    (nvmlDevice_t device, unsigned int min_mhz, unsigned int max_mhz), (device, min_mhz, max_mhz)) \
  X(nvmlDeviceResetMemoryLockedClocks, (nvmlDevice_t device), (device))                            \
  X(nvmlDeviceSetPowerManagementLimit, (nvmlDevice_t device, unsigned int milliwatts),             \
    (device, milliwatts))                                                                          \
  X(nvmlDeviceGetBAR1MemoryInfo, (nvmlDevice_t device, struct nvmlBAR1Memory_st * bar1),           \
    (device, bar1))                                                                                \
  X(nvmlDeviceGetConfComputeProtectedMemoryUsage, (nvmlDevice_t device, nvmlMemory_t * memory),    \
    (device, memory))                                                                              \
  X(nvmlDeviceGetEncoderUtilization,                                                               \
    (nvmlDevice_t device, unsigned int* percent, unsigned int* sampling_period_us),                \
    (device, percent, sampling_period_us))                                                         \
  X(nvmlDeviceGetDecoderUtilization,                                                               \
    (nvmlDevice_t device, unsigned int* percent, unsigned int* sampling_period_us),                \
    (device, percent, sampling_period_us))                                                         \
  X(nvmlDeviceGetJpgUtilization,                                                                   \
    (nvmlDevice_t device, unsigned int* percent, unsigned int* sampling_period_us),                \
    (device, percent, sampling_period_us))                                                         \
  X(nvmlDeviceGetOfaUtilization,                                                                   \
    (nvmlDevice_t device, unsigned int* percent, unsigned int* sampling_period_us),                \
    (device, percent, sampling_period_us))                                                         \
  X(nvmlDeviceGetSupportedEventTypes, (nvmlDevice_t device, unsigned long long* types),            \
    (device, types))                                                                               \
  X(nvmlDeviceRegisterEvents, (nvmlDevice_t device, unsigned long long types, nvmlEventSet_t set), \
    (device, types, set))                                                                          \
  X(nvmlEventSetCreate, (nvmlEventSet_t * set), (set))                                             \
  X(nvmlEventSetFree, (nvmlEventSet_t set), (set))                                                 \
  X(nvmlEventSetWait_v2, (nvmlEventSet_t set, nvmlEventData_t * data, unsigned int timeout_ms),    \
    (set, data, timeout_ms))

// Every entry point above returns nvmlReturn_t; nvmlErrorString (const char*) is declared apart.
#define GPUCLK_NVML_ALL(X) GPUCLK_NVML_REQUIRED(X) GPUCLK_NVML_OPTIONAL(X)

// Symbolic values nvmlDeviceSetGpuLockedClocks accepts instead of MHz (driver ≥ 525).
enum : unsigned int {
  NVML_CLOCK_LIMIT_ID_RANGE_START = 0xffffff00,
  NVML_CLOCK_LIMIT_ID_TDP = 0xffffff01,
  NVML_CLOCK_LIMIT_ID_UNLIMITED = 0xffffff02
};

// nvmlFieldValue_t.fieldId values (nvmlDeviceGetFieldValues), as the real library numbers them.
enum : unsigned int {
  NVML_FI_DEV_ECC_CURRENT = 1,
  NVML_FI_DEV_ECC_PENDING = 2,
  NVML_FI_DEV_ECC_SBE_VOL_TOTAL = 3,
  NVML_FI_DEV_ECC_DBE_VOL_TOTAL = 4,
  NVML_FI_DEV_ECC_SBE_AGG_TOTAL = 5,
  NVML_FI_DEV_ECC_DBE_AGG_TOTAL = 6,
  NVML_FI_DEV_PERF_POLICY_POWER = 74,
  NVML_FI_DEV_PERF_POLICY_THERMAL = 75,
  NVML_FI_DEV_PERF_POLICY_SYNC_BOOST = 76,
  NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT = 77,
  NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION = 78,
  NVML_FI_DEV_PERF_POLICY_RELIABILITY = 79,
  NVML_FI_DEV_PERF_POLICY_TOTAL_APP_CLOCKS = 80,
  NVML_FI_DEV_PERF_POLICY_TOTAL_BASE_CLOCKS = 81,
  NVML_FI_DEV_MEMORY_TEMP = 82,
  NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION = 83,
  NVML_FI_DEV_POWER_AVERAGE = 185,  // 1 s average, mW (Ampere but GA100, and later)
  NVML_FI_DEV_POWER_INSTANT = 186,  // mW
  NVML_FI_DEV_POWER_MIN_LIMIT = 187,
  NVML_FI_DEV_POWER_MAX_LIMIT = 188,
  NVML_FI_DEV_POWER_DEFAULT_LIMIT = 189,
  NVML_FI_DEV_POWER_CURRENT_LIMIT = 190,
  NVML_FI_DEV_ENERGY = 191,  // mJ
  NVML_FI_DEV_POWER_REQUESTED_LIMIT = 192
};

// ---------------------------------------------------------------------------------------------
// Telemetry extras (dmon columns; src/gpu reads them). Appended; values are NVML's own.
extern "C" {

// nvmlFieldValue_t.scopeId of the power fields (NVML_FI_DEV_POWER_AVERAGE/INSTANT): the GPU, the
// module (Grace Hopper), the memory. An H100 answers the memory's average and no instant one.
enum : unsigned int {
  NVML_POWER_SCOPE_GPU = 0,
  NVML_POWER_SCOPE_MODULE = 1,
  NVML_POWER_SCOPE_MEMORY = 2
};

// nvmlDeviceGetFieldValues field ids (NVML_FI_DEV_MEMORY_TEMP is in the list above).
enum : unsigned int {
  NVML_FI_DEV_PCIE_REPLAY_COUNTER = 94  // PCIe replays since driver load
};

// NVLink field values (NVML's numbering). SPEED_MBPS_COMMON: the speed of the active links,
// MB/s (26562 on Hopper: nvidia-smi nvlink -s's 26.562 GB/s); LINK_COUNT: links the GPU has.
// THROUGHPUT_DATA_TX/RX: data payload sent/received since the driver loaded, KiB, of the link in
// nvmlFieldValue_t.scopeId, or of every link summed with scopeId NVML_NVLINK_SCOPE_ALL (UINT_MAX).
// GET_SPEED: one link's speed (scopeId), MB/s.
enum : unsigned int {
  NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON = 90,
  NVML_FI_DEV_NVLINK_LINK_COUNT = 91,
  NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138,
  NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139,
  NVML_FI_DEV_NVLINK_GET_SPEED = 164,
  NVML_NVLINK_SCOPE_ALL = 0xFFFFFFFFu  // scopeId: every link summed (our name; NVML says UINT_MAX)
};

typedef struct nvmlBAR1Memory_st {
  unsigned long long bar1Total;  // bytes
  unsigned long long bar1Free;
  unsigned long long bar1Used;
} nvmlBAR1Memory_t;

}  // extern "C"

// ---------------------------------------------------------------------------------------------
// The rest of the device-query ABI that NVML clients (pynvml, nvtop) call and the simulator
// answers (sim/abi/entry_points.txt). gpuclk's own loader does not call these. Values are NVML's.
extern "C" {

typedef enum nvmlBrandType_enum : int {
  NVML_BRAND_UNKNOWN = 0,
  NVML_BRAND_TESLA = 2,
  NVML_BRAND_NVIDIA = 14
} nvmlBrandType_t;

typedef enum nvmlInforomObject_enum : int {
  NVML_INFOROM_OEM = 0,
  NVML_INFOROM_ECC = 1,
  NVML_INFOROM_POWER = 2
} nvmlInforomObject_t;

typedef enum nvmlBusType_enum : int {
  NVML_BUS_TYPE_UNKNOWN = 0,
  NVML_BUS_TYPE_PCI = 1,
  NVML_BUS_TYPE_PCIE = 2
} nvmlBusType_t;

typedef enum nvmlGpuVirtualizationMode_enum : int {
  NVML_GPU_VIRTUALIZATION_MODE_NONE = 0,
  NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH = 1
} nvmlGpuVirtualizationMode_t;

typedef enum nvmlEncoderQueryType_enum : int {
  NVML_ENCODER_QUERY_H264 = 0,
  NVML_ENCODER_QUERY_HEVC = 1,
  NVML_ENCODER_QUERY_AV1 = 2
} nvmlEncoderType_t;

typedef enum nvmlAffinityScope_enum : int {
  NVML_AFFINITY_SCOPE_NODE = 0,   // the NUMA node of the GPU
  NVML_AFFINITY_SCOPE_SOCKET = 1  // the CPU socket of the GPU
} nvmlAffinityScope_t;

typedef enum nvmlGpuP2PCapsIndex_enum : int {
  NVML_P2P_CAPS_INDEX_READ = 0,
  NVML_P2P_CAPS_INDEX_WRITE = 1,
  NVML_P2P_CAPS_INDEX_NVLINK = 2,
  NVML_P2P_CAPS_INDEX_ATOMICS = 3,
  NVML_P2P_CAPS_INDEX_PROP = 4,
  NVML_P2P_CAPS_INDEX_UNKNOWN = 5
} nvmlGpuP2PCapsIndex_t;

typedef enum nvmlGpuP2PStatus_enum : int {
  NVML_P2P_STATUS_OK = 0,
  NVML_P2P_STATUS_NOT_SUPPORTED = 5
} nvmlGpuP2PStatus_t;

#define NVML_GSP_FIRMWARE_VERSION_BUF_SIZE 0x40

// nvmlDeviceGetPciInfo (no suffix): the first layout, a 16-byte bus id and reserved words.
typedef struct nvmlPciInfoV1_st {
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  unsigned int reserved0;
  unsigned int reserved1;
  unsigned int reserved2;
  unsigned int reserved3;
} nvmlPciInfoV1_t;

// The running-process entry points without a suffix: pid and memory only.
typedef struct nvmlProcessInfoV1_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes
} nvmlProcessInfoV1_t;

typedef struct nvmlProcessUtilizationSample_st {
  unsigned int pid;
  unsigned long long timeStamp;  // µs since the epoch
  unsigned int smUtil;           // percent
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef struct nvmlMemory_v2_st {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;  // driver and firmware reservation
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;
// Versioned structs carry sizeof | version << 24.
#define NVML_STRUCT_VERSION(type, ver) (unsigned int)(sizeof(type) | ((ver) << 24U))
#define nvmlMemory_v2 NVML_STRUCT_VERSION(nvmlMemory_v2_t, 2)

typedef struct nvmlAccountingStats_st {
  unsigned int gpuUtilization;
  unsigned int memoryUtilization;
  unsigned long long maxMemoryUsage;
  unsigned long long time;
  unsigned long long startTime;
  unsigned int isRunning;
  unsigned int reserved[5];
} nvmlAccountingStats_t;

typedef struct nvmlFBCStats_st {
  unsigned int sessionsCount;
  unsigned int averageFPS;
  unsigned int averageLatency;
} nvmlFBCStats_t;

// Arrays the simulator only ever reports empty: their layouts are never needed.
typedef struct nvmlHwbcEntry_st nvmlHwbcEntry_t;
typedef struct nvmlExcludedDeviceInfo_st nvmlExcludedDeviceInfo_t;
typedef struct nvmlEncoderSessionInfo_st nvmlEncoderSessionInfo_t;
typedef struct nvmlFBCSessionInfo_st nvmlFBCSessionInfo_t;

// Samples the driver keeps per device (nvmlDeviceGetSamples).
typedef enum nvmlSamplingType_enum : int {
  NVML_TOTAL_POWER_SAMPLES = 0,         // mW
  NVML_GPU_UTILIZATION_SAMPLES = 1,     // percent
  NVML_MEMORY_UTILIZATION_SAMPLES = 2,  // percent
  NVML_ENC_UTILIZATION_SAMPLES = 3,
  NVML_DEC_UTILIZATION_SAMPLES = 4,
  NVML_PROCESSOR_CLK_SAMPLES = 5,  // MHz
  NVML_MEMORY_CLK_SAMPLES = 6,     // MHz
  NVML_MODULE_POWER_SAMPLES = 7,   // mW, Grace Hopper modules only
  NVML_JPG_UTILIZATION_SAMPLES = 8,
  NVML_OFA_UTILIZATION_SAMPLES = 9
} nvmlSamplingType_t;

typedef struct nvmlSample_st {
  unsigned long long timeStamp;  // µs since the epoch
  nvmlValue_t sampleValue;
} nvmlSample_t;

// Row remapping (A100 and later): banks by how many spare rows they have left.
typedef struct nvmlRowRemapperHistogramValues_st {
  unsigned int max;
  unsigned int high;
  unsigned int partial;
  unsigned int low;
  unsigned int none;
} nvmlRowRemapperHistogramValues_t;

// Events (nvmlEventSetCreate, nvmlDeviceRegisterEvents, nvmlEventSetWait_v2).
typedef struct nvmlEventSet_st* nvmlEventSet_t;
#define nvmlEventTypeSingleBitEccError 0x0000000000000001ULL
#define nvmlEventTypeDoubleBitEccError 0x0000000000000002ULL
#define nvmlEventTypePState 0x0000000000000004ULL
#define nvmlEventTypeXidCriticalError 0x0000000000000008ULL
#define nvmlEventTypeClock 0x0000000000000010ULL
#define nvmlEventMigConfigChange 0x0000000000000100ULL

// Where a memory error happened (nvmlDeviceGetMemoryErrorCounter).
typedef enum nvmlMemoryLocation_enum : int {
  NVML_MEMORY_LOCATION_L1_CACHE = 0,
  NVML_MEMORY_LOCATION_L2_CACHE = 1,
  NVML_MEMORY_LOCATION_DRAM = 2,  // also NVML_MEMORY_LOCATION_DEVICE_MEMORY
  NVML_MEMORY_LOCATION_REGISTER_FILE = 3,
  NVML_MEMORY_LOCATION_TEXTURE_MEMORY = 4,
  NVML_MEMORY_LOCATION_TEXTURE_SHM = 5,
  NVML_MEMORY_LOCATION_CBU = 6,
  NVML_MEMORY_LOCATION_SRAM = 7
} nvmlMemoryLocation_t;

// NvLink reads (nvmlDeviceGetNvLinkVersion/Capability/ErrorCounter/RemoteDeviceType).
typedef enum nvmlNvlinkVersion_enum : int {
  NVML_NVLINK_VERSION_INVALID = 0,
  NVML_NVLINK_VERSION_1_0 = 1,
  NVML_NVLINK_VERSION_2_0 = 2,
  NVML_NVLINK_VERSION_2_2 = 3,
  NVML_NVLINK_VERSION_3_0 = 4,
  NVML_NVLINK_VERSION_3_1 = 5,
  NVML_NVLINK_VERSION_4_0 = 6,
  NVML_NVLINK_VERSION_5_0 = 7
} nvmlNvlinkVersion_t;

typedef enum nvmlNvLinkCapability_enum : int {
  NVML_NVLINK_CAP_P2P_SUPPORTED = 0,
  NVML_NVLINK_CAP_SYSMEM_ACCESS = 1,
  NVML_NVLINK_CAP_P2P_ATOMICS = 2,
  NVML_NVLINK_CAP_SYSMEM_ATOMICS = 3,
  NVML_NVLINK_CAP_SLI_BRIDGE = 4,
  NVML_NVLINK_CAP_VALID = 5
} nvmlNvLinkCapability_t;

typedef enum nvmlNvLinkErrorCounter_enum : int {
  NVML_NVLINK_ERROR_DL_REPLAY = 0,
  NVML_NVLINK_ERROR_DL_RECOVERY = 1,
  NVML_NVLINK_ERROR_DL_CRC_FLIT = 2,
  NVML_NVLINK_ERROR_DL_CRC_DATA = 3,
  NVML_NVLINK_ERROR_DL_ECC_DATA = 4
} nvmlNvLinkErrorCounter_t;

typedef enum nvmlIntNvLinkDeviceType_enum : int {
  NVML_NVLINK_DEVICE_TYPE_GPU = 0,
  NVML_NVLINK_DEVICE_TYPE_IBMNPU = 1,
  NVML_NVLINK_DEVICE_TYPE_SWITCH = 2,
  NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 0xFF
} nvmlIntNvLinkDeviceType_t;

typedef struct nvmlEventData_st {
  nvmlDevice_t device;
  unsigned long long eventType;  // one nvmlEventType* bit
  unsigned long long eventData;  // the Xid for nvmlEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlEventData_t;

}  // extern "C"
