# One warning set for all our targets; sanitizers for the debug preset.
add_library(gpuclk_warnings INTERFACE)
target_compile_options(gpuclk_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion
  -Wno-sign-conversion -Wno-missing-field-initializers -Wimplicit-fallthrough>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${GPUCLK_WERROR}>>:-Werror>)
# C++ only: nvcc compiles the CUDA kernels of a sanitized build (the ci preset) as in any other.
if(GPUCLK_SANITIZE)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=undefined>)
  add_link_options(-fsanitize=address,undefined)
  # GCC documents -Wmaybe-uninitialized as unreliable under the sanitizers: with ASan at -O1
  # GCC 12 reports it inside std::regex's std::function members, which no code of ours can
  # mend. The release build keeps the warning.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>)
  endif()
endif()

# The `fuzz` preset (clang-14): every library instrumented for libFuzzer, ASan and UBSan; the
# fuzz targets in tests/fuzz link -fsanitize=fuzzer.
option(GPUCLK_FUZZ "Build the libFuzzer targets (clang only)" OFF)
if(GPUCLK_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
# The `tsan` preset: ThreadSanitizer for the threaded parts (sampler, control, serve).
option(GPUCLK_TSAN "Build with ThreadSanitizer" OFF)
if(GPUCLK_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
