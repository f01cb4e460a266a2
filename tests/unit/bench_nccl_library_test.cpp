// Loading NCCL at run time (bench/nccl_library.h): the stand-in libnccl (tests/cli/fake_nccl.cpp,
// built next to gpuclk), an NCCL too old, a library that is no NCCL, a path that is not there,
// and where the search looks (a fake tree of python installs).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "bench/nccl_library.h"
#include "util/error.h"

namespace gpuclk::bench::nccl {
namespace {

const std::string kFake = std::string(GPUCLK_BINARY_DIR) + "/libgpuclk-fake-nccl.so";

// Sets an environment variable for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

Error open_error(const std::string& path) {
  try {
    Library::open(path);
  } catch (const Error& e) {
    return e;
  }
  return Error(ExitCode::ok, "no error");
}

TEST(bench_nccl_library_test, loads_a_library_with_every_entry_point) {
  const auto lib = Library::open(kFake);
  EXPECT_EQ(lib->version_code(), 22703);
  EXPECT_EQ(lib->version(), "2.27.3");
  EXPECT_NE(lib->path().find("libgpuclk-fake-nccl.so"), std::string::npos);
  EXPECT_NE(lib->ncclAllReduce, nullptr);
  EXPECT_NE(lib->ncclSend, nullptr);
  EXPECT_EQ(lib->ncclAlltoAll, nullptr);  // optional: the stand-in is "2.27", before it
  // A failed call throws with NCCL's own words and the call's name.
  try {
    NCCL_CHECK(*lib, ncclCommInitAll, nullptr, 2, nullptr);
    FAIL() << "the stand-in's ncclCommInitAll fails";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::other);
    EXPECT_STREQ(e.what(), "ncclCommInitAll: invalid usage (fake NCCL) (NCCL error 5)");
    EXPECT_NE(e.hint().find("NCCL_DEBUG"), std::string::npos);
  }
}

TEST(bench_nccl_library_test, an_old_nccl_is_not_supported) {
  ScopedEnv old("GPUCLK_FAKE_NCCL_VERSION", "2604");  // 2.6.4: no send/recv yet
  const Error e = open_error(kFake);
  EXPECT_EQ(e.code(), ExitCode::not_supported);
  EXPECT_NE(std::string(e.what()).find("is NCCL 2.6.4, which lacks send/recv (gpuclk needs NCCL "
                                       "2.7 or later)"),
            std::string::npos);
}

TEST(bench_nccl_library_test, a_library_that_is_no_nccl_is_named) {
  const Error e = open_error(std::string(GPUCLK_BINARY_DIR) + "/libnvml-sim.so");
  EXPECT_EQ(e.code(), ExitCode::not_supported);
  EXPECT_NE(std::string(e.what()).find("is not an NCCL library (it has no ncclGetVersion)"),
            std::string::npos);
}

TEST(bench_nccl_library_test, a_path_that_does_not_load_exits_12) {
  const Error e = open_error("/nonexistent/libnccl.so.2");
  EXPECT_EQ(e.code(), ExitCode::nvml_not_found);
  EXPECT_NE(std::string(e.what()).find("cannot load NCCL library '/nonexistent/libnccl.so.2'"),
            std::string::npos);
  EXPECT_EQ(e.hint(), "check the path given with --nccl-lib");
}

TEST(bench_nccl_library_test, the_search_looks_in_the_wheels_of_every_python) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "gpuclk-nccl-search";
  fs::remove_all(root);
  const fs::path venv = root / "venv";
  for (const fs::path& dir : {root / "usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib",
                              venv / "lib/python3.11/site-packages/nvidia/nccl/lib",
                              root / "usr/lib/python3.10/site-packages/torch"}) {
    fs::create_directories(dir);
  }
  std::ofstream(root / "usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2");
  std::ofstream(venv / "lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2");
  ScopedEnv env_venv("VIRTUAL_ENV", "/venv");
  ScopedEnv env_lib("GPUCLK_NCCL_LIB", "");
  const SearchPlan plan = search_plan(root.string());
  ASSERT_EQ(plan.candidates.size(), 3u);
  EXPECT_EQ(plan.candidates[0], "libnccl.so.2");
  EXPECT_EQ(plan.candidates[1],
            root.string() + "/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2");
  EXPECT_EQ(plan.candidates[2], root.string() +
                                    "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/"
                                    "libnccl.so.2");
  // Where it looked, for the message when nothing loads: every place, existing or not.
  ASSERT_GE(plan.looked_in.size(), 3u);
  EXPECT_NE(plan.looked_in[0].find("LD_LIBRARY_PATH"), std::string::npos);
  EXPECT_NE(plan.looked_in[1].find("/venv, "), std::string::npos);
  EXPECT_NE(plan.looked_in[1].find("/usr/local, /usr, /opt/conda"), std::string::npos);
  fs::remove_all(root);
}

TEST(bench_nccl_library_test, none_found_says_where_it_looked_and_how_to_get_one) {
  SearchPlan plan;
  plan.candidates = {"libgpuclk-no-such-nccl.so.2", "/nonexistent/nvidia/nccl/lib/libnccl.so.2"};
  plan.looked_in = {"the loader's path", "the wheels of /nonexistent"};
  try {
    Library::open_first_of(plan);
    FAIL() << "nothing loads";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::nvml_not_found);
    EXPECT_EQ(std::string(e.what()).rfind("no NCCL library found (libnccl.so.2); looked in:\n"
                                          "  the loader's path\n  the wheels of /nonexistent",
                                          0),
              0u);
    EXPECT_NE(e.hint().find("pip install nvidia-nccl-cu12"), std::string::npos);
    EXPECT_NE(e.hint().find("--nccl-lib PATH or GPUCLK_NCCL_LIB"), std::string::npos);
  }
  plan.candidates.push_back(kFake);  // the first that loads wins
  EXPECT_EQ(Library::open_first_of(plan)->version(), "2.27.3");
}

TEST(bench_nccl_library_test, gpuclk_nccl_lib_comes_first) {
  ScopedEnv env_lib("GPUCLK_NCCL_LIB", kFake);
  const SearchPlan plan = search_plan("/nonexistent-root");
  ASSERT_GE(plan.candidates.size(), 2u);
  EXPECT_EQ(plan.candidates[0], kFake);
  EXPECT_EQ(plan.looked_in[0], "GPUCLK_NCCL_LIB=" + kFake);
  const auto lib = Library::open();  // found through it
  EXPECT_EQ(lib->version(), "2.27.3");
}

TEST(bench_nccl_library_test, loads_the_systems_nccl_where_there_is_one) {
  std::unique_ptr<Library> lib;
  try {
    lib = Library::open("libnccl.so.2");
  } catch (const Error& e) {
    GTEST_SKIP() << "no NCCL on this host: " << e.what();
  }
  EXPECT_GE(lib->version_code(), kMinimumVersion);
  EXPECT_NE(lib->ncclCommInitAll, nullptr);
  // ncclAlltoAll came in NCCL 2.28.
  EXPECT_EQ(lib->ncclAlltoAll != nullptr, lib->version_code() >= 22800) << lib->version();
  // Error 5 in NCCL's own words: the enum value is the library's.
  EXPECT_EQ(std::string(lib->ncclGetErrorString(ncclInvalidUsage)).rfind("invalid usage", 0), 0u);
}

}  // namespace
}  // namespace gpuclk::bench::nccl
