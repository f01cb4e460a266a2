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
run: build
	@GPUCLK_FALLBACK_SIM=1 $(BIN)/gpuclk

test: build
	@ctest --test-dir $(BIN) --output-on-failure --no-tests=error -j $(JOBS)

format:
	@git ls-files '*.cpp' '*.h' '*.cu' | xargs clang-format -i

tidy: configure
	@git ls-files 'src/*.cpp' | xargs clang-tidy -p $(BIN) --quiet

clean:
	rm -rf build
