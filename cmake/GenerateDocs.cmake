# cmake -DGPUCLK=<gpuclk> -DOUT=<folder> -P GenerateDocs.cmake (a build step of cmake/Install.cmake):
# the man pages and shell completions, written by gpuclk itself from its command line
# (src/cli/cmd_completion.cpp): OUT/man1/*.1.gz, OUT/completions/gpuclk (bash), _gpuclk (zsh).
file(REMOVE_RECURSE ${OUT}/man1 ${OUT}/completions)
file(MAKE_DIRECTORY ${OUT}/completions)
execute_process(COMMAND ${GPUCLK} manpages ${OUT}/man1 OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
file(GLOB pages ${OUT}/man1/*.1)
foreach(page ${pages})
  # -n: no name or time stamp in the archive, so a rebuild gives the same bytes.
  execute_process(COMMAND gzip -9nf ${page} COMMAND_ERROR_IS_FATAL ANY)
endforeach()
execute_process(COMMAND ${GPUCLK} completion bash OUTPUT_FILE ${OUT}/completions/gpuclk
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${GPUCLK} completion zsh OUTPUT_FILE ${OUT}/completions/_gpuclk
                COMMAND_ERROR_IS_FATAL ANY)
