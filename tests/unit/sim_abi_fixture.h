// The fixture of the sim_abi_*_test.cpp files: libnvml-sim.so through dlopen, as gpuclk uses
// it. Each case runs in a forked child (the library keeps one scenario per process); the
// child's gtest failures become its exit status.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "nvml/nvml_abi.h"
#include "nvml/sim_abi.h"

namespace gpuclk::sim::testing {

namespace fs = std::filesystem;

// Every NVML entry point and helper, resolved with dlsym.
struct Nvml {
#define GPUCLK_TEST_POINTER(name, params, args) nvmlReturn_t(*name) params = nullptr;
  GPUCLK_NVML_ALL(GPUCLK_TEST_POINTER)
#undef GPUCLK_TEST_POINTER
  const char* (*nvmlErrorString)(nvmlReturn_t) = nullptr;
  double (*time_scale)() = nullptr;
  double (*time)() = nullptr;
  int (*advance)(double) = nullptr;
  int (*truth)(unsigned, gpuclk_sim_gpu_truth_t*) = nullptr;
  double (*energy)(unsigned) = nullptr;

  explicit Nvml(void* lib) {
#define GPUCLK_TEST_RESOLVE(name, params, args)               \
  name = reinterpret_cast<decltype(name)>(dlsym(lib, #name)); \
  EXPECT_NE(name, nullptr) << #name;
    GPUCLK_NVML_ALL(GPUCLK_TEST_RESOLVE)
#undef GPUCLK_TEST_RESOLVE
    nvmlErrorString = reinterpret_cast<decltype(nvmlErrorString)>(dlsym(lib, "nvmlErrorString"));
    time_scale = reinterpret_cast<decltype(time_scale)>(dlsym(lib, "gpuclk_sim_time_scale"));
    time = reinterpret_cast<decltype(time)>(dlsym(lib, "gpuclk_sim_time"));
    advance = reinterpret_cast<decltype(advance)>(dlsym(lib, "gpuclk_sim_advance"));
    truth = reinterpret_cast<decltype(truth)>(dlsym(lib, "gpuclk_sim_gpu_truth"));
    energy = reinterpret_cast<decltype(energy)>(dlsym(lib, "gpuclk_sim_energy_joules"));
  }

  nvmlDevice_t handle(unsigned index) {
    nvmlDevice_t device = nullptr;
    EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(index, &device), NVML_SUCCESS);
    return device;
  }
  unsigned clock(nvmlDevice_t d, nvmlClockType_t type = NVML_CLOCK_SM) {
    unsigned v = 0;
    EXPECT_EQ(nvmlDeviceGetClockInfo(d, type, &v), NVML_SUCCESS);
    return v;
  }
};

class sim_abi_test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(library()))
      GTEST_SKIP() << library() << " is not built (cmake --build … --target nvml_sim)";
    dir_ = fs::temp_directory_path() /
           ("gpuclk-sim-abi-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Runs body in a child process with these environment variables and a fresh library.
  int in_child(const std::map<std::string, std::string>& env,
               const std::function<void(Nvml&)>& body) {
    std::fflush(stdout);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("GPUCLK_SIM_STATE", (dir_ / "sim.state").c_str(), 1);
      ::setenv("GPUCLK_SIM_SCENARIO_DIR",
               (fs::path(GPUCLK_SOURCE_DIR) / "sim" / "scenarios").c_str(), 1);
      ::unsetenv("GPUCLK_SIM_SPEED");
      ::unsetenv("GPUCLK_SIM_START");
      ::unsetenv("GPUCLK_SIM_SCENARIO");
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      void* lib = dlopen(library().c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!lib) {
        std::fprintf(stderr, "dlopen: %s\n", dlerror());
        std::_Exit(3);
      }
      Nvml nvml(lib);
      body(nvml);
      std::fflush(stdout);
      std::_Exit(::testing::Test::HasFailure() ? 1 : 0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  static std::string library() { return std::string(GPUCLK_BINARY_DIR) + "/libnvml-sim.so"; }

  fs::path dir_;
};

// For in_child's status: the child printed its own failures; this only marks the test failed
// (EXPECT_EQ on the call itself would print the whole lambda's source).
inline void expect_passed(int child_status) {
  EXPECT_EQ(child_status, 0) << "checks in the child process failed (printed above)";
}

// The library a child process loaded (in_child), for entry points the Nvml table does not list.
inline void* library_handle() {
  // One literal, not std::string + "...": GCC 12 at -O2 warns falsely on that concatenation
  // (-Warray-bounds in char_traits::copy, GCC bug 105329).
  return dlopen(GPUCLK_BINARY_DIR "/libnvml-sim.so", RTLD_NOW | RTLD_NOLOAD);
}

// An entry point by name, typed as its prototype in the generated header (entry_points.gen.h).
#define SIM_FN(name) reinterpret_cast<decltype(&::name)>(dlsym(library_handle(), #name))

// Frozen time at t: deterministic readings.
inline std::map<std::string, std::string> frozen(const char* scenario, const char* t) {
  return {{"GPUCLK_SIM_SCENARIO", scenario}, {"GPUCLK_SIM_SPEED", "0"}, {"GPUCLK_SIM_START", t}};
}

}  // namespace gpuclk::sim::testing
