# Thin wrapper over CMake: the two Quick start commands (demo, test) and the GPU/bench checks.
BUILD     ?= build
GPU_BUILD ?= build-gpu
SAN_BUILD ?= build-sanitize
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=

.PHONY: all deps configure build test test-sanitize demo demo-build bench gpu-check format clean

all: build

# VIGOR_SKIP_DEPS=1: the dependencies come from elsewhere (a machine with no package manager
# access, the prefixes given in CMAKE_ARGS=-DCMAKE_PREFIX_PATH=...), so nothing is installed.
deps:
	@[ -n "$(VIGOR_SKIP_DEPS)" ] || bash scripts/install-deps.sh

# The Python package is built with a virtual environment in the build folder
# (scripts/python-env.sh: nanobind, NumPy, pytest from PyPI); without one it is left out and its
# tests skip. A build for testing (VIGOR_TESTING_ENGINES=ON): every engine ahead of time.
configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DVIGOR_TESTING_ENGINES=ON $(NO_GPU_CUDA_ARCH) \
	       $$(bash scripts/python-env.sh $(BUILD)/python-env) $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j$(JOBS)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

# `make demo` builds the `vigor` program alone (no tests, benchmarks or fuzzers). A build folder it
# creates is a program-only build (VIGOR_TESTING_ENGINES=OFF: the pairs of models/first_use.def
# compiled on first use, no scalar reference lanes), with the CUDA backend only where this machine
# has an NVIDIA GPU (nvidia-smi lists one): the CUDA engines take long to compile and a run without
# a GPU never uses them. A folder that exists keeps its choices (no reconfiguration, no rebuild).
# `make test` afterwards (and `make build` or `make bench`, which configure the same way) makes it
# a build for testing (every engine and the scalar reference: every unit compiles again) with the
# demo's CUDA choice; `make test` in a fresh folder builds both backends, as CI
# does. CMAKE_ARGS=-DVIGOR_ENABLE_CUDA=ON (or OFF) decides instead.
HAVE_GPU := $(shell nvidia-smi -L 2>/dev/null | grep -q '^GPU' && echo ON || echo OFF)

# A build for testing on a machine without a GPU compiles the CUDA engines to PTX only (90-virtual):
# nothing here can run them, and ptxas, the step from PTX to sm_90 machine code, was a quarter to a
# half of each CUDA unit's compile time (docs/building.md, Build time). The binaries still run on a
# GPU of compute capability 9.0 or newer (the driver compiles the PTX on first load). A build to
# carry to a GPU machine, and `make gpu-check`, give the architecture: CMAKE_ARGS (later on the
# command line) overrides this.
NO_GPU_CUDA_ARCH := $(if $(filter OFF,$(HAVE_GPU)),-DCMAKE_CUDA_ARCHITECTURES=90-virtual,)

demo-build: deps
	@if [ -f $(BUILD)/CMakeCache.txt ]; then \
	  [ -z "$(CMAKE_ARGS)" ] || cmake -S . -B $(BUILD) $(CMAKE_ARGS) >/dev/null; \
	else \
	  cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DVIGOR_ENABLE_CUDA=$(HAVE_GPU) \
	        -DVIGOR_TESTING_ENGINES=OFF $(CMAKE_ARGS) >/dev/null; \
	fi
	@cmake --build $(BUILD) --target vigor -j$(JOBS)

# The plot needs Python with matplotlib (an optional dependency): without it (exit 3) the demo
# still ends with the CSV results; any other plot failure fails the demo.
demo: demo-build
	./$(BUILD)/vigor run examples/henon_heiles.json --force
	@./$(BUILD)/vigor plot results/henon_heiles || { code=$$?; [ $$code -eq 3 ] || exit $$code; \
	  echo "demo: no figures (vigor plot needs python3-matplotlib)"; }
	@echo "demo: Henon-Heiles section at E = 1/8 in results/henon_heiles/ (sections.csv: y = q1, p_y = p1;"
	@echo "      figure: results/henon_heiles/plots/section.png)"

# The CPU tests under AddressSanitizer and UndefinedBehaviorSanitizer (any report fails the test);
# CI runs it after `make test`. Left out: the MPI test (Open MPI's own allocations read as leaks),
# and the package and fuzz tests, which build other programs against this build's objects with
# their own flags. -Og without forced inlining (VIGOR_NO_FORCED_INLINE): instrumenting every
# inlined copy of the numeric helpers made the build ~55 min of 2 cores at -O1 (one model's
# instantiations: 110 s, against 23 s optimised and 25 s this way) and its tests 3x slower.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
test-sanitize: deps
	cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVIGOR_ENABLE_CUDA=OFF \
	      -DVIGOR_TESTING_ENGINES=ON \
	      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-Og -g1" \
	      -DVIGOR_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS="$(SAN_FLAGS) -DVIGOR_NO_FORCED_INLINE" \
	      -DCMAKE_EXE_LINKER_FLAGS="$(SAN_FLAGS)" $(CMAKE_ARGS) >/dev/null
	cmake --build $(SAN_BUILD) -j$(JOBS)
	ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(SAN_BUILD) --output-on-failure -j$(JOBS) -E "^mpi\.|custom_model|fuzz"

bench: build
	./$(BUILD)/bench/vigor-bench --json bench/results/latest.json

# On a machine with an NVIDIA GPU: CUDA build for sm_90, every test with the GPU required, the bench.
# CMAKE_ARGS=-DVIGOR_CUDA_FMAD=OFF builds the GPU without nvcc's own contractions, and its tests then
# demand the CPU's bits on the GPU (docs/backends.md).
gpu-check: deps
	cmake -S . -B $(GPU_BUILD) -DCMAKE_BUILD_TYPE=Release -DVIGOR_ENABLE_CUDA=ON \
	      -DVIGOR_TESTING_ENGINES=ON \
	      -DVIGOR_REQUIRE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 $(CMAKE_ARGS)
	cmake --build $(GPU_BUILD) -j$(JOBS)
	VIGOR_REQUIRE_GPU=1 ctest --test-dir $(GPU_BUILD) --output-on-failure -j$(JOBS)
	./$(GPU_BUILD)/bench/vigor-bench --backend all --json bench/results/gpu-check.json

format:
	clang-format -i $$(git ls-files '*.hpp' '*.cpp' '*.cuh' '*.cu')

clean:
	rm -rf $(BUILD) $(GPU_BUILD) $(SAN_BUILD)
