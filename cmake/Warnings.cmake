# One warning set for all our targets; sanitizers for the debug preset.
add_library(gpuclk_warnings INTERFACE)
target_compile_options(gpuclk_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion
  -Wno-sign-conversion -Wno-missing-field-initializers -Wimplicit-fallthrough>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${GPUCLK_WERROR}>>:-Werror>)
if(GPUCLK_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
