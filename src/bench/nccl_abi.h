// Our own declarations of the part of NCCL's C API `gpuclk bench nccl` calls.
//
// Written from NCCL's public API reference (docs.nvidia.com/deeplearning/nccl, "NCCL API"); no
// NVIDIA header is copied. NCCL's C API is stable: these signatures and values are those of
// every NCCL 2.x release since 2.7 (send/recv), except the optional ones: ncclAlltoAll (2.28;
// without it all-to-all is a group of sends and receives, as nccl-tests does) and
// ncclMemAlloc/ncclMemFree (2.19; without them buffers come from cudaMalloc). Values and
// layouts must match libnccl.so.2 exactly. Only src/bench/nccl_* include this file.
#pragma once

#include <cstddef>

extern "C" {

typedef struct ncclComm* ncclComm_t;
// cudaStream_t is `struct CUstream_st*` in the CUDA runtime's headers: the same type here,
// without them.
typedef struct CUstream_st* ncclStream_t;

typedef enum ncclResult_enum : int {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
} ncclResult_t;

typedef enum ncclDataType_enum : int {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9,
} ncclDataType_t;

typedef enum ncclRedOp_enum : int {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
} ncclRedOp_t;

}  // extern "C"

// X(name, return type, parameter list): every entry point gpuclk resolves. REQUIRED ones must all
// be present (NCCL 2.7 or later); an OPTIONAL one may be missing.
#define GPUCLK_NCCL_REQUIRED(X)                                                                   \
  X(ncclGetVersion, ncclResult_t, (int* version))                                                 \
  X(ncclGetErrorString, const char*, (ncclResult_t result))                                       \
  X(ncclCommInitAll, ncclResult_t, (ncclComm_t * comms, int ndev, const int* devlist))            \
  X(ncclCommDestroy, ncclResult_t, (ncclComm_t comm))                                             \
  X(ncclGroupStart, ncclResult_t, ())                                                             \
  X(ncclGroupEnd, ncclResult_t, ())                                                               \
  X(ncclAllReduce, ncclResult_t,                                                                  \
    (const void* sendbuff, void* recvbuff, std::size_t count, ncclDataType_t datatype,            \
     ncclRedOp_t op, ncclComm_t comm, ncclStream_t stream))                                       \
  X(ncclAllGather, ncclResult_t,                                                                  \
    (const void* sendbuff, void* recvbuff, std::size_t sendcount, ncclDataType_t datatype,        \
     ncclComm_t comm, ncclStream_t stream))                                                       \
  X(ncclReduceScatter, ncclResult_t,                                                              \
    (const void* sendbuff, void* recvbuff, std::size_t recvcount, ncclDataType_t datatype,        \
     ncclRedOp_t op, ncclComm_t comm, ncclStream_t stream))                                       \
  X(ncclBroadcast, ncclResult_t,                                                                  \
    (const void* sendbuff, void* recvbuff, std::size_t count, ncclDataType_t datatype, int root,  \
     ncclComm_t comm, ncclStream_t stream))                                                       \
  X(ncclSend, ncclResult_t,                                                                       \
    (const void* sendbuff, std::size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm, \
     ncclStream_t stream))                                                                        \
  X(ncclRecv, ncclResult_t,                                                                       \
    (void* recvbuff, std::size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,       \
     ncclStream_t stream))

#define GPUCLK_NCCL_OPTIONAL(X)                                                        \
  X(ncclAlltoAll, ncclResult_t,                                                        \
    (const void* sendbuff, void* recvbuff, std::size_t count, ncclDataType_t datatype, \
     ncclComm_t comm, ncclStream_t stream))                                            \
  X(ncclCommGetAsyncError, ncclResult_t, (ncclComm_t comm, ncclResult_t * asyncError)) \
  X(ncclMemAlloc, ncclResult_t, (void** ptr, std::size_t size))                        \
  X(ncclMemFree, ncclResult_t, (void* ptr))
