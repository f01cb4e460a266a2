# gpuclk_gtest_suites(TARGET [LABELS ...] [ENVIRONMENT ...]): one ctest test per googletest suite
# of TARGET (`TARGET --gtest_filter=Suite.*`), not one per test case as gtest_discover_tests
# registers them. Under the ci build's ASan and UBSan every process start costs ~0.35 s of CPU:
# 550 one-case processes spent more starting (~200 CPU-s) than testing, and a suite is still a
# test of its own in ctest's output, its failing case named in the googletest lines printed with it.
# A suite whose every case skipped reads as skipped. The suites are listed after each link
# (TARGET --gtest_list_tests, as gtest_discover_tests does) into a file ctest includes.
set(_gpuclk_gtest_suites_script ${CMAKE_CURRENT_LIST_DIR}/GTestSuitesList.cmake)

function(gpuclk_gtest_suites target)
  cmake_parse_arguments(arg "" "" "LABELS;ENVIRONMENT" ${ARGN})
  set(ctest_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -D "EXE=$<TARGET_FILE:${target}>" -D "OUT=${ctest_file}"
            -D "LABELS=${arg_LABELS}" -D "ENVIRONMENT=${arg_ENVIRONMENT}"
            -P ${_gpuclk_gtest_suites_script}
    BYPRODUCTS ${ctest_file}
    VERBATIM)
  # A tree that did not build TARGET (the TSan tree builds its thread tests only) gets one test
  # that says so, as gtest_discover_tests does, instead of an error from every ctest run.
  set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake)
  file(WRITE ${include_file}
    "if(EXISTS [==[${ctest_file}]==])\n"
    "  include([==[${ctest_file}]==])\n"
    "else()\n"
    "  add_test([==[${target}_NOT_BUILT]==] [==[${target}_NOT_BUILT]==])\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()
