/* nvrtc.c — CUDA C -> PTX / cubin through NVRTC, loaded with dlopen.
 *
 * There is no link-time dependency on libnvrtc and nvrtc.h is not included:
 * the few types and entry points we need are declared below with the
 * signatures of the NVRTC C API (stable since CUDA 11.2, which added
 * nvrtcGetSupportedArchs). A machine without the CUDA toolkit still builds
 * and runs gensor; it only loses compilation (GS_ERR_NVRTC_MISSING).
 *
 * The ptxas statistics come from the compile log: with
 * --ptxas-options=--verbose NVRTC appends ptxas' report, e.g.
 *
 *   ptxas info    : Compiling entry function 'k' for 'sm_86'
 *   ptxas info    : Function properties for k
 *   ptxas         .     288 bytes stack frame, 100 bytes spill stores, 124 bytes spill loads
 *   ptxas info    : Used 24 registers, used 0 barriers, 288 bytes cumulative stack size, 364 bytes cmem[0]
 */
#include "kernels/runtime/runtime.h"

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the NVRTC API, declared by hand ------------------------------------
 * nvrtcResult is a C enum (int-sized); only NVRTC_SUCCESS and the codes we
 * map to a gs_status are named here. nvrtcProgram is an opaque pointer. */
typedef int nvrtcResult;
enum {
    NVRTC_SUCCESS = 0,
    NVRTC_ERROR_OUT_OF_MEMORY = 1,
    NVRTC_ERROR_COMPILATION = 6,
};
typedef struct gs_nvrtc_program_ *nvrtcProgram;

typedef nvrtcResult (*pfn_create)(nvrtcProgram *prog, const char *src, const char *name,
                                  int num_headers, const char *const *headers,
                                  const char *const *include_names);
typedef nvrtcResult (*pfn_compile)(nvrtcProgram prog, int num_options,
                                   const char *const *options);
typedef nvrtcResult (*pfn_size)(nvrtcProgram prog, size_t *size);
typedef nvrtcResult (*pfn_get)(nvrtcProgram prog, char *buf);
typedef nvrtcResult (*pfn_destroy)(nvrtcProgram *prog);
typedef const char *(*pfn_errstr)(nvrtcResult r);
typedef nvrtcResult (*pfn_num_archs)(int *n);
typedef nvrtcResult (*pfn_archs)(int *archs);
typedef nvrtcResult (*pfn_version)(int *major, int *minor);

#define NV_MAX_ARCHS 64

/* Loaded once per process (under nv_lock) and never unloaded; after that
 * only read, so compilations may run in several threads. */
typedef struct nv_lib {
    int state; /* 0 = not tried, 1 = loaded, -1 = failed (why[] says why) */
    void *handle;
    char path[512];
    char why[1024];
    int major, minor;
    int archs[NV_MAX_ARCHS];
    int narchs;
    pfn_create create;
    pfn_compile compile;
    pfn_size ptx_size;
    pfn_get ptx;
    pfn_size cubin_size;
    pfn_get cubin;
    pfn_size log_size;
    pfn_get log;
    pfn_destroy destroy;
    pfn_errstr errstr;
    pfn_num_archs num_archs;
    pfn_archs get_archs;
    pfn_version version;
} nv_lib;
static nv_lib nv;

static const char *nv_errstr(nvrtcResult r) {
    const char *s = nv.errstr ? nv.errstr(r) : NULL;
    return s ? s : "unknown NVRTC error";
}

/* Every entry point, in the order they are looked up (the first missing one
 * is named). */
static const gs_dlsym_entry nv_syms[] = {
    {offsetof(nv_lib, create), "nvrtcCreateProgram", NULL},
    {offsetof(nv_lib, compile), "nvrtcCompileProgram", NULL},
    {offsetof(nv_lib, ptx_size), "nvrtcGetPTXSize", NULL},
    {offsetof(nv_lib, ptx), "nvrtcGetPTX", NULL},
    {offsetof(nv_lib, cubin_size), "nvrtcGetCUBINSize", NULL},
    {offsetof(nv_lib, cubin), "nvrtcGetCUBIN", NULL},
    {offsetof(nv_lib, log_size), "nvrtcGetProgramLogSize", NULL},
    {offsetof(nv_lib, log), "nvrtcGetProgramLog", NULL},
    {offsetof(nv_lib, destroy), "nvrtcDestroyProgram", NULL},
    {offsetof(nv_lib, errstr), "nvrtcGetErrorString", NULL},
    {offsetof(nv_lib, num_archs), "nvrtcGetNumSupportedArchs", NULL},
    {offsetof(nv_lib, get_archs), "nvrtcGetSupportedArchs", NULL},
    {offsetof(nv_lib, version), "nvrtcVersion", NULL},
};
#define NV_NSYMS (sizeof nv_syms / sizeof nv_syms[0])

