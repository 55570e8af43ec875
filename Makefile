# gensor — plain Makefile. `make` builds the library and CLI; `make demo` is
# the main job; `make test` runs the tests (plain and ASan/UBSan builds).
CC        ?= cc
CUDA_HOME ?= /usr/local/cuda
BUILD     ?= build
OPT       ?= -O2
CFLAGS_BASE := -std=c11 -Wall -Wextra -Werror -MMD -MP -fPIC -g \
               -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. -Iinclude \
               -DGS_CUDA_HOME='"$(CUDA_HOME)"'
CFLAGS    ?= $(OPT)
ALL_CFLAGS = $(CFLAGS_BASE) $(CFLAGS) $(EXTRA_CFLAGS)
LDLIBS    := -lgsl -lgslcblas -ljansson -lOpenCL -ldl -lm

LIB_SRC  := $(sort $(wildcard util/*.c ir/*.c hwmodel/*.c construct/*.c kernels/*.c))
CLI_SRC  := $(sort $(wildcard cli/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)

.PHONY: all deps demo test test-plain check-asan check-suites calibrate bench clean check-gpu compare \
        sass-tools check-sass bench-gpu compare-tuners tuners-venv

all: $(BUILD)/libgensor.a $(BUILD)/libgensor.so $(BUILD)/gensor

# ---- Debian packages: installed only when missing --------------------------
DEB_PKGS := libgsl-dev libjansson-dev ocl-icd-opencl-dev opencl-headers \
            pocl-opencl-icd clinfo libcriterion-dev gnuplot-nox
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null \
	    || { echo "deps: apt-get install failed for:$$missing" >&2; exit 1; }; \
	fi

# ---- static SASS checks: cuobjdump from PyPI into build/venv ----------------
# Nothing is installed system-wide but python3-venv (only when missing); the
# stamp makes a second run do nothing until the requirements file changes.
SASS_VENV := build/venv
SASS_REQ  := experiments/requirements-sass.txt
PYTHON    ?= python3
sass-tools: $(SASS_VENV)/.sass-tools
$(SASS_VENV)/.sass-tools: $(SASS_REQ)
	@dpkg-query -W -f='$${Status}' python3-venv 2>/dev/null | grep -q "install ok installed" || { \
	  echo "sass-tools: installing python3-venv"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq python3-venv >/dev/null \
	    || { echo "sass-tools: apt-get install failed for: python3-venv" >&2; exit 1; }; }
	@[ -x $(SASS_VENV)/bin/pip ] || { echo "sass-tools: creating $(SASS_VENV)"; rm -rf $(SASS_VENV); \
	  $(PYTHON) -m venv $(SASS_VENV) || { rm -rf $(SASS_VENV); echo "sass-tools: $(PYTHON) -m venv failed" >&2; exit 1; }; }
	@echo "sass-tools: pip install -r $(SASS_REQ) into $(SASS_VENV)"
	@$(SASS_VENV)/bin/pip install --disable-pip-version-check --no-cache-dir -q -r $(SASS_REQ) \
	  || { echo "sass-tools: pip install failed (no network to PyPI?)" >&2; exit 1; }
	@ls $(SASS_VENV)/lib/python3*/site-packages/nvidia/*/bin/cuobjdump >/dev/null 2>&1 \
	  || { echo "sass-tools: the wheel installed no nvidia/*/bin/cuobjdump" >&2; exit 1; }
	@touch $@

# make sass-tools is tried first; when it cannot install cuobjdump the check
# says SKIPPED (exit 0 only with GS_SASS_OPTIONAL=1).
check-sass: all
	@$(MAKE) --no-print-directory sass-tools || echo "check-sass: make sass-tools failed"
	@sh tests/sass_check.sh $(BUILD)/gensor

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/libgensor.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libgensor.so: $(LIB_OBJ)
	$(CC) -shared -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(BUILD)/gensor: $(CLI_OBJ) $(BUILD)/libgensor.a
	$(CC) -o $@ $(CLI_OBJ) $(BUILD)/libgensor.a $(LDFLAGS) $(LDLIBS)

$(BUILD)/gensor_tests: $(TEST_OBJ) $(BUILD)/libgensor.a
	$(CC) -o $@ $(TEST_OBJ) $(BUILD)/libgensor.a $(LDFLAGS) $(LDLIBS) -lcriterion

# ---- main job ---------------------------------------------------------------
demo: deps
	@$(MAKE) --no-print-directory all
	./$(BUILD)/gensor hw list
	./$(BUILD)/gensor construct --hw rtx4090 --seed 1 --top 3 'gemm M=4096 N=4096 K=4096'
	./$(BUILD)/gensor verify --hw rtx4090 --top 2 'gemm M=257 N=127 K=31 transA=1 alpha=1.5 beta=0.5'

# ---- tests ------------------------------------------------------------------
# Plain build first, then the same tests under ASan/UBSan (check-asan).
test: deps
	@$(MAKE) --no-print-directory test-plain
	@$(MAKE) --no-print-directory check-asan
	@sh tests/cli_errors.sh $(BUILD)/gensor

test-plain: $(BUILD)/gensor_tests $(BUILD)/gensor $(BUILD)/bench_gpu $(BUILD)/libgensor.so
	GS_GENSOR_BIN=$(BUILD)/gensor ./$(BUILD)/gensor_tests --jobs 2
	@sh tests/bench_gpu_dry.sh $(BUILD)
	@sh tests/api_check.sh $(BUILD)

check-asan:
	@$(MAKE) --no-print-directory BUILD=build-asan OPT=-O1 \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  LDFLAGS="-fsanitize=address,undefined" build-asan/gensor_tests build-asan/gensor
	ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 GS_ASAN=1 \
	  GS_GENSOR_BIN=build-asan/gensor ./build-asan/gensor_tests --jobs 2
	@sh tests/cli_errors.sh build-asan/gensor

$(BUILD)/calibrate: experiments/calibrate.c $(BUILD)/libgensor.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libgensor.a $(LDFLAGS) $(LDLIBS)

$(BUILD)/plans_bench: experiments/plans_bench.c $(BUILD)/libgensor.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libgensor.a $(LDFLAGS) $(LDLIBS)

$(BUILD)/dynamic: experiments/dynamic.c $(BUILD)/libgensor.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libgensor.a $(LDFLAGS) $(LDLIBS)

# GPU experiments: cuda_host.c holds the dlopen'd driver/cuBLAS declarations they share.
$(BUILD)/bench_gpu: experiments/bench_gpu.c $(BUILD)/obj/experiments/cuda_host.o $(BUILD)/libgensor.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/obj/experiments/cuda_host.o $(BUILD)/libgensor.a $(LDFLAGS) $(LDLIBS)

$(BUILD)/cublas_check: experiments/cublas_check.c $(BUILD)/obj/experiments/cuda_host.o $(BUILD)/libgensor.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/obj/experiments/cuda_host.o $(BUILD)/libgensor.a $(LDFLAGS) $(LDLIBS)

CALIB_DATA := ../shared/data
calibrate: $(BUILD)/calibrate
	./$(BUILD)/calibrate --xgemm $(CALIB_DATA)/xgemm_rtx3090_4096.csv \
	  --fidelity $(CALIB_DATA)/h100/fidelity_v1.csv --suite $(CALIB_DATA)/h100/suite_v1.csv $(CALIB_ARGS)

check-suites: $(BUILD)/gensor_tests
	GS_FULL_SUITES=1 ./$(BUILD)/gensor_tests --filter 'suites/*' --jobs 2

# GS_BENCH_FULL=1 runs the full dynamic-shape workloads (~15 min) instead of --quick.
bench: deps all $(BUILD)/calibrate $(BUILD)/dynamic $(BUILD)/plans_bench
	@sh experiments/bench.sh $(BUILD)/gensor
	@echo; echo "== reduction operators: v2 plans against the v1-style plan, predicted (experiments/plans_bench.c)"
	@./$(BUILD)/plans_bench --hw h100
	@echo; echo "== dynamic shapes (kernels/dispatch.c; experiments/dynamic.c)"
	@if [ -n "$$GS_BENCH_FULL" ]; then ./$(BUILD)/dynamic; else ./$(BUILD)/dynamic --quick; fi
	@if [ -f $(CALIB_DATA)/xgemm_rtx3090_4096.csv ] && [ -f $(CALIB_DATA)/h100/suite_v1.csv ]; then \
	  echo; echo "== model calibration (hwmodel/MODEL.md)"; \
	  ./$(BUILD)/calibrate --xgemm $(CALIB_DATA)/xgemm_rtx3090_4096.csv \
	    --fidelity $(CALIB_DATA)/h100/fidelity_v1.csv --suite $(CALIB_DATA)/h100/suite_v1.csv; \
	else echo "calibration data under $(CALIB_DATA) not found: calibration skipped"; fi

check-gpu: all $(BUILD)/cublas_check
	@sh experiments/check_gpu.sh $(BUILD)/gensor

# gensor's kernels vs cuBLAS and PyTorch on the CUDA device, when there is one
# (experiments/bench_gpu.sh; SKIPPED otherwise). HW=auto|NAME, REFINE=K,
# QUICK=1 (one operator per class), SUITES='list.json ...'.
HW     ?= auto
REFINE ?= 0
QUICK  ?= 0
SUITES ?= experiments/suites/paper.json $(sort $(wildcard experiments/models/*.json))
bench-gpu: all $(BUILD)/bench_gpu
	@HW='$(HW)' REFINE='$(REFINE)' QUICK='$(QUICK)' SUITES='$(SUITES)' sh experiments/bench_gpu.sh $(BUILD)

compare: all
	@sh experiments/compare.sh $(BUILD)/gensor $(BUILD)/compare

# gensor's constructors against Kernel Tuner's strategies on the OpenCL device
# (experiments/compare_tuners.py); QUICK=1: three small operators, budgets 10
# and 25. Kernel Tuner, pyopencl and numpy go into build/venv-tuners only.
TUNERS_VENV := build/venv-tuners
TUNERS_REQ  := experiments/requirements-tuners.txt
tuners-venv: $(TUNERS_VENV)/.tuners
$(TUNERS_VENV)/.tuners: $(TUNERS_REQ)
	@dpkg-query -W -f='$${Status}' python3-venv 2>/dev/null | grep -q "install ok installed" || { \
	  echo "tuners-venv: installing python3-venv"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq python3-venv >/dev/null \
	    || { echo "tuners-venv: apt-get install failed for: python3-venv" >&2; exit 1; }; }
	@[ -x $(TUNERS_VENV)/bin/pip ] || { echo "tuners-venv: creating $(TUNERS_VENV)"; rm -rf $(TUNERS_VENV); \
	  $(PYTHON) -m venv $(TUNERS_VENV) || { rm -rf $(TUNERS_VENV); echo "tuners-venv: $(PYTHON) -m venv failed" >&2; exit 1; }; }
	@echo "tuners-venv: pip install -r $(TUNERS_REQ) into $(TUNERS_VENV)"
	@$(TUNERS_VENV)/bin/pip install --disable-pip-version-check --no-cache-dir -q -r $(TUNERS_REQ) \
	  || { echo "tuners-venv: pip install failed (no network to PyPI?)" >&2; exit 1; }
	@touch $@

compare-tuners: deps all tuners-venv
	@$(TUNERS_VENV)/bin/python experiments/compare_tuners.py $(BUILD)/gensor $(BUILD)/compare-tuners \
	  $$([ "$(QUICK)" = 1 ] && echo --quick)

clean:
	rm -rf build build-asan

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/obj/experiments/cuda_host.d \
         $(BUILD)/bench_gpu.d $(BUILD)/cublas_check.d
