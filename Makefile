# gensor — plain Makefile. `make` builds the library and CLI; `make demo` is
# the main job; `make test` runs the tests (plain and ASan/UBSan builds).
CC        ?= cc
CUDA_HOME ?= /usr/local/cuda
BUILD     ?= build
OPT       ?= -O2
# -ffp-contract=off: no fused multiply-add unless the source asks for one, so
# the model computes the same doubles on x86-64 and aarch64 (where GCC's GNU
# modes and clang would contract a*b+c) and ranks candidates identically.
# -fno-semantic-interposition: with -fPIC, GCC would otherwise call every
# exported function through its symbol and inline none of them within its own
# file (gs_knob_get, gs_etir_threads_axis, ...: 4 % of a construction); the
# shared library exports only the public API (its version script), so no
# symbol of ours is interposed.
CFLAGS_BASE := -std=c11 -Wall -Wextra -Werror -MMD -MP -fPIC -fno-semantic-interposition -g -ffp-contract=off \
               -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. -Iinclude \
               -DGS_CUDA_HOME='"$(CUDA_HOME)"'
CFLAGS    ?= $(OPT)
ALL_CFLAGS = $(CFLAGS_BASE) $(CFLAGS) $(EXTRA_CFLAGS)
LDLIBS    := -lgsl -lgslcblas -ljansson -lOpenCL -ldl -lm

# the rooms, bottom up (docs/ARCHITECTURE.md): each includes only those before it
LIB_ROOMS := util ir ir/onnx hwmodel/profile hwmodel/plan hwmodel/model construct kernels/codegen kernels/runtime \
             kernels/service