/* Ask the loaded library for its version and arch list. */
static bool nv_query(gs_sb *why) {
    nvrtcResult r = nv.version(&nv.major, &nv.minor);
    if (r != NVRTC_SUCCESS) {
        gs_sb_printf(why, "%s: nvrtcVersion failed: %s", nv.path, nv_errstr(r));
        return false;
    }
    int n = 0;
    r = nv.num_archs(&n);
    if (r != NVRTC_SUCCESS || n <= 0) {
        gs_sb_printf(why, "%s: nvrtcGetNumSupportedArchs failed: %s", nv.path,
                     r != NVRTC_SUCCESS ? nv_errstr(r) : "no architectures");
        return false;
    }
    int *all = malloc((size_t)n * sizeof *all);
    if (!all) {
        gs_sb_printf(why, "out of memory");
        return false;
    }
    r = nv.get_archs(all);
    if (r != NVRTC_SUCCESS) {
        free(all);
        gs_sb_printf(why, "%s: nvrtcGetSupportedArchs failed: %s", nv.path, nv_errstr(r));
        return false;
    }
    nv.narchs = n < NV_MAX_ARCHS ? n : NV_MAX_ARCHS;
    memcpy(nv.archs, all, (size_t)nv.narchs * sizeof *all);
    free(all);
    return true;
}

/* Drop the entry points of a library we are about to close. */
static void nv_forget(void *h) {
    gs_dlsym_clear(&nv, nv_syms, NV_NSYMS);
    nv.narchs = 0;
    dlclose(h);
}

/* Try one path; on failure append the reason to why. */
static bool nv_try(const char *path, gs_sb *why) {
    if (why->len) gs_sb_puts(why, "; ");
    char e[1024];
    void *h = gs_dlopen(path, e, sizeof e);
    if (!h) {
        gs_sb_puts(why, e);
        return false;
    }
    const char *missing = NULL;
    if (!gs_dlsym_table(h, &nv, nv_syms, NV_NSYMS, &missing)) {
        gs_sb_printf(why, "%s: symbol %s not found (NVRTC older than 11.2?)", path, missing);
        nv_forget(h);
        return false;
    }
    size_t pl = strlen(path);
    if (pl >= sizeof nv.path) pl = sizeof nv.path - 1;
    memcpy(nv.path, path, pl);
    nv.path[pl] = '\0';
    if (!nv_query(why)) {
        nv_forget(h);
        return false;
    }
    nv.handle = h;
    return true;
}

/* Load libnvrtc once. Order: $GS_NVRTC_LIB, the loader's search path
 * (libnvrtc.so, .so.13, .so.12), $CUDA_HOME/lib64, then the CUDA_HOME the
 * library was built with (GS_CUDA_HOME from the Makefile). */
static bool nv_load_locked(gs_ctx *ctx) {
    if (nv.state == 1) return true;
    if (nv.state == -1) {
        gs_err(ctx, GS_ERR_NVRTC_MISSING, "%s", nv.why);
        return false;
    }
    char cands[6][512];
    int nc = 0;
    const char *env = getenv("GS_NVRTC_LIB");
    if (env && *env) snprintf(cands[nc++], sizeof cands[0], "%s", env);
    snprintf(cands[nc++], sizeof cands[0], "libnvrtc.so");
    snprintf(cands[nc++], sizeof cands[0], "libnvrtc.so.13");
    snprintf(cands[nc++], sizeof cands[0], "libnvrtc.so.12");
    const char *home = getenv("CUDA_HOME");
    if (home && *home) snprintf(cands[nc++], sizeof cands[0], "%s/lib64/libnvrtc.so", home);
#ifdef GS_CUDA_HOME
    snprintf(cands[nc++], sizeof cands[0], "%s/lib64/libnvrtc.so", GS_CUDA_HOME);
#endif
    gs_sb why;
    gs_sb_init(&why);
    bool ok = false;
    for (int i = 0; i < nc && !ok; i++) {
        bool seen = false; /* $CUDA_HOME is often the built-in one */
        for (int j = 0; j < i; j++) seen = seen || strcmp(cands[i], cands[j]) == 0;
        if (!seen) ok = nv_try(cands[i], &why);
    }
    if (ok) {
        nv.state = 1;
        gs_sb_free(&why);
        return true;
    }
    snprintf(nv.why, sizeof nv.why,
             "cannot load NVRTC (set GS_NVRTC_LIB or CUDA_HOME); tried: %s",
             why.buf ? why.buf : "(nothing)");
    gs_sb_free(&why);
    nv.state = -1;
    gs_err(ctx, GS_ERR_NVRTC_MISSING, "%s", nv.why);
    return false;
}

