// NcclLibrary: NCCL loaded at run time (dlopen + dlsym), never linked, as src/nvml/ loads NVML:
// one binary runs with the system's NCCL, a PyTorch or NVIDIA wheel's, or none (then only
// `bench nccl` is unavailable, and it says where it looked).
//
// Each entry point of nccl_abi.h is a function pointer member named like the C function; an
// OPTIONAL one the library lacks (ncclAlltoAll before NCCL 2.28) is nullptr. check() turns a
// return code into gpuclk::Error with ncclGetErrorString's text.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench/nccl_abi.h"

namespace gpuclk::bench::nccl {

// Where to look for libnccl.so.2, in order, when no path is given: GPUCLK_NCCL_LIB; the dynamic
// loader's search path ("libnccl.so.2": LD_LIBRARY_PATH, ld.so.cache, /usr/lib/…); then the
// wheels' copies, nvidia/nccl/lib/libnccl.so.2 under the site-packages and dist-packages of
// every python3 install found under $VIRTUAL_ENV, $CONDA_PREFIX, ~/.local, /usr/local, /usr,
// /opt/conda (lib/python3*/) and /usr/lib/python3/dist-packages. `root` prefixes every absolute
// directory searched (tests give a fake tree; "" in use). Existing wheel files only.
struct SearchPlan {
  std::vector<std::string> candidates;  // what dlopen is tried with, in order
  std::vector<std::string> looked_in;   // for the message when none loads: each place, once
};
SearchPlan search_plan(const std::string& root = {});

class Library {
 public:
  // Loads `path`, or (empty) the first of search_plan()'s candidates that loads, and checks that
  // it is NCCL 2.7 or later with every REQUIRED entry point. Throws gpuclk::Error: exit 12 when
  // no NCCL library can be loaded (the message lists where it looked; the hint says how to get
  // one or point --nccl-lib at it), exit 3 when the library is too old or is no NCCL.
  static std::unique_ptr<Library> open(const std::string& path = {});
  // The first of `plan`'s candidates that loads, checked as open() does; exit 12 listing
  // plan.looked_in when none loads.
  static std::unique_ptr<Library> open_first_of(const SearchPlan& plan);

  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

// NOLINTNEXTLINE(bugprone-macro-parentheses): `params` is a parameter list, spliced as written.
#define GPUCLK_NCCL_MEMBER(name, result, params) result(*name) params = nullptr;
  GPUCLK_NCCL_REQUIRED(GPUCLK_NCCL_MEMBER)
  GPUCLK_NCCL_OPTIONAL(GPUCLK_NCCL_MEMBER)
#undef GPUCLK_NCCL_MEMBER

  const std::string& path() const { return path_; }  // as the dynamic loader resolved it
  int version_code() const { return version_; }      // ncclGetVersion: 22703 for 2.27.3
  std::string version() const;                       // "2.27.3"

  // Throws gpuclk::Error (exit 255) unless rc is ncclSuccess: "ncclAllReduce: unhandled cuda
  // error (NCCL error 1)", with `context` before it when given.
  void check(ncclResult_t rc, const char* call, const std::string& context = {}) const;

 private:
  Library() = default;
  // Resolves the entry points of a loaded library and checks it is an NCCL gpuclk can use.
  static std::unique_ptr<Library> resolve(std::unique_ptr<Library> lib);
  void* handle_ = nullptr;
  std::string path_;
  int version_ = 0;
};

// The oldest NCCL gpuclk calls: ncclSend/ncclRecv came in 2.7.
inline constexpr int kMinimumVersion = 20700;

}  // namespace gpuclk::bench::nccl

// NCCL_CHECK(lib, ncclAllReduce, args…): call and throw with the call's name.
#define NCCL_CHECK(lib, fn, ...) (lib).check((lib).fn(__VA_ARGS__), #fn)
