// The three CUDA driver calls the NCCL Inspector plugin makes (its inspector_cudawrap.cc dlopens
// libcuda.so): enough for it to name a device on a machine without a GPU. Device d's UUID is
// GPU-d0000000-0000-0000-0000-00000000000d-like bytes, stable across runs.
#include <cstring>

extern "C" {
struct Uuid {
  char bytes[16];
};
int cuGetErrorString(int, const char** text) {
  *text = "no error";
  return 0;
}
int cuDeviceGet(int* device, int ordinal) {
  *device = ordinal;
  return 0;
}
int cuDeviceGetUuid(Uuid* uuid, int device) {
  std::memset(uuid->bytes, 0, sizeof uuid->bytes);
  uuid->bytes[0] = char(0xd0 + device);
  uuid->bytes[15] = char(device);
  return 0;
}
}