/* The first call loads the library under a lock, so threads may race to it;
 * once loaded, nv is only read. */
static pthread_mutex_t nv_lock = PTHREAD_MUTEX_INITIALIZER;

static bool nv_load(gs_ctx *ctx) {
    pthread_mutex_lock(&nv_lock);
    bool ok = nv_load_locked(ctx);
    pthread_mutex_unlock(&nv_lock);
    return ok;
}

bool gs_nvrtc_available(gs_ctx *ctx) { return nv_load(ctx); }

/* Copies up to cap arches (as 75, 80, ...) and sets *n to how many were
 * written. */
gs_status gs_nvrtc_supported_archs(gs_ctx *ctx, int *archs, int cap, int *n) {
    if (!n || cap < 0 || (cap > 0 && !archs))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_nvrtc_supported_archs: bad arguments");
    *n = 0;
    if (!nv_load(ctx)) return GS_ERR_NVRTC_MISSING;
    int k = nv.narchs < cap ? nv.narchs : cap;
    memcpy(archs, nv.archs, (size_t)k * sizeof *archs);
    *n = k;
    return GS_OK;
}

int gs_nvrtc_nearest_arch(gs_ctx *ctx, int sm) {
    if (!nv_load(ctx)) return 0;
    int up = 0, top = 0; /* smallest supported >= sm; largest supported */
    for (int i = 0; i < nv.narchs; i++) {
        int a = nv.archs[i];
        if (a >= sm && (up == 0 || a < up)) up = a;
        if (a > top) top = a;
    }
    return up ? up : top;
}

static bool nv_supports(int sm) {
    for (int i = 0; i < nv.narchs; i++)
        if (nv.archs[i] == sm) return true;
    return false;
}

/* ---- ptxas --verbose parsing --------------------------------------------- */
static const char ENTRY_KEY[] = "Compiling entry function '";
static const char PROPS_KEY[] = "Function properties for ";

/* First occurrence of key in the line [ls, le). */
static const char *line_find(const char *ls, const char *le, const char *key) {
    size_t k = strlen(key);
    for (const char *p = ls; p + k <= le; p++)
        if (memcmp(p, key, k) == 0) return p;
    return NULL;
}

static const char *line_end(const char *p) {
    const char *e = strchr(p, '\n');
    return e ? e : p + strlen(p);
}

/* The decimal number written just before key on the line, as in
 * "4096 bytes smem". Old ptxas wrote "4096+16 bytes smem" (static + reserved);
 * such a chain is summed. */
static bool num_before(const char *ls, const char *le, const char *key, int64_t *v) {
    const char *p = line_find(ls, le, key);
    if (!p) return false;
    const char *e = p;
    while (e > ls && e[-1] == ' ') e--;
    int64_t total = 0;
    bool any = false;
    for (;;) {
        const char *b = e;
        while (b > ls && isdigit((unsigned char)b[-1])) b--;
        if (b == e) break;
        int64_t x = 0;
        for (const char *q = b; q < e; q++) {
            if (x > (INT64_MAX - 9) / 10) return false; /* absurd; refuse */
            x = x * 10 + (*q - '0');
        }
        total += x;
        any = true;
        if (b > ls && b[-1] == '+') e = b - 1;
        else break;
    }
    if (any) *v = total;
    return any;
}

/* "Used N registers" on a line: N, or -1. */
static int64_t line_registers(const char *ls, const char *le) {
    const char *u = line_find(ls, le, "Used ");
    int64_t r;
    if (u && num_before(u, le, "register", &r)) return r;
    return -1;
}