LIB_SRC  := $(foreach r,$(LIB_ROOMS),$(sort $(wildcard $(r)/*.c)))
CLI_SRC  := $(sort $(wildcard cli/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)

.PHONY: all deps install uninstall check-install check-tsan deps-aarch64 cross-aarch64 cross-build check-aarch64 deps-fuzz fuzz-build fuzz-targets fuzz fuzz-merge fuzz-short demo test test-plain test-unit test-scripts test-builds test-build-plain test-build-tsan test-build-fuzz test-build-asan check-cl-opt check-asan check-asan-unit check-suites calibrate bench bench-construct clean check-gpu compare \
        device-kit sass-tools check-sass check-nvrtc-mma mma-sweep bench-gpu compare-tuners tuners-venv onnx-venv onnx-conformance onnx-corpus onnx-ort-venv onnx-ort-check \
        python-venv check-python

all: $(BUILD)/libgensor.a $(BUILD)/libgensor.so $(BUILD)/gensor

# ---- Debian packages: installed only when missing --------------------------
DEB_PKGS := libgsl-dev libjansson-dev ocl-icd-opencl-dev opencl-headers \
            pocl-opencl-icd clinfo libcriterion-dev gnuplot-nox
# $(call apt_install,WHO,PACKAGES): apt-get install the packages of the list
# that dpkg does not have (as root, or through sudo); WHO prefixes messages.
apt_install = missing=""; for p in $(2); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "$(1): installing$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null \
	    || { echo "$(1): apt-get install failed for:$$missing" >&2; exit 1; }; \
	fi
deps:
	@$(call apt_install,deps,$(DEB_PKGS))
# $(call venv_pip,WHO,VENV,REQ): python3-venv (only when dpkg lacks it), the
# virtual environment VENV (only when it has no pip), then pip install -r REQ
# into it; nothing else is installed system-wide. Used by sass-tools and
# tuners-venv.
venv_pip = $(call apt_install,$(1),python3-venv); \
	[ -x $(2)/bin/pip ] || { echo "$(1): creating $(2)"; rm -rf $(2); \
	  $(PYTHON) -m venv $(2) || { rm -rf $(2); echo "$(1): $(PYTHON) -m venv failed" >&2; exit 1; }; }; \
	echo "$(1): pip install -r $(3) into $(2)"; \
	$(2)/bin/pip install --disable-pip-version-check --no-cache-dir -q -r $(3) \
	  || { echo "$(1): pip install failed (no network to PyPI?)" >&2; exit 1; }

# ---- aarch64: cross build, tests under qemu-user ----------------------------
# Debian's cross toolchain and arm64 libraries. libgsl-dev, libcriterion-dev
# and libnanomsg5 cannot be installed for two architectures at once (adding
# the arm64 ones would remove the amd64 ones the native build needs), so only
# the arm64 run-time GSL is installed and linked by soname, and the aarch64
# tests use tests/minicr (Criterion's macros over a fork-free runner; see
# tests/minicr/runner.c for why) instead of libcriterion.
A64_BUILD  := build-aarch64
A64_CC     := aarch64-linux-gnu-gcc
# qemu runs the binaries against the arm64 multiarch root (/lib/ld-linux-aarch64.so.1 and
# /lib/aarch64-linux-gnu: libc6:arm64, installed with libgsl27:arm64), not with
# -L /usr/aarch64-linux-gnu: that loader is the cross toolchain's glibc build while
# ld.so.cache sends libc.so.6 to the multiarch one, and with the two builds mixed every
# pthread_create hung (a four-line threaded program too), so each threaded test ran
# into its 900 s timeout
A64_QEMU   := qemu-aarch64 -L /
A64_PKGS   := gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user libgsl27:arm64 \
              libgslcblas0:arm64 libjansson-dev:arm64 ocl-icd-opencl-dev:arm64
A64_LDLIBS := -l:libgsl.so.27 -l:libgslcblas.so.0 -ljansson -lOpenCL -ldl -lm
MINICR_SRC := tests/minicr/runner.c tests/test_ir.c tests/test_hw.c tests/test_construct.c tests/test_common.c

deps-aarch64: deps
	@dpkg --print-foreign-architectures | grep -qx arm64 || { \
	  echo "deps-aarch64: dpkg --add-architecture arm64"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; $$SUDO dpkg --add-architecture arm64; }
	@$(call apt_install,deps-aarch64,$(A64_PKGS))

# The library, the CLI, every test object, and the tests that run under qemu.
cross-aarch64: deps-aarch64
	@$(MAKE) --no-print-directory BUILD=$(A64_BUILD) CC=$(A64_CC) LDLIBS="$(A64_LDLIBS)" cross-build
cross-build: $(BUILD)/libgensor.a $(BUILD)/libgensor.so $(BUILD)/gensor $(TEST_OBJ) $(BUILD)/minicr_tests

$(BUILD)/minicr_tests: $(MINICR_SRC) tests/minicr/criterion/criterion.h $(BUILD)/libgensor.a
	$(CC) $(filter-out -MMD -MP,$(ALL_CFLAGS)) -Itests/minicr -o $@ $(MINICR_SRC) $(BUILD)/libgensor.a $(LDFLAGS) $(LDLIBS)

check-aarch64: cross-aarch64
	@$(MAKE) --no-print-directory $(BUILD)/gensor
	@QEMU_AARCH64="$(A64_QEMU)" sh tests/check_aarch64.sh $(A64_BUILD) $(BUILD)/gensor

# ---- threads: tests/tsan_threads.c under ThreadSanitizer (in make test) -----
TSAN_BUILD := build-tsan
check-tsan:
	@$(MAKE) --no-print-directory $(TSAN_FLAGS) $(TSAN_BUILD)/tsan_threads
	TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=tests/tsan.supp" ./$(TSAN_BUILD)/tsan_threads
$(BUILD)/tsan_threads: tests/tsan_threads.c $(BUILD)/libgensor.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libgensor.a $(LDFLAGS) $(LDLIBS) -lpthread

# ---- fuzzing: libFuzzer targets of tests/fuzz/ (clang, ASan + UBSan) -------
# make fuzz: each target for FUZZ_SECONDS on its committed seed corpus
# tests/fuzz/<t>/ plus a working corpus in build-fuzz/corpus/<t>/ (new inputs
# go there; make fuzz-merge minimises both back into tests/fuzz/<t>/).
# make fuzz-short (in make test): every committed input once, then
# FUZZ_SHORT seconds of fuzzing per target, TEST_JOBS targets at a time. A
# crash leaves build-fuzz/crash-*.
FUZZ_BUILD   := build-fuzz
FUZZ_TARGETS := spec config profile suite etir cache onnx
FUZZ_PKGS    := clang libclang-rt-14-dev
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_SECONDS ?= 60
FUZZ_SHORT   ?= 3
FUZZ_RUN      = ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(FUZZ_BUILD)/fuzz_$(1) \
                -artifact_prefix=$(FUZZ_BUILD)/crash-$(1)- -print_final_stats=1 $(if $(filter suite,$(1)),-close_fd_mask=3)

deps-fuzz:
	@$(call apt_install,deps-fuzz,$(FUZZ_PKGS))

fuzz-build: deps deps-fuzz
	@$(MAKE) --no-print-directory test-build-fuzz
fuzz-targets: $(FUZZ_TARGETS:%=$(BUILD)/fuzz_%)

# the suite target calls gs_cli_suite, so it links the CLI (main.c with its main renamed)
$(BUILD)/obj/cli/main_lib.o: cli/main.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Dmain=gs_cli_main_unused -c $< -o $@
$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(BUILD)/libgensor.a $(CLI_OBJ) $(BUILD)/obj/cli/main_lib.o
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $< \
	  $(if $(filter fuzz_suite,$(notdir $@)),$(filter-out %/main.o,$(CLI_OBJ)) $(BUILD)/obj/cli/main_lib.o) \
	  $(BUILD)/libgensor.a $(LDFLAGS) $(LDLIBS)

fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do mkdir -p $(FUZZ_BUILD)/corpus/$$t; done
	@fail=0; for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz_$$t: $(FUZZ_SECONDS) s"; \
	  $(call FUZZ_RUN,$$t) -max_total_time=$(FUZZ_SECONDS) $(FUZZ_BUILD)/corpus/$$t tests/fuzz/$$t \
	    2>$(FUZZ_BUILD)/fuzz_$$t.log || { fail=1; echo "fuzz_$$t: FAILED (see $(FUZZ_BUILD)/fuzz_$$t.log)"; }; \
	  grep -E '^stat::(number_of_executed_units|new_units_added)' $(FUZZ_BUILD)/fuzz_$$t.log | tr '\n' ' '; echo; \
	done; exit $$fail

fuzz-merge: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	  rm -rf $(FUZZ_BUILD)/merged/$$t && mkdir -p $(FUZZ_BUILD)/merged/$$t $(FUZZ_BUILD)/corpus/$$t && \
	  $(FUZZ_BUILD)/fuzz_$$t -merge=1 -artifact_prefix=$(FUZZ_BUILD)/merge-crash-$$t- $(if $(filter suite,$$t),-close_fd_mask=3) $(FUZZ_BUILD)/merged/$$t tests/fuzz/$$t $(FUZZ_BUILD)/corpus/$$t 2>/dev/null && \
	  keep=$$(ls tests/fuzz/$$t | grep '^regress-' || true) && \
	  find tests/fuzz/$$t -type f ! -name 'regress-*' -delete && cp $(FUZZ_BUILD)/merged/$$t/* tests/fuzz/$$t/ && \
	  echo "fuzz-merge: tests/fuzz/$$t: $$(ls tests/fuzz/$$t | wc -l) files, $$(cat tests/fuzz/$$t/* | wc -c) bytes"; \
	  $(call FUZZ_RUN,$$t) tests/fuzz/$$t/* >/dev/null 2>&1 || { \
	    echo "fuzz-merge: an input of tests/fuzz/$$t fails (-merge=1 keeps crashing inputs): make fuzz-short"; exit 1; }; \
	done

# Each target is one libFuzzer run: its seed corpus tests/fuzz/<t> is loaded
# first (every committed input runs once; a crash there, before libFuzzer's
# INITED line, is a committed input failing), then FUZZ_SHORT seconds of
# fuzzing. The targets run TEST_JOBS at a time, the longest (suite: its 540
# inputs construct, about 20 s) first; -O prints each one's lines whole.
FUZZ_SHORT_ORDER := suite $(filter-out suite,$(FUZZ_TARGETS))
fuzz-short: fuzz-build
	@$(MAKE) --no-print-directory -k -j$(TEST_JOBS) -Otarget $(FUZZ_SHORT_ORDER:%=fuzz-short-%); rc=$$?; \
	n=$$(ls tests/fuzz/*/* | wc -l); \
	if [ $$rc = 0 ]; then echo "fuzz-short: $(words $(FUZZ_TARGETS)) targets, $$n committed inputs and $(FUZZ_SHORT) s each: 0 crashes"; fi; exit $$rc
fuzz-short-%:
	@mkdir -p $(FUZZ_BUILD)/short/$*
	@$(call FUZZ_RUN,$*) -max_total_time=$(FUZZ_SHORT) $(FUZZ_BUILD)/short/$* tests/fuzz/$* >/dev/null \
	  2>$(FUZZ_BUILD)/fuzz_$*.log || { \
	  if grep -q INITED $(FUZZ_BUILD)/fuzz_$*.log; then echo "fuzz_$*: crashed while fuzzing:"; \
	  else echo "fuzz_$*: a committed input of tests/fuzz/$* fails:"; fi; \
	  tail -n 20 $(FUZZ_BUILD)/fuzz_$*.log; exit 1; }

# ---- static SASS checks: cuobjdump from PyPI into build/venv ----------------
# Nothing is installed system-wide but python3-venv (only when missing); the
# stamp makes a second run do nothing until the requirements file changes.
SASS_VENV := build/venv
SASS_REQ  := experiments/requirements-sass.txt
PYTHON    ?= python3
sass-tools: $(SASS_VENV)/.sass-tools
$(SASS_VENV)/.sass-tools: $(SASS_REQ)
	@$(call venv_pip,sass-tools,$(SASS_VENV),$(SASS_REQ))
	@ls $(SASS_VENV)/lib/python3*/site-packages/nvidia/*/bin/cuobjdump >/dev/null 2>&1 \
	  || { echo "sass-tools: the wheel installed no nvidia/*/bin/cuobjdump" >&2; exit 1; }
	@touch $@

# The tensor-core NVRTC sweep (issue 20): suite GEMM/bgemm/conv in f16, bf16
# and tf32 for sm_80/86/87/89/90 and f16 for sm_75, 0 spills; gemm 4096^3
# f16/bf16 must pick mma (make test runs its --quick form).
check-nvrtc-mma: all
	@sh tests/nvrtc_mma.sh $(BUILD)/gensor

# make sass-tools is tried first; when it cannot install cuobjdump the check
# says SKIPPED (exit 0 only with GS_SASS_OPTIONAL=1).
check-sass: all
	@$(MAKE) --no-print-directory sass-tools || echo "check-sass: make sass-tools failed"
	@sh tests/sass_check.sh $(BUILD)/gensor

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The construction's hot files (the walk and polish, the plan, the model, the
# ETIR's rules) at -O3 where the build is -O2: 7.2 % fewer instructions per
# construction (experiments/construct_instr.sh: 749.1 -> 695.0 M), about 5 %
# less wall time, 0.3 MB more code; the same doubles (-O3 does not reassociate
# floating point, -ffp-contract=off still holds), so every pick, kernel and
# table is byte-identical (tests/snapshot.sh). OPT=-O0/-O1 builds (debug, the
# sanitizers) keep their level: OPT_HOT= turns it off.
HOT_SRC := construct/markov.c hwmodel/plan/plan.c hwmodel/model/model.c ir/etir.c
OPT_HOT ?= $(if $(filter -O2,$(OPT)),-O3)
$(HOT_SRC:%.c=$(BUILD)/obj/%.o): ALL_CFLAGS += $(OPT_HOT)

$(BUILD)/libgensor.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# libgensor.so.VERSION with soname libgensor.so.MAJOR, and the two links, as installed
# exporting only the functions of include/gensor.h (a version script made by
# tests/api_names.sh): internal gs_* helpers stay private
$(BUILD)/gensor.map: include/gensor.h tests/api_names.sh
	@mkdir -p $(BUILD)
	{ echo '{ global:'; sh tests/api_names.sh "$(CC)" | sed 's/$$/;/'; echo 'local: *; };'; } >$@
$(BUILD)/libgensor.so: $(LIB_OBJ) $(BUILD)/gensor.map Makefile
	$(CC) -shared -Wl,-soname,libgensor.so.$(SOMAJOR) -Wl,--version-script=$(BUILD)/gensor.map -o $@.$(VERSION) $(LIB_OBJ) $(LDFLAGS) $(LDLIBS)
	ln -sf libgensor.so.$(VERSION) $@.$(SOMAJOR)
	ln -sf libgensor.so.$(SOMAJOR) $@

$(BUILD)/gensor: $(CLI_OBJ) $(BUILD)/libgensor.a
	$(CC) -o $@ $(CLI_OBJ) $(BUILD)/libgensor.a $(LDFLAGS) $(LDLIBS)

$(BUILD)/gensor_tests: $(TEST_OBJ) $(BUILD)/libgensor.a
	$(CC) -o $@ $(TEST_OBJ) $(BUILD)/libgensor.a $(LDFLAGS) $(LDLIBS) -lcriterion

# ---- install ------------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=staging]: the header, libgensor.a,
# libgensor.so.$(VERSION) with soname libgensor.so.$(SOMAJOR) and its two links,
# the CLI, gensor.1 (made from the CLI's --help texts by cli/mkman.sh) and
# gensor.pc. make uninstall removes exactly those.
VERSION    := $(shell sed -n 's/^\#define GS_VERSION_STRING "\(.*\)"/\1/p' include/gensor.h)
SOMAJOR    := $(firstword $(subst ., ,$(VERSION)))
PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
PC_LIBS_PRIVATE := $(LDLIBS) -lpthread

$(BUILD)/gensor.1: $(BUILD)/gensor cli/mkman.sh
	sh cli/mkman.sh $(BUILD)/gensor >$@.tmp && mv $@.tmp $@

install: $(BUILD)/libgensor.a $(BUILD)/libgensor.so $(BUILD)/gensor $(BUILD)/gensor.1
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 644 include/gensor.h $(DESTDIR)$(INCLUDEDIR)/gensor.h
	install -m 644 $(BUILD)/libgensor.a $(DESTDIR)$(LIBDIR)/libgensor.a
	install -m 755 $(BUILD)/libgensor.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libgensor.so.$(VERSION)
	ln -sf libgensor.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libgensor.so.$(SOMAJOR)
	ln -sf libgensor.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libgensor.so
	install -m 755 $(BUILD)/gensor $(DESTDIR)$(BINDIR)/gensor
	install -m 644 $(BUILD)/gensor.1 $(DESTDIR)$(MANDIR)/man1/gensor.1
	printf '%s\n' 'prefix=$(PREFIX)' 'exec_prefix=$${prefix}' 'libdir=$(LIBDIR:$(PREFIX)%=$${prefix}%)' \
	  'includedir=$(INCLUDEDIR:$(PREFIX)%=$${prefix}%)' '' 'Name: gensor' \
	  'Description: graph-based GPU tensor-kernel constructor (CUDA C and OpenCL C)' 'Version: $(VERSION)' \
	  'Libs: -L$${libdir} -lgensor' 'Libs.private: $(PC_LIBS_PRIVATE)' 'Cflags: -I$${includedir}' \
	  >$(DESTDIR)$(LIBDIR)/pkgconfig/gensor.pc

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/gensor.h $(DESTDIR)$(LIBDIR)/libgensor.a \
	  $(DESTDIR)$(LIBDIR)/libgensor.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libgensor.so.$(SOMAJOR) \
	  $(DESTDIR)$(LIBDIR)/libgensor.so $(DESTDIR)$(BINDIR)/gensor $(DESTDIR)$(MANDIR)/man1/gensor.1 \
	  $(DESTDIR)$(LIBDIR)/pkgconfig/gensor.pc

check-install: all
	@sh tests/install_test.sh $(BUILD)

# ---- main job ---------------------------------------------------------------
# The table and the verdict on the terminal; the ~400-line kernel goes to
# files under $(BUILD)/demo/ (the 'wrote' line names them).
demo: deps
	@$(MAKE) --no-print-directory all
	./$(BUILD)/gensor hw list
	./$(BUILD)/gensor construct --hw rtx4090 --seed 1 --top 3 --out $(BUILD)/demo 'gemm M=4096 N=4096 K=4096'
	@echo "demo: the best candidate's kernel is in the files of the 'wrote' line above (CUDA .cu, OpenCL .cl,"
	@echo "      launch description .json); without --out, construct prints the CUDA kernel after the table"
	./$(BUILD)/gensor verify --hw rtx4090 --top 2 'gemm M=257 N=127 K=31 transA=1 alpha=1.5 beta=0.5'

# ---- tests ------------------------------------------------------------------
# make test: every build first, in parallel (test-builds: the plain build and
# the TSan, fuzz and ASan/UBSan builds), then the unit tests (every
# tests/test_*.c: a new suite runs in stages 2 and 6 without wiring), the
# scripts, TSan, a short fuzz pass, and the unit tests and cli_errors under
# ASan/UBSan. tests/stage.sh prints each stage's banner with its expected
# length on a first run (cold builds and PoCL kernel cache) on 2 idle cores,
# then its wall and CPU time (user+sys): on a busy machine the CPU time over 2
# is what the stage costs. Later runs reuse the builds and PoCL's kernel cache
# (~/.cache/pocl) and are shorter.
#
# The unit tests build their OpenCL kernels with PoCL's optimiser off
# (TEST_CL_FLAGS, passed as POCL_EXTRA_BUILD_FLAGS): the kernels' semantics are
# the same and PoCL builds them ~30x faster (an optimised build of a kernel with
# a large register tile takes ~30 s of CPU). The optimised builds keep their
# quick form in make test: the scripts of stage 3 (the ONNX node tests, the
# ONNX chain, cli_errors' verify and the API demo) run every kernel through
# PoCL's optimiser, and opencl/cold_build_writes_no_warnings builds a large
# gemm with it. make check-cl-opt runs all the unit tests with the optimiser
# (what make test's unit stage did before). PoCL's cache keys include the
# flags, so an unoptimised build is never served to an optimised one.
TEST_JOBS     ?= 2
TEST_CL_FLAGS ?= -cl-opt-disable
ASAN_FLAGS    := BUILD=build-asan OPT=-O1 LDFLAGS="-fsanitize=address,undefined" \
                 EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
TSAN_FLAGS    := BUILD=$(TSAN_BUILD) OPT=-O1 EXTRA_CFLAGS="-fsanitize=thread" LDFLAGS="-fsanitize=thread"
STAGE          = sh tests/stage.sh
test: deps
	@echo "make test: 7 stages, about 12 min in all on a first run on 2 idle cores; 2 and 6 are the long ones"
	@$(STAGE) "1/7: every build (plain, TSan, fuzz, ASan/UBSan; make -j$(TEST_JOBS) test-builds): about 3 min" \
	  $(MAKE) --no-print-directory -j$(TEST_JOBS) test-builds
	@$(STAGE) "2/7: unit tests (gensor_tests on the OpenCL device, PoCL unoptimised): about 4.5 min" \
	  $(MAKE) --no-print-directory test-unit
	@$(STAGE) "3/7: ONNX, bench-gpu, calibrate, API, tuner, install, CLI and Python checks (PoCL optimised), two at a time: about 45 s" \
	  $(MAKE) --no-print-directory test-scripts
	@$(STAGE) "4/7: threads under ThreadSanitizer (check-tsan): about 45 s" \
	  $(MAKE) --no-print-directory check-tsan
	@$(STAGE) "5/7: every fuzz target for $(FUZZ_SHORT) s (fuzz-short), two at a time: about 25 s" \
	  $(MAKE) --no-print-directory fuzz-short
	@$(STAGE) "6/7: unit tests under ASan/UBSan (check-asan): about 3.5 min" \
	  $(MAKE) --no-print-directory check-asan-unit
	@$(STAGE) "7/7: bad input to the CLI under ASan/UBSan (tests/cli_errors.sh build-asan/gensor): about 10 s" \
	  sh tests/cli_errors.sh build-asan/gensor
	@echo; echo "make test: all 7 stages passed"

# test-builds: one make per build directory, run side by side under -j
test-builds: test-build-plain test-build-tsan test-build-fuzz test-build-asan
# (minicr_tests: the aarch64 runner's build, native, so that a test using a
# Criterion macro tests/minicr lacks fails here and not first under qemu)
test-build-plain:
	@$(MAKE) --no-print-directory $(BUILD)/gensor_tests $(BUILD)/gensor $(BUILD)/bench_gpu $(BUILD)/libgensor.so \
	  $(BUILD)/calibrate $(BUILD)/onnx_run $(BUILD)/gensor.1 $(BUILD)/minicr_tests
test-build-tsan:
	@$(MAKE) --no-print-directory $(TSAN_FLAGS) $(TSAN_BUILD)/tsan_threads
test-build-fuzz: deps-fuzz
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang OPT=-O1 \
	  EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" fuzz-targets
test-build-asan:
	@$(MAKE) --no-print-directory $(ASAN_FLAGS) build-asan/gensor_tests build-asan/gensor

test-unit: test-build-plain
	GS_GENSOR_BIN=$(BUILD)/gensor POCL_EXTRA_BUILD_FLAGS="$(TEST_CL_FLAGS)" ./$(BUILD)/gensor_tests --jobs $(TEST_JOBS)

# The scripts are independent (each works in its own mktemp directory) and
# nearly single-threaded, so they run TEST_JOBS at a time, the longest first
# (onnx_nodes about 70 s on 2 shared cores, calibrate_holdout and bench_gpu_dry 12 s each);
# -O prints each script's lines whole, -k runs them all when one fails.
TEST_SCRIPTS := onnx-nodes calibrate-holdout bench-gpu-dry nvrtc-mma onnx-manifest cli-errors api-check \
                install-test tuner-args
test-scripts: test-build-plain
	@$(MAKE) --no-print-directory -k -j$(TEST_JOBS) -Otarget $(TEST_SCRIPTS:%=test-script-%)
	@if $(MAKE) --no-print-directory python-venv; then $(MAKE) --no-print-directory check-python; \
	elif [ "$$GS_REQUIRE_PYTHON" = 1 ]; then exit 1; \
	else echo "check-python: SKIPPED: no $(PY_VENV) (pip could not install numpy or ./python; GS_REQUIRE_PYTHON=1 fails here)"; fi

.PHONY: $(TEST_SCRIPTS:%=test-script-%)
test-script-onnx-nodes:        ; @sh tests/onnx_nodes.sh $(BUILD)
test-script-calibrate-holdout: ; @sh tests/calibrate_holdout.sh $(BUILD)
test-script-bench-gpu-dry:     ; @sh tests/bench_gpu_dry.sh $(BUILD)
test-script-nvrtc-mma:         ; @sh tests/nvrtc_mma.sh $(BUILD)/gensor --quick
test-script-onnx-manifest:     ; @sh tests/onnx_manifest.sh $(BUILD)
test-script-cli-errors:        ; @sh tests/cli_errors.sh $(BUILD)/gensor
test-script-api-check:         ; @sh tests/api_check.sh $(BUILD)
test-script-install-test:      ; @sh tests/install_test.sh $(BUILD)
test-script-tuner-args:        ; @python3 tests/tuner_args_check.py $(BUILD)/gensor

# the plain build's unit tests and scripts (make test's stages 2 and 3)
test-plain: test-unit test-scripts

# every unit test with PoCL's optimiser on (not in make test: ~10 min more on a cold PoCL cache)
check-cl-opt: test-build-plain
	GS_GENSOR_BIN=$(BUILD)/gensor ./$(BUILD)/gensor_tests --jobs $(TEST_JOBS)

check-asan-unit: test-build-asan
	ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 GS_ASAN=1 GS_GENSOR_BIN=build-asan/gensor \
	  POCL_EXTRA_BUILD_FLAGS="$(TEST_CL_FLAGS)" ./build-asan/gensor_tests --jobs $(TEST_JOBS)
check-asan: check-asan-unit
	@sh tests/cli_errors.sh build-asan/gensor

$(BUILD)/onnx_run: tests/onnx_run.c $(BUILD)/libgensor.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libgensor.a $(LDFLAGS) $(LDLIBS)

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
# CALIB_ARGS=--holdout adds the held-out validation (k-fold and across GPUs; hwmodel/MODEL.md)
calibrate: $(BUILD)/calibrate
	./$(BUILD)/calibrate --xgemm $(CALIB_DATA)/xgemm_rtx3090_4096.csv \
	  --fidelity $(CALIB_DATA)/h100/fidelity_v1.csv --suite $(CALIB_DATA)/h100/suite_v1.csv $(CALIB_ARGS)

# the wider PoCL sweep of the tensor-core printers (tests/mma_sweep.sh; minutes)
mma-sweep: all
	sh tests/mma_sweep.sh $(BUILD)/gensor

# the full forms of make test's two compile sweeps: every distinct suite kernel
# (about an hour of CPU) and the NVRTC sweep's top 3 on every profile
check-suites: $(BUILD)/gensor_tests
	GS_FULL_SUITES=1 ./$(BUILD)/gensor_tests --filter 'kernels/nvrtc_sweep_*' --jobs 2
	GS_FULL_SUITES=1 ./$(BUILD)/gensor_tests --filter 'suites/*' --jobs 2

# GS_BENCH_FULL=1 runs the full dynamic-shape workloads (~15 min) instead of --quick.
bench: deps all $(BUILD)/calibrate $(BUILD)/dynamic $(BUILD)/plans_bench
	@sh experiments/bench.sh $(BUILD)/gensor
	@echo; echo "== reduction operators: v2 plans against the v1-style plan, predicted (experiments/plans_bench.c)"
	@./$(BUILD)/plans_bench --hw h100
	@echo; echo "== dynamic shapes (kernels/service/dispatch.c; experiments/dynamic.c)"
	@if [ -n "$$GS_BENCH_FULL" ]; then ./$(BUILD)/dynamic; else ./$(BUILD)/dynamic --quick; fi
	@if [ -f $(CALIB_DATA)/xgemm_rtx3090_4096.csv ] && [ -f $(CALIB_DATA)/h100/suite_v1.csv ]; then \
	  echo; echo "== model calibration (docs/MODEL.md)"; \
	  ./$(BUILD)/calibrate --xgemm $(CALIB_DATA)/xgemm_rtx3090_4096.csv \
	    --fidelity $(CALIB_DATA)/h100/fidelity_v1.csv --suite $(CALIB_DATA)/h100/suite_v1.csv --holdout; \
	else echo "calibration data under $(CALIB_DATA) not found: calibration skipped"; fi

# construction time per operator over the suite and model lists, with each pick's predicted
# time (experiments/construct_time.sh; GS_CT_REPS, GS_CT_PROFILES; --diff compares two runs)
bench-construct: all
	@sh experiments/construct_time.sh $(BUILD)/gensor $(BUILD)/construct_time.tsv

# what a lent GPU machine needs to run the device checks in one call (experiments/device/:
# kit.sh here, run.sh there; docs/OPERATIONS.md, "A lent GPU machine")
device-kit:
	@sh experiments/device/kit.sh

check-gpu: all $(BUILD)/cublas_check $(BUILD)/bench_gpu
	@sh experiments/check_gpu.sh $(BUILD)/gensor

# gensor's kernels vs cuBLAS and PyTorch on the CUDA device, when there is one
# (experiments/bench_gpu.sh; SKIPPED otherwise). HW=auto|NAME, REFINE=K,
# QUICK=1 (one operator per class), SUITES='list.json ...' (default: the script's: the paper
# suite and every model list, or with DTYPE=f16|bf16 the half lists), DTYPE=f32|f16|bf16|tf32.
HW     ?= auto
REFINE ?= 0
QUICK  ?= 0
SUITES ?=
DTYPE  ?= f32
bench-gpu: all $(BUILD)/bench_gpu
	@HW='$(HW)' REFINE='$(REFINE)' QUICK='$(QUICK)' SUITES='$(SUITES)' DTYPE='$(DTYPE)' sh experiments/bench_gpu.sh $(BUILD)

compare: all
	@sh experiments/compare.sh $(BUILD)/gensor $(BUILD)/compare

# gensor's constructors against Kernel Tuner's strategies on the OpenCL device
# (experiments/compare_tuners.py); QUICK=1: a smoke run (minutes): three small operators,
# budget 5, --refine 3, PoCL without optimisation. Kernel Tuner, pyopencl and numpy go into build/venv-tuners only.
TUNERS_VENV := build/venv-tuners
TUNERS_REQ  := experiments/requirements-tuners.txt
tuners-venv: $(TUNERS_VENV)/.tuners
$(TUNERS_VENV)/.tuners: $(TUNERS_REQ)
	@$(call venv_pip,tuners-venv,$(TUNERS_VENV),$(TUNERS_REQ))
	@touch $@

compare-tuners: deps all tuners-venv
	@$(TUNERS_VENV)/bin/python experiments/compare_tuners.py $(BUILD)/gensor $(BUILD)/compare-tuners \
	  $$([ "$(QUICK)" = 1 ] && echo --quick) $$([ -n "$(BUDGETS)" ] && echo --budgets $(BUDGETS))

# The ONNX backend node tests: the pinned `onnx` package (into build/venv-onnx
# only) writes all of them (tests/onnx/gen_nodes.py, ~1900, ~60 MB) into
# build/onnx-nodes; tests/onnx_nodes.sh runs every one through the public API
# on the OpenCL device against tests/onnx/node_status.txt (make test runs the
# committed subset tests/data/onnx_nodes). build/onnx-node-status.txt gets
# this run's statuses (copy it over the committed file when a change is meant);
# make onnx-corpus rewrites the committed subset: the tests the file says pass.
ONNX_VENV := build/venv-onnx
ONNX_REQ  := experiments/requirements-onnx.txt
onnx-venv: $(ONNX_VENV)/.onnx
$(ONNX_VENV)/.onnx: $(ONNX_REQ)
	@$(call venv_pip,onnx-venv,$(ONNX_VENV),$(ONNX_REQ))
	@touch $@

onnx-conformance: deps $(BUILD)/onnx_run onnx-venv
	@rm -rf $(BUILD)/onnx-nodes
	@$(ONNX_VENV)/bin/python tests/onnx/gen_nodes.py $(BUILD)/onnx-nodes
	@./$(BUILD)/onnx_run --write-status $(BUILD)/onnx-node-status.txt $(BUILD)/onnx-nodes > /dev/null
	@sh tests/onnx_nodes.sh $(BUILD) $(BUILD)/onnx-nodes

# Imported models against ONNX Runtime: each model of ONNX_ORT_MODELS (the light
# zoo models of the onnx wheel by name, or a path; :dim=N,... binds dims)
# through `gensor import --construct`, its manifest run by build/onnx_run on
# the OpenCL device, every kernel output compared with ONNX Runtime's
# (experiments/onnx_ort_check.sh; light_resnet50 takes ~5 min on PoCL cold).
# @dim=N,... runs the kernels constructed at the dims before it at these: the
# BERT and GPT-2 blocks (experiments/onnx_blocks.py) and the torch-style attention
# whose shapes the import folds (tests/data/onnx/gen_shapes.py) built for seq 8 run at 13.
# %f16 or %bf16: the model converted to that type (FLOAT casts at its edges),
# against ONNX Runtime on its FLOAT twin at 16 u (BERT and GPT-2 in f16).
ONNX_ORT_REQ    := experiments/requirements-onnx-ort.txt
ONNX_ORT_MODELS ?= light_squeezenet light_resnet50 tests/data/onnx/bert.onnx:batch=2,seq=8@seq=13 \
                   tests/data/onnx/gpt2.onnx:batch=2,seq=8@seq=13 tests/data/onnx/bert.onnx:batch=2,seq=8%f16 \
                   tests/data/onnx/gpt2.onnx:batch=2,seq=8%f16 tests/data/onnx/attn_shapes.onnx:batch=2,seq=8@seq=13 \
                   tests/data/onnx/shapes.onnx:batch=2,seq=5
onnx-ort-venv: $(ONNX_VENV)/.ort
$(ONNX_VENV)/.ort: $(ONNX_ORT_REQ)
	@$(call venv_pip,onnx-ort-venv,$(ONNX_VENV),$(ONNX_ORT_REQ))
	@touch $@
onnx-ort-check: deps all $(BUILD)/onnx_run onnx-ort-venv
	@sh experiments/onnx_ort_check.sh $(BUILD) $(ONNX_VENV)/bin/python $(BUILD)/onnx-ort $(ONNX_ORT_MODELS)

onnx-corpus: onnx-venv
	@grep ' pass$$' tests/onnx/node_status.txt > $(BUILD)/onnx-pass.txt
	@rm -rf tests/data/onnx_nodes
	@$(ONNX_VENV)/bin/python tests/onnx/gen_nodes.py tests/data/onnx_nodes --only $(BUILD)/onnx-pass.txt

# The Python package (python/, ctypes over libgensor.so; docs/PYTHON.md): numpy into
# build/venv-python (created once), then `pip install ./python` there whenever the package
# changed, then python/tests against $(BUILD)/libgensor.so (GENSOR_LIB) on the OpenCL device.
# make test runs it in its scripts stage (a few seconds once the venv exists); there, a venv
# that cannot be made (no network to PyPI) is reported as SKIPPED unless GS_REQUIRE_PYTHON=1.
PY_VENV := $(BUILD)/venv-python
PY_REQ  := python/requirements-check.txt
PY_PKG  := python/pyproject.toml python/README.md $(wildcard python/gensor/*.py)
python-venv: $(PY_VENV)/.gensor
$(PY_VENV)/.numpy: $(PY_REQ)
	@$(call venv_pip,python-venv,$(PY_VENV),$(PY_REQ))
	@touch $@
$(PY_VENV)/.gensor: $(PY_VENV)/.numpy $(PY_PKG)
	@echo "python-venv: pip install ./python into $(PY_VENV)"
	@$(PY_VENV)/bin/pip install --disable-pip-version-check --no-cache-dir -q ./python \
	  || { echo "python-venv: pip install ./python failed" >&2; exit 1; }
	@touch $@
check-python: $(BUILD)/libgensor.so python-venv
	@cd python/tests && GENSOR_LIB=$(abspath $(BUILD)/libgensor.so) $(abspath $(PY_VENV))/bin/python -m unittest test_gensor

clean:
	rm -rf build build-dev build-asan $(A64_BUILD) $(FUZZ_BUILD) $(TSAN_BUILD)

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/obj/experiments/cuda_host.d \
         $(BUILD)/bench_gpu.d $(BUILD)/cublas_check.d
