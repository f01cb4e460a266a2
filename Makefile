# The two commands of the README. Everything else is CMake (CMakePresets.json).
#   make run   install what is missing, build, run gpuclk (the simulated node if no GPU)
#   make test  the same build, then every test (ctest)
PRESET ?= release
JOBS   ?= $(shell nproc)
BIN    := build/$(PRESET)

.PHONY: all deps configure build run test clean format tidy

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@test -f $(BIN)/CMakeCache.txt || cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build $(BIN) -j $(JOBS)

# No NVIDIA driver here: gpuclk falls back to the simulated 4×H100 node and says so in one line.
# The build stays quiet: its progress goes to $(BIN)/build.log (not make's own "Entering
# directory" lines either: the inner make is not a sub-make of this one); the compiler's warnings
# and errors still show, and the log's end when the build fails.
run: configure
	@env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS cmake --build $(BIN) -j $(JOBS) >$(BIN)/build.log || \
	  { tail -n 30 $(BIN)/build.log; exit 1; }
	@GPUCLK_FALLBACK_SIM=1 $(BIN)/gpuclk

test: build
	@ctest --test-dir $(BIN) --output-on-failure --no-tests=error -j $(JOBS)

format:
	@git ls-files '*.cpp' '*.h' '*.cu' | xargs clang-format -i

tidy: configure
	@BUILD_DIR=$(BIN) TIDY=$${TIDY:-all} scripts/ci/check-rules.sh tidy

clean:
	rm -rf build