/* Stack and spill numbers from a "N bytes stack frame, ..." line. */
static bool line_stack(const char *ls, const char *le, gs_ptxas_stats *st) {
    int64_t v;
    if (!num_before(ls, le, "bytes stack frame", &v)) return false;
    st->stack_bytes = v;
    if (num_before(ls, le, "bytes spill stores", &v)) st->spill_store_bytes = v;
    if (num_before(ls, le, "bytes spill loads", &v)) st->spill_load_bytes = v;
    return true;
}

/* Find "Compiling entry function 'kernel'" (kernel NULL: the first one). */
static const char *find_entry(const char *log, const char *kernel) {
    size_t kl = kernel ? strlen(kernel) : 0;
    for (const char *p = strstr(log, ENTRY_KEY); p; p = strstr(p + 1, ENTRY_KEY)) {
        const char *n = p + sizeof ENTRY_KEY - 1;
        if (!kernel || (strncmp(n, kernel, kl) == 0 && n[kl] == '\''))
            return p;
    }
    return NULL;
}

/* Stats for the entry function named kernel, else the first one ptxas
 * reports, else (a log without "Compiling entry function" lines, as nvcc
 * prints for a single kernel) the first numbers found. Pieces may come in
 * any order; those missing stay 0. */
static bool ptxas_parse_for(const char *log, const char *kernel, gs_ptxas_stats *st) {
    if (!st) return false;
    memset(st, 0, sizeof *st);
    if (!log) return false;

    const char *seg = (kernel && *kernel) ? find_entry(log, kernel) : NULL;
    if (!seg) seg = find_entry(log, NULL);
    char name[256] = "";
    const char *seg_end = log + strlen(log);
    if (seg) {
        /* The segment runs to the next entry function. */
        const char *n = seg + sizeof ENTRY_KEY - 1;
        const char *q = strchr(n, '\'');
        if (q && (size_t)(q - n) < sizeof name) {
            memcpy(name, n, (size_t)(q - n));
            name[q - n] = '\0';
        }
        const char *next = strstr(seg + 1, ENTRY_KEY);
        if (next) seg_end = next;
    } else {
        seg = log;
    }

    /* Registers and static smem: the "Used N registers" line. */
    bool found = false, have_stack = false;
    for (const char *ls = seg; ls < seg_end && *ls;) {
        const char *le = line_end(ls);
        if (le > seg_end) le = seg_end;
        int64_t r = found ? -1 : line_registers(ls, le);
        if (r >= 0) {
            found = true;
            st->registers = r > INT32_MAX ? INT32_MAX : (int)r;
            int64_t v;
            if (num_before(ls, le, "bytes smem", &v)) st->smem_bytes = v;
        }
        ls = *le ? le + 1 : le;
    }

    /* Stack/spills: the "Function properties for NAME" block, wherever it
     * sits in the log; the numbers are on the same line or the next. */
    if (name[0]) {
        size_t nl = strlen(name);
        for (const char *p = strstr(log, PROPS_KEY); p && !have_stack;
             p = strstr(p + 1, PROPS_KEY)) {
            const char *n = p + sizeof PROPS_KEY - 1;
            if (strncmp(n, name, nl) != 0 || !(n[nl] == '\0' || isspace((unsigned char)n[nl])))
                continue;
            const char *le = line_end(p);
            have_stack = line_stack(p, le, st);
            if (!have_stack && *le) have_stack = line_stack(le + 1, line_end(le + 1), st);
        }
    }
    /* Otherwise the first stack line of the segment. */
    for (const char *ls = seg; !have_stack && ls < seg_end && *ls;) {
        const char *le = line_end(ls);
        if (le > seg_end) le = seg_end;
        have_stack = line_stack(ls, le, st);
        ls = *le ? le + 1 : le;
    }
    return found;
}

bool gs_ptxas_parse(const char *log, gs_ptxas_stats *st) { return ptxas_parse_for(log, NULL, st); }

/* ---- compilation ----------------------------------------------------------- */
/* Map a failed NVRTC call to a status with its name in ctx. */
static gs_status nv_fail(gs_ctx *ctx, nvrtcResult r, const char *call, const char *name) {
    gs_status s = r == NVRTC_ERROR_OUT_OF_MEMORY ? GS_ERR_NOMEM : GS_ERR_NVRTC_COMPILE;
    return gs_err(ctx, s, "%s(%s): %s", call, name, nv_errstr(r));
}

/* Fetch a program output (PTX, cubin or log) into a malloc'd buffer. The
 * sizes NVRTC reports include the trailing NUL for text outputs. */
