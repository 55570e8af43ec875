/* test_common.c — helpers shared by the test files (test_common.h). No
 * tests of its own: it sits in tests/ as test_*.c so that the Makefile's
 * test list picks it up. */
#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <sys/wait.h>
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool gs_test_env_true(const char *name) {
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

bool gs_test_case_runs(long i, int every) { return !getenv("GS_ASAN") || every <= 1 || i % every == 0; }

void gs_test_data_path(char *buf, size_t n, const char *name) {
    snprintf(buf, n, "tests/data/%s", name);
    if (access(buf, R_OK) == 0) return;
    const char *file = __FILE__;
    const char *slash = strrchr(file, '/');
    int dirlen = slash ? (int)(slash - file) : 1;
    snprintf(buf, n, "%.*s/data/%s", dirlen, slash ? file : ".", name);
}

void gs_test_lines_read(const char *name, gs_test_lines *l) {
    memset(l, 0, sizeof *l);
    gs_test_data_path(l->path, sizeof l->path, name);
    FILE *f = fopen(l->path, "r");
    cr_assert_not_null(f, "cannot open %s (run from the repository root)", l->path);
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, room = 0;
    while (getline(&line, &cap, f) != -1) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#') continue;
        if (l->n == room) {
            room = room ? 2 * room : 64;
            l->text = realloc(l->text, (size_t)room * sizeof *l->text);
            l->lineno = realloc(l->lineno, (size_t)room * sizeof *l->lineno);
            cr_assert(l->text && l->lineno, "out of memory reading %s", l->path);
        }
        l->text[l->n] = strdup(line);
        cr_assert_not_null(l->text[l->n]);
        l->lineno[l->n++] = lineno;
    }
    free(line);
    fclose(f);
}

void gs_test_lines_free(gs_test_lines *l) {
    for (int i = 0; i < l->n; i++) free(l->text[i]);
    free(l->text);
    free(l->lineno);
    memset(l, 0, sizeof *l);
}

int gs_test_read_sweep(const char *name, gs_test_sweep_case *cases, int cap) {
    gs_test_lines l;
    gs_test_lines_read(name, &l);
    cr_assert(l.n <= cap, "%s: more than %d cases", l.path, cap);
    for (int i = 0; i < l.n; i++) {
        int off = 0;
        cr_assert(sscanf(l.text[i], "%31s %lu %n", cases[i].hw, &cases[i].seed, &off) == 2 && off > 0,
                  "%s:%d: bad line '%s' (want: hw seed spec)", l.path, l.lineno[i], l.text[i]);
        snprintf(cases[i].spec, sizeof cases[i].spec, "%s", l.text[i] + off);
        cases[i].line = l.lineno[i];
    }
    int n = l.n;
    gs_test_lines_free(&l);
    return n;
}

char *gs_test_tmpdir(const char *tag) {
    const char *dir = getenv("TMPDIR"); /* as kernels/service/sass.c's temp files */
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/gensor-%s-XXXXXX", dir && *dir ? dir : "/tmp", tag);
    char *t = strdup(tmpl);
    cr_assert_not_null(t);
    cr_assert_not_null(mkdtemp(t), "mkdtemp: %s", strerror(errno));
    return t;
}

void gs_test_rm_flat(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        (void)unlink(p);
    }
    if (d) closedir(d);
    (void)rmdir(dir);
}

int gs_test_count_files(const char *dir, const char *suffix) {
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "opendir %s: %s", dir, strerror(errno));
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name), s = strlen(suffix);
        if (e->d_name[0] != '.' && l >= s && !strcmp(e->d_name + l - s, suffix)) n++;
    }
    closedir(d);
    return n;
}

const char *gs_test_cli_bin(const char *what) {
    const char *bin = getenv("GS_GENSOR_BIN");
    if (!bin || !*bin) cr_skip_test("GS_GENSOR_BIN is not set (e.g. GS_GENSOR_BIN=build/gensor): skipping %s", what);
    cr_assert(access(bin, X_OK) == 0, "GS_GENSOR_BIN=%s is not executable", bin);
    return bin;
}

char *gs_test_run(const char *cmdline, int *status) {
    FILE *p = popen(cmdline, "r");
    cr_assert_not_null(p, "popen failed for %s", cmdline);
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    while ((got = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 4096) {
            cap *= 2;
            buf = realloc(buf, cap);
            cr_assert_not_null(buf);
        }
    }
    buf[len] = 0;
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return buf;
}

json_t *gs_test_cli_json(const char *bin, const char *args) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>/dev/null", bin, args);
    int st;
    char *out = gs_test_run(cmd, &st);
    cr_assert_eq(st, 0, "gensor %s exited %d", args, st);
    json_error_t je;
    json_t *root = json_loads(out, 0, &je);
    cr_assert_not_null(root, "gensor %s: output is not JSON (%s): %.200s", args, je.text, out);
    free(out);
    return root;
}

gs_device *gs_test_open_dev(gs_ctx *ctx) {
    gs_device *cl = NULL;
    gs_status s = gs_device_open(ctx, GS_BACKEND_OPENCL, 0, &cl);
    if (s == GS_ERR_OPENCL_MISSING) {
        if (gs_test_env_true("GS_REQUIRE_OPENCL"))
            cr_assert_fail("GS_REQUIRE_OPENCL=1 but there is no OpenCL device: %s", gs_ctx_errmsg(ctx));
        cr_skip_test("no OpenCL device (install pocl-opencl-icd): %s", gs_ctx_errmsg(ctx));
    }
    cr_assert_eq(s, GS_OK, "gs_device_open: %s: %s", gs_status_str(s), gs_ctx_errmsg(ctx));
    cr_assert_not_null(cl);
    return cl;
}

