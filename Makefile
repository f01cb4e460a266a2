# The two commands of the README. Everything else is CMake (CMakePresets.json).
#   make run   install what is missing, build gpuclk, run it (the simulated node if no GPU)
#   make test  the same build plus the tests, simulator tools and fuzz replays, then every test
PRESET ?= release
JOBS   ?= $(shell nproc)
BIN    := build/$(PRESET)
# What `make run` needs: the command (which builds gpuclk-serve too) and the simulator it falls
# back to. The tests, perf tools and fuzz replays are `make test`'s.
RUN_TARGETS := gpuclk nvml_sim

.PHONY: all deps configure build run test clean format tidy

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@test -f $(BIN)/CMakeCache.txt || cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build $(BIN) -j $(JOBS)

# No NVIDIA driver here: gpuclk falls back to the simulated 4×H100 node and says so in one line.
# The build's own lines go to $(BIN)/build.log (not make's "Entering directory" lines either: the
# inner build is not a sub-make of this one); on a terminal one progress line counts the steps,
# piped it stays quiet. The compiler's errors and the log's end show when the build fails.
run: configure
	@env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS scripts/build-progress.sh $(BIN) $(JOBS) $(RUN_TARGETS)
	@GPUCLK_FALLBACK_SIM=1 $(BIN)/gpuclk

test: build
	@ctest --test-dir $(BIN) --output-on-failure --no-tests=error -j $(JOBS)

format:
	@git ls-files '*.cpp' '*.h' '*.cu' | xargs clang-format -i

tidy: deps
	@TIDY=$${TIDY:-changed} TIDY_RECORD=1 scripts/ci/check-rules.sh tidy

clean:
	rm -rf build