static gs_status nv_fetch(gs_ctx *ctx, nvrtcProgram prog, pfn_size size_fn, pfn_get get_fn,
                          const char *what, const char *name, char **buf, size_t *len) {
    *buf = NULL;
    *len = 0;
    size_t n = 0;
    nvrtcResult r = size_fn(prog, &n);
    if (r != NVRTC_SUCCESS) return nv_fail(ctx, r, what, name);
    if (n == 0) return GS_OK;
    char *b = malloc(n + 1);
    if (!b) return gs_err(ctx, GS_ERR_NOMEM, "%s(%s): %zu bytes", what, name, n);
    r = get_fn(prog, b);
    if (r != NVRTC_SUCCESS) {
        free(b);
        return nv_fail(ctx, r, what, name);
    }
    b[n] = '\0'; /* text outputs are already terminated; cubin gets a spare 0 */
    *buf = b;
    *len = n;
    return GS_OK;
}

/* One NVRTC program: create, compile with opts, append the log to *log,
 * fetch PTX and/or cubin into out, destroy. */
static gs_status nv_run(gs_ctx *ctx, const char *src, const char *name, int sm,
                        const char *const *opts, int nopts, bool get_ptx, bool get_cubin,
                        gs_nvrtc_out *out, gs_sb *log) {
    nvrtcProgram prog = NULL;
    nvrtcResult r = nv.create(&prog, src, name, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) return nv_fail(ctx, r, "nvrtcCreateProgram", name);

    gs_status st = GS_OK;
    nvrtcResult rc = nv.compile(prog, nopts, opts);

    /* The log is read whether or not compilation succeeded. */
    char *text = NULL;
    size_t tlen = 0;
    st = nv_fetch(ctx, prog, nv.log_size, nv.log, "nvrtcGetProgramLog", name, &text, &tlen);
    if (st != GS_OK) goto done;
    if (text) gs_sb_puts(log, text);

    if (rc != NVRTC_SUCCESS) {
        /* The log tells what was wrong; give its head in ctx, all in out->log. */
        const char *t = text ? text : "";
        size_t tl = strlen(t);
        st = rc == NVRTC_ERROR_OUT_OF_MEMORY ? GS_ERR_NOMEM : GS_ERR_NVRTC_COMPILE;
        gs_err(ctx, st, "NVRTC could not compile %s for sm_%d (%s):\n%.800s%s", name, sm,
               nv_errstr(rc), t, tl > 800 ? "\n[... see the full log]" : "");
        goto done;
    }
    if (get_cubin) {
        char *bin = NULL;
        size_t blen = 0;
        st = nv_fetch(ctx, prog, nv.cubin_size, nv.cubin, "nvrtcGetCUBIN", name, &bin, &blen);
        if (st != GS_OK) goto done;
        if (!bin) {
            st = gs_err(ctx, GS_ERR_NVRTC_COMPILE, "NVRTC returned no cubin for %s (sm_%d)",
                        name, sm);
            goto done;
        }
        out->cubin = bin;
        out->cubin_len = blen;
    }
    if (get_ptx) {
        char *ptx = NULL;
        size_t plen = 0;
        st = nv_fetch(ctx, prog, nv.ptx_size, nv.ptx, "nvrtcGetPTX", name, &ptx, &plen);
        if (st != GS_OK) goto done;
        /* An empty PTX ("" of size 1) counts as none: the caller recompiles. */
        if (ptx && ptx[0]) {
            out->ptx = ptx;
            out->ptx_len = strlen(ptx);
        } else {
            free(ptx);
        }
    }
done:
    free(text);
    r = nv.destroy(&prog);
    if (r != NVRTC_SUCCESS && st == GS_OK) st = nv_fail(ctx, r, "nvrtcDestroyProgram", name);
    return st;
}

/* The kernel name to look for in the ptxas report: the program name
 * without directories and extension ("out/gemm.cu" -> "gemm"). */
static void kernel_of(const char *name, char *buf, size_t n) {
    const char *b = strrchr(name, '/');
    b = b ? b + 1 : name;
    snprintf(buf, n, "%s", b);
    char *dot = strrchr(buf, '.');
    if (dot && dot != buf) *dot = '\0';
}

/* out is overwritten (not freed first). Whatever happens after argument
 * checks, out->log is a malloc'd string (possibly "") and the caller frees
 * out with gs_nvrtc_out_free. On error ptx and cubin are NULL. */
