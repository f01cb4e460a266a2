# Build time on a 2-core machine (CI's, a newcomer's laptop). Two levers, both on by default:
#
# - Precompiled headers: the third-party headers almost every file includes (nlohmann/json, gtest
#   and the standard library) are parsed once per build, not once per file. They were most of a
#   command's compile time (src/cli/cmd_*.cpp took 20-30 s each at -O2 -g). A PCH is
#   used only with the flags it was built with (libraries compile -fPIC, executables -fPIE, tests
#   add gtest), so there is one per kind of target (gpuclk_add_pch), reused by every target of
#   that kind (REUSE_FROM): each is compiled once.
# - Unity builds: each target's sources compiled in batches (UNITY_BUILD_BATCH_SIZE), which shares
#   the rest of the header parsing and the template instantiations. File-local names must then
#   differ across the files of a target (a helper two files need goes into a header). The unit
#   tests stay one file at a time: each test file keeps its own helpers under the same names.
#
# GPUCLK_PCH=OFF and GPUCLK_UNITY=OFF give the plain per-file build (what a developer iterating
# on one file may prefer: a unity batch recompiles as a whole).
option(GPUCLK_PCH "Precompile the heavy third-party headers" ON)
option(GPUCLK_UNITY "Unity builds: compile each target's sources in batches" ON)
set(GPUCLK_UNITY_BATCH_SIZE 8 CACHE STRING "Sources per unity batch")

set(gpuclk_pch_headers
  <algorithm> <array> <atomic> <chrono> <cmath> <cstdint> <cstdio> <cstdlib> <cstring>
  <filesystem> <fstream> <functional> <map> <memory> <mutex> <optional> <set> <sstream>
  <string> <string_view> <thread> <utility> <vector>
  <nlohmann/json.hpp>)
# CLI11 stays out: its headers define objects (the validators ExistingFile, Number, ...: one copy
# per file) whose code every file including them compiles again. An empty file with CLI.hpp took
# 9.8 s and 893 KB of code under the ci preset (-O0, ASan, UBSan), nlohmann/json.hpp 4.6 s and
# 30 KB, the standard headers above 1.8 s; in the PCH, every one of the ~60 files of a build
# paid it. Only src/cli/ (the command line) includes it.
# fmt stays out: its CMake target defines FMT_SHARED (or FMT_HEADER_ONLY in a portable build), and
# a PCH built with a macro is refused by a target without it (the simulator links no fmt).

# Written only when missing or different, so a re-run of CMake does not rebuild every PCH.
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/pch_anchor.cpp CONTENT "// the target that owns a shared PCH\n")

# owner: the target that builds the PCH; kind: library or executable; ARGN: test libraries.
function(gpuclk_add_pch owner kind)
  add_library(${owner} OBJECT ${PROJECT_BINARY_DIR}/pch_anchor.cpp)
  target_link_libraries(${owner} PRIVATE nlohmann_json::nlohmann_json gpuclk_warnings ${ARGN})
  set(headers ${gpuclk_pch_headers})
  if(ARGN)
    list(APPEND headers <gtest/gtest.h> <gmock/gmock.h>)
  endif()
  if(kind STREQUAL "executable")
    set_target_properties(${owner} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
    target_compile_options(${owner} PRIVATE -fPIE)
  endif()
  target_precompile_headers(${owner} PRIVATE ${headers})
endfunction()

# The tests' PCH: called from tests/CMakeLists.txt, where GTest's imported targets are visible.
function(gpuclk_add_test_pch)
  if(GPUCLK_PCH)
    gpuclk_add_pch(gpuclk_test_pch executable GTest::gtest GTest::gmock)
  endif()
endfunction()

# Called once at the end of the top-level CMakeLists.txt, after every target exists.
function(gpuclk_apply_build_speed)
  if(GPUCLK_PCH)
    gpuclk_add_pch(gpuclk_lib_pch library)
    gpuclk_add_pch(gpuclk_exe_pch executable)
  endif()
  gpuclk_collect_targets(targets ${PROJECT_SOURCE_DIR})
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    # nvcc compiles .cu files; a PCH or a batch is C++ only, and a target that mixes them keeps
    # its per-file build (gpuclk_bench with CUDA).
    get_target_property(sources ${target} SOURCES)
    list(FILTER sources INCLUDE REGEX "\\.cu$")
    if(sources)
      continue()
    endif()
    get_target_property(links ${target} LINK_LIBRARIES)
    set(tests OFF)
    if(links MATCHES "GTest::")
      set(tests ON)
    endif()
    if(GPUCLK_UNITY AND NOT tests)
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                            UNITY_BUILD_BATCH_SIZE ${GPUCLK_UNITY_BATCH_SIZE})
    endif()
    # clang refuses a PCH built with another default visibility (the simulator's libraries hide
    # theirs); gcc takes it. Under clang (the fuzz preset) they compile without one.
    get_target_property(visibility ${target} CXX_VISIBILITY_PRESET)
    set(pch ${GPUCLK_PCH})
    if(visibility STREQUAL "hidden" AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      set(pch OFF)
    endif()
    # A target with an optimization level of its own (the simulator's physics in a Debug build)
    # cannot use a PCH built at another one: gcc refuses it (__NO_INLINE__ differs).
    get_target_property(options ${target} COMPILE_OPTIONS)
    if(options MATCHES "-O[0-3s]")
      set(pch OFF)
    endif()
    if(pch)
      if(tests AND TARGET gpuclk_test_pch)
        target_precompile_headers(${target} REUSE_FROM gpuclk_test_pch)
      elseif(type STREQUAL "EXECUTABLE")
        target_precompile_headers(${target} REUSE_FROM gpuclk_exe_pch)
      else()
        target_precompile_headers(${target} REUSE_FROM gpuclk_lib_pch)
      endif()
    endif()
  endforeach()
endfunction()

function(gpuclk_collect_targets out dir)
  get_property(here DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    gpuclk_collect_targets(below ${sub})
    list(APPEND here ${below})
  endforeach()
  set(${out} ${here} PARENT_SCOPE)
endfunction()
