/* test_common.h — what the test files share (tests/test_common.c): finding
 * the data files, temporary directories, opening the OpenCL device and
 * loading NVRTC (skipping with the reason, or failing where CI requires the
 * backend), and error checks. */
#ifndef GS_TEST_COMMON_H
#define GS_TEST_COMMON_H

#include "kernels/service/service.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when the environment variable is set, non-empty and not "0". */
bool gs_test_env_true(const char *name);

/* Whether case i of a sweep runs. make test's sanitizer stage sets GS_ASAN and
 * runs every unit test again on the ASan/UBSan build, after the plain stage
 * ran every case. A sweep whose cases cost mostly NVRTC's compile (not
 * instrumented) or a whole walk, each case running the code its neighbours
 * ran, keeps one case in `every` there (i % every == 0, so case 0 always
 * runs); in the plain stage every case runs. */
bool gs_test_case_runs(long i, int every);

/* tests/data/<name>, relative to the working directory (the repository root
 * under `make test`) or, failing that, to this source file's directory. */
void gs_test_data_path(char *buf, size_t n, const char *name);

/* The data lines of tests/data/<name>, in order and without their line
 * ends: blank lines and '#' comments are dropped. Asserts that the file
 * opens; free with gs_test_lines_free. Sweeps live in such files (BLIS's
 * input.*.fast), not in copies of a test case. */
typedef struct gs_test_lines {
    char path[512]; /* the file read, for messages */
    int n;
    char **text;    /* text[i]: the i-th data line */
    int *lineno;    /* its line number in the file, from 1 */
} gs_test_lines;
void gs_test_lines_read(const char *name, gs_test_lines *l);
void gs_test_lines_free(gs_test_lines *l);

/* One case of a verify sweep: a line "hw seed spec..." of a data file. */
typedef struct gs_test_sweep_case {
    char hw[32];
    unsigned long seed;
    char spec[400];
    int line; /* its line number in the file */
} gs_test_sweep_case;
/* The cases of tests/data/<name>, at most cap (asserted); returns the count. */
int gs_test_read_sweep(const char *name, gs_test_sweep_case *cases, int cap);

/* A fresh directory /tmp/gensor-<tag>-XXXXXX (malloc'd; the test removes it). */
char *gs_test_tmpdir(const char *tag);
/* Remove a flat directory and the files in it (best effort). */
void gs_test_rm_flat(const char *dir);
/* Files in dir whose names end in suffix ("" for all), dot files aside. */
int gs_test_count_files(const char *dir, const char *suffix);

/* The gensor binary of $GS_GENSOR_BIN (make test sets it); the test is
 * skipped with the reason when it is unset. what names the checks. */
const char *gs_test_cli_bin(const char *what);
/* Run a shell command line and capture its stdout (malloc'd); *status gets
 * the exit status (-1 when it did not exit). */
char *gs_test_run(const char *cmdline, int *status);
/* `bin args` with stderr dropped: exit 0 and its stdout parsed as JSON. */
struct json_t;
struct json_t *gs_test_cli_json(const char *bin, const char *args);

/* Open the OpenCL device. Without one the test is skipped with the reason,
 * or fails when GS_REQUIRE_OPENCL=1 (CI); any other error fails. */
gs_device *gs_test_open_dev(gs_ctx *ctx);
/* The same through the OpenCL runtime's own handle (test_opencl.c, the
 * tests of the runtime itself). */
gs_cl *gs_test_open_cl(gs_ctx *ctx);
/* Skip the test with the reason when NVRTC cannot be loaded, or fail when
 * GS_REQUIRE_NVRTC=1 (CI has the toolkit). */
void gs_test_need_nvrtc(gs_ctx *ctx, const char *what);

/* Set LC_NUMERIC to a locale whose decimal point is ',' (de_DE and its
 * like): an installed one, else de_DE.UTF-8 built by localedef into a
 * temporary directory that $LOCPATH names while setlocale loads it. The test
 * is skipped with the reason when neither works. The caller restores
 * setlocale(LC_NUMERIC, "C"). */
void gs_test_comma_locale(const char *what);

/* Expect status want and a message holding every '&&'-separated needle
 * (NULL or "" for none); what names the case in the failure. */
void gs_test_expect_err(gs_ctx *ctx, gs_status got, gs_status want, const char *needles, const char *what);

/* What many tests work on: a context, the OpenCL device when asked for
 * (gs_test_open_dev: skipped or failed without one), a profile by name, an
 * operator parsed from a spec and its construction with top_k candidates
 * (op and r stay NULL for a NULL spec). Each step is asserted. */
typedef struct gs_test_fix {
    gs_ctx *ctx;
    gs_device *dev;
    gs_hw *hw;
    gs_op *op;
    gs_result *r;
} gs_test_fix;
void gs_test_setup(gs_test_fix *f, bool device, const char *hw, const char *spec, int top_k);
/* The same, constructing with the given seed. */
void gs_test_setup_seed(gs_test_fix *f, bool device, const char *hw, const char *spec, int top_k, uint64_t seed);
/* Free all of it (NULL members are skipped). */
void gs_test_teardown(gs_test_fix *f);

/* A level-2 state of a gemm (axes m, n, k) with block tiles bm, bn, bk and
 * nothing else chosen, asserted well formed. */
gs_etir gs_test_gemm_block_state(const gs_op *op, int bm, int bn, int bk);

/* A gemm operator (M, N, K; no transposes, alpha 1, beta 0), asserted. */
gs_op gs_test_gemm(int64_t M, int64_t N, int64_t K);

#endif
