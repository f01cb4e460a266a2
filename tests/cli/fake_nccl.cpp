// A stand-in for libnccl.so.2 on machines without NCCL: every entry point gpuclk resolves, so the
// loader's checks (found, version, symbols) and what `bench nccl` does after loading it (the
// simulator's refusal) can be tested. ncclGetVersion answers GPUCLK_FAKE_NCCL_VERSION (default
// 22703, NCCL 2.27.3); every other call fails with ncclInvalidUsage: nothing here moves data.
#include <cstddef>
#include <cstdlib>

extern "C" {
using Result = int;
constexpr Result kSuccess = 0, kInvalidUsage = 5;

Result ncclGetVersion(int* version) {
  const char* v = std::getenv("GPUCLK_FAKE_NCCL_VERSION");
  *version = v ? std::atoi(v) : 22703;
  return kSuccess;
}
const char* ncclGetErrorString(Result) { return "invalid usage (fake NCCL)"; }
Result ncclCommInitAll(void**, int, const int*) { return kInvalidUsage; }
Result ncclCommDestroy(void*) { return kSuccess; }
Result ncclGroupStart() { return kSuccess; }
Result ncclGroupEnd() { return kSuccess; }
Result ncclAllReduce(const void*, void*, std::size_t, int, int, void*, void*) {
  return kInvalidUsage;
}
Result ncclAllGather(const void*, void*, std::size_t, int, void*, void*) { return kInvalidUsage; }
Result ncclReduceScatter(const void*, void*, std::size_t, int, int, void*, void*) {
  return kInvalidUsage;
}
Result ncclBroadcast(const void*, void*, std::size_t, int, int, void*, void*) {
  return kInvalidUsage;
}
Result ncclSend(const void*, std::size_t, int, int, void*, void*) { return kInvalidUsage; }
Result ncclRecv(void*, std::size_t, int, int, void*, void*) { return kInvalidUsage; }
}
