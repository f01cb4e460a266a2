# cmake -P script (cmake/GTestSuites.cmake): lists EXE's googletest suites and writes OUT, the
# ctest file with one test per suite. -D EXE, OUT, LABELS, ENVIRONMENT (;-lists).
execute_process(COMMAND "${EXE}" --gtest_list_tests
  OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE status TIMEOUT 120)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${EXE} --gtest_list_tests failed (${status}):\n${errors}${listing}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(suites)
foreach(line IN LISTS lines)
  # A suite's line is its name and a dot at column 0 ("Name." or "Prefix/Name.  # TypeParam = ...");
  # its cases are indented under it.
  if(line MATCHES "^([^ #][^ ]*)\\.( |$)")
    list(APPEND suites "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(NOT suites)
  message(FATAL_ERROR "${EXE} --gtest_list_tests listed no suite:\n${listing}")
endif()
# Skipped: nothing passed and only skipped cases follow googletest's summary (a failure lists
# "[  FAILED  ]" lines after them, so it stays a failure).
set(skipped [==["\\[  PASSED  \\] 0 tests\\.\n\\[  SKIPPED \\] [0-9]+ tests?, listed below:\n(\\[  SKIPPED \\] [^\n]*\n?)*$"]==])
set(text "# Written by cmake/GTestSuitesList.cmake after ${EXE} was linked.\n")
foreach(suite IN LISTS suites)
  string(APPEND text
    "add_test([==[${suite}]==] [==[${EXE}]==] [==[--gtest_filter=${suite}.*]==])\n"
    "set_tests_properties([==[${suite}]==] PROPERTIES LABELS [==[${LABELS}]==]"
    " ENVIRONMENT [==[${ENVIRONMENT}]==]"
    " SKIP_REGULAR_EXPRESSION ${skipped})\n")
endforeach()
file(WRITE "${OUT}.tmp" "${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
