# The two commands of the README. Everything else is CMake (CMakePresets.json).
#   make run   install what is missing, build gpuclk, run it (the simulated node if no GPU)
#   make test  the same build plus the tests, simulator tools and fuzz replays, then every test
#   make install [PREFIX=/usr/local] [DESTDIR=]  build what is installed, then cmake --install
#   make deb   the Debian packages gpuclk and gpuclk-sim (build/*.deb; cmake/Package.cmake)
PRESET ?= release
JOBS   ?= $(shell nproc)
# The tests mostly wait (a simulated node's time, services starting; the ci suite used half of two
# cores at -j2): twice as many at once as there are cores.
TEST_JOBS ?= $(shell echo $$((2 * $$(nproc))))
BIN    := build/$(PRESET)
# What `make run` needs: the command (which builds gpuclk-serve too) and the simulator it falls
# back to. The tests, perf tools and fuzz replays are `make test`'s.
RUN_TARGETS := gpuclk nvml_sim
# What `make install` and `make deb` need: the programs, the simulator, the man pages and
# completions generated from gpuclk's command line, the packages' changelog.
INSTALL_TARGETS := gpuclk gpuclk-serve nvml_sim gpuclk_docs gpuclk_deb_changelog
PREFIX ?= /usr/local

.PHONY: all deps configure build run test install deb clean format tidy

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
	@ctest --test-dir $(BIN) --output-on-failure --no-tests=error -j $(TEST_JOBS)

# DESTDIR (a staging root) is passed on as cmake --install reads it, from the environment.
install: configure
	@cmake --build $(BIN) -j $(JOBS) --target $(INSTALL_TARGETS)
	@DESTDIR="$(DESTDIR)" cmake --install $(BIN) --prefix "$(PREFIX)"

# cpack stages and packages in $(BIN)/packages; the .debs are copied to build/ (apt-get install
# ./build/gpuclk_*.deb ./build/gpuclk-sim_*.deb). Needs dpkg-dev (dpkg-shlibdeps).
deb: configure
	@command -v dpkg-shlibdeps >/dev/null || { echo "make deb: dpkg-shlibdeps is missing (apt-get install dpkg-dev)" >&2; exit 1; }
	@cmake --build $(BIN) -j $(JOBS) --target $(INSTALL_TARGETS)
	@rm -f $(BIN)/packages/*.deb
	@cpack -G DEB -B $(CURDIR)/$(BIN)/packages --config $(BIN)/CPackConfig.cmake
	@cp $(BIN)/packages/*.deb build/
	@ls -l build/*.deb

format:
	@git ls-files '*.cpp' '*.h' '*.cu' | xargs clang-format -i

tidy: deps
	@TIDY=$${TIDY:-changed} TIDY_RECORD=1 scripts/ci/check-rules.sh tidy

clean:
	rm -rf build