gs_status gs_nvrtc_compile(gs_ctx *ctx, const char *src, const char *name, int sm,
                           bool want_ptx, bool want_cubin, gs_nvrtc_out *out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_nvrtc_compile: out is NULL");
    memset(out, 0, sizeof *out);
    if (!src || (!want_ptx && !want_cubin) || sm <= 0)
        return gs_err(ctx, GS_ERR_INVALID_ARG,
                      "gs_nvrtc_compile: need source, sm > 0 and PTX or cubin requested");
    if (!name || !*name) name = "gensor.cu";

    gs_status st = GS_OK;
    gs_sb log;
    gs_sb_init(&log);
    if (!nv_load(ctx)) {
        st = GS_ERR_NVRTC_MISSING;
        goto finish;
    }
    if (!nv_supports(sm)) {
        gs_sb list;
        gs_sb_init(&list);
        for (int i = 0; i < nv.narchs; i++) gs_sb_printf(&list, " sm_%d", nv.archs[i]);
        int near = gs_nvrtc_nearest_arch(ctx, sm);
        st = gs_err(ctx, GS_ERR_ARCH_UNSUPPORTED,
                    "sm_%d is not supported by this NVRTC (%d.%d); supported:%s; nearest: sm_%d",
                    sm, nv.major, nv.minor, list.buf ? list.buf : " (none)", near);
        gs_sb_free(&list);
        goto finish;
    }

    char arch_sm[32], arch_vc[32];
    snprintf(arch_sm, sizeof arch_sm, "-arch=sm_%d", sm);
    snprintf(arch_vc, sizeof arch_vc, "-arch=compute_%d", sm);
    double t0 = gs_now_s();
    if (want_cubin) {
        /* A real arch gives SASS (and, with current NVRTC, the PTX too);
         * --ptxas-options=--verbose puts ptxas' resource report in the log. */
        const char *opts[] = {arch_sm, "--ptxas-options=--verbose", "-default-device",
                              "--std=c++17"};
        st = nv_run(ctx, src, name, sm, opts, 4, want_ptx, true, out, &log);
        if (st == GS_OK && want_ptx && !out->ptx) {
            /* This NVRTC kept no PTX for sm_XX: compile again for the
             * virtual arch. */
            const char *vopts[] = {arch_vc, "-default-device", "--std=c++17"};
            st = nv_run(ctx, src, name, sm, vopts, 3, true, false, out, &log);
        }
    } else {
        const char *opts[] = {arch_vc, "-default-device", "--std=c++17"};
        st = nv_run(ctx, src, name, sm, opts, 3, true, false, out, &log);
    }
    out->compile_s = gs_now_s() - t0;
    if (st == GS_OK && want_ptx && !out->ptx)
        st = gs_err(ctx, GS_ERR_NVRTC_COMPILE, "NVRTC returned no PTX for %s (sm_%d)", name, sm);
    if (st == GS_OK && want_cubin && log.buf) {
        char kname[256];
        kernel_of(name, kname, sizeof kname);
        ptxas_parse_for(log.buf, kname, &out->stats);
    }

finish:
    out->log = gs_sb_take(&log);
    if (!out->log) out->log = calloc(1, 1);
    if (st != GS_OK) {
        free(out->ptx);
        free(out->cubin);
        out->ptx = NULL;
        out->cubin = NULL;
        out->ptx_len = out->cubin_len = 0;
    } else if (!out->log) {
        st = gs_err(ctx, GS_ERR_NOMEM, "gs_nvrtc_compile: no memory for the log");
    }
    return st;
}

void gs_nvrtc_out_free(gs_nvrtc_out *o) {
    if (!o) return;
    free(o->ptx);
    free(o->cubin);
    free(o->log);
    memset(o, 0, sizeof *o);
}

gs_status gs_cuda_target(gs_ctx *ctx, int sm, int *arch, bool *cubin) {
    int archs[64], n = 0;
    gs_status s = gs_nvrtc_supported_archs(ctx, archs, 64, &n);
    if (s != GS_OK) return s;
    int below = 0;
    for (int i = 0; i < n; i++) {
        if (archs[i] == sm) {
            *arch = sm;
            *cubin = true;
            return GS_OK;
        }
        if (archs[i] < sm && archs[i] > below) below = archs[i];
    }
    if (!below)
        return gs_err(ctx, GS_ERR_ARCH_UNSUPPORTED,
                      "the device is sm_%d and the installed NVRTC supports no arch at or below it", sm);
    *arch = below;
    *cubin = false;
    return GS_OK;
}