gs_cl *gs_test_open_cl(gs_ctx *ctx) {
    gs_cl *cl = NULL;
    gs_status s = gs_cl_open(ctx, &cl);
    if (s == GS_ERR_OPENCL_MISSING) {
        if (gs_test_env_true("GS_REQUIRE_OPENCL"))
            cr_assert_fail("GS_REQUIRE_OPENCL=1 but there is no OpenCL device: %s", gs_ctx_errmsg(ctx));
        cr_skip_test("no OpenCL device (install pocl-opencl-icd): %s", gs_ctx_errmsg(ctx));
    }
    cr_assert_eq(s, GS_OK, "gs_cl_open: %s: %s", gs_status_str(s), gs_ctx_errmsg(ctx));
    cr_assert_not_null(cl);
    return cl;
}

void gs_test_need_nvrtc(gs_ctx *ctx, const char *what) {
    if (gs_nvrtc_available(ctx)) return;
    if (gs_test_env_true("GS_REQUIRE_NVRTC"))
        cr_assert_fail("GS_REQUIRE_NVRTC=1 but NVRTC is missing (%s): %s", what, gs_ctx_errmsg(ctx));
    cr_skip_test("NVRTC not available, %s not run: %s", what, gs_ctx_errmsg(ctx));
}

static bool comma_numeric(const char *name) {
    return setlocale(LC_NUMERIC, name) && !strcmp(localeconv()->decimal_point, ",");
}

void gs_test_comma_locale(const char *what) {
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "de_DE", "fr_FR"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (comma_numeric(names[i])) return;
    char *dir = gs_test_tmpdir("locale"), cmd[1024];
    snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' >/dev/null 2>&1", dir);
    int rc = system(cmd); /* 1 with warnings, the locale made all the same */
    bool ok = setenv("LOCPATH", dir, 1) == 0 && comma_numeric("de_DE.UTF-8");
    unsetenv("LOCPATH"); /* loaded: the files are not read again */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    (void)!system(cmd);
    free(dir);
    if (!ok) {
        setlocale(LC_NUMERIC, "C");
        cr_skip_test("no locale with a decimal comma (none installed, localedef exit %d), %s not run", rc, what);
    }
}

void gs_test_expect_err(gs_ctx *ctx, gs_status got, gs_status want, const char *needles, const char *what) {
    cr_assert_eq(got, want, "%s: status %d (%s), want %d (%s); msg: '%s'", what, got, gs_status_str(got), want,
                 gs_status_str(want), gs_ctx_errmsg(ctx));
    if (!needles || !*needles) return;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", needles);
    for (char *p = buf; p;) {
        char *amp = strstr(p, "&&");
        if (amp) *amp = 0;
        cr_assert_not_null(strstr(gs_ctx_errmsg(ctx), p), "%s: message '%s' lacks '%s'", what, gs_ctx_errmsg(ctx),
                           p);
        p = amp ? amp + 2 : NULL;
    }
}

/* gs_test_setup's steps; seed NULL: the default options' seed */
static void setup(gs_test_fix *f, bool device, const char *hw, const char *spec, int top_k, const uint64_t *seed) {
    memset(f, 0, sizeof *f);
    f->ctx = gs_ctx_create();
    cr_assert_not_null(f->ctx);
    if (device) f->dev = gs_test_open_dev(f->ctx);
    cr_assert_eq(gs_hw_load(f->ctx, hw, &f->hw), GS_OK, "%s: %s", hw, gs_ctx_errmsg(f->ctx));
    if (!spec) return;
    cr_assert_eq(gs_op_parse(f->ctx, spec, &f->op), GS_OK, "%s: %s", spec, gs_ctx_errmsg(f->ctx));
    gs_construct_opts co;
    gs_construct_opts_default(&co);
    co.top_k = top_k;
    if (seed) co.seed = *seed;
    gs_status s = gs_construct(f->ctx, f->op, f->hw, &co, &f->r);
    cr_assert_eq(s, GS_OK, "construct %s on %s: %s", spec, hw, gs_ctx_errmsg(f->ctx));
}

void gs_test_setup(gs_test_fix *f, bool device, const char *hw, const char *spec, int top_k) {
    setup(f, device, hw, spec, top_k, NULL);
}

void gs_test_setup_seed(gs_test_fix *f, bool device, const char *hw, const char *spec, int top_k, uint64_t seed) {
    setup(f, device, hw, spec, top_k, &seed);
}

void gs_test_teardown(gs_test_fix *f) {
    gs_result_destroy(f->r);
    gs_op_destroy(f->op);
    gs_hw_destroy(f->hw);
    gs_device_close(f->dev);
    gs_ctx_destroy(f->ctx);
    memset(f, 0, sizeof *f);
}

gs_etir gs_test_gemm_block_state(const gs_op *op, int bm, int bn, int bk) {
    gs_etir e;
    gs_etir_init(op, &e);
    e.tile[0].block = bm; /* m, n, k: the gemm builder's axis order */
    e.tile[1].block = bn;
    e.tile[2].block = bk;
    cr_assert(gs_etir_wellformed(op, &e));
    return e;
}

gs_op gs_test_gemm(int64_t M, int64_t N, int64_t K) {
    gs_op op;
    gs_ctx *ctx = gs_ctx_create();
    gs_status s = gs_op_build_gemm(ctx, &op, M, N, K, 0, 0, 1.0f, 0.0f);
    cr_assert_eq(s, GS_OK, "gemm %lld %lld %lld: %s", (long long)M, (long long)N, (long long)K, gs_ctx_errmsg(ctx));
    gs_ctx_destroy(ctx);
    return op;
}
