/* dynamic.c — dynamic shapes through the dispatcher (gs_dispatch).
 *
 * It uses include/gensor.h only, as a runtime embedding gensor would. Build
 * (from the repository root, after `make`; `make bench` does it):
 *   cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I include experiments/dynamic.c \
 *       -L build -lgensor -lgsl -lgslcblas -ljansson -lOpenCL -ldl -lm -o build/dynamic
 * Run:  build/dynamic [--quick] [--hw NAME] [--arch SM] [--no-compile] [--tmax N] [--smax N]
 *
 * Two workloads, on one profile (rtx4090) with NVRTC cubins for sm_89:
 *   dense       DietCode's BERT-base dense layer: X=[16*T,768], W=[2304,768],
 *               Y = X*W^T, i.e. gemm M=16T N=2304 K=768 transB=1, T = 1..128;
 *   bert-small  a BERT-small encoder (hidden 512, 8 heads, FFN 2048, 4 layers,
 *               batch 1) at sequence length S = 1..512: the operators of
 *               experiments/models/bert_small_s128_b1.json with 128 replaced
 *               by S (and 1024 = 8*128 by 8*S), each dispatched `count` times
 *               per forward pass, as a runtime would.
 * Each workload runs under several dispatcher settings, each with a fresh
 * dispatcher and an in-memory cache:
 *   cold        GS_WARM_OFF, reuse_tol 0: a walk per new shape (ties reuse compiled
 *               kernels); it compiles for real, into a disk cache
 *               the cold-restart row reads back
 *   cold-noreuse  GS_WARM_OFF, reuse_tol < 0: always the top candidate
 *   cold-tol5   GS_WARM_OFF, reuse_tol 0.05: up to 5% predicted loss to reuse a kernel
 *   warm        GS_WARM_CONSTRUCT: nearest shape's state vs a 4-chain construction
 *   reuse       GS_WARM_REUSE: the nearest shape's state whenever it fits
 *   memo        GS_WARM_MEMO, reuse_tol 0 (the default): the shape-class memo,
 *               no walk when the kernel it finds is compiled already
 * and reports: distinct kernels compiled, total construction ms, total NVRTC
 * ms, the mean cost of a new shape whose kernel is compiled already (a
 * construction plus a lookup; target < 2 ms), the mean cost of a repeated
 * shape, and the predicted time lost against constructing every shape from
 * scratch with a default (8-chain) construction and taking its top candidate
 * (summed over all dispatches, each weighted by its count), and per shape the
 * geometric mean and the worst of that ratio.
 * The verdict lines say whether warm start wins on both construction time and
 * predicted quality, and what the memo costs per new shape on a compiled
 * kernel (CPU and wall) and loses per shape against a fresh construction. */
#include "gensor.h" /* the public API only, as an embedding runtime uses it */

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

typedef struct item {
    char spec[160];
    int count;
} item;

/* ---- workloads ----------------------------------------------------------------- */
static int dense_items(int tmax, int step, item *out, int cap) {
    int n = 0;
    for (int T = 1; T <= tmax && n < cap; T += (T == 1 && step > 1) ? step - 1 : step) {
        snprintf(out[n].spec, sizeof out[n].spec, "gemm M=%d N=2304 K=768 transB=1", 16 * T);
        out[n++].count = 1;
    }
    return n;
}

/* BERT-small, batch 1, sequence length S (the model file at S = 128). */
static int bert_items(int smax, int step, item *out, int cap) {
    int n = 0;
    for (int S = 1; S <= smax; S += (S == 1 && step > 1) ? step - 1 : step) {
        const struct {
            const char *fmt;
            int count, nargs; /* nargs: how many %d (all S, except the 8*S of softmax) */
        } ops[] = {
            {"add M=%d N=512", 10, 1},
            {"rowmean M=%d K=512", 18, 1},
            {"mul M=%d N=512 bcast=1", 9, 1},
            {"add M=%d N=512 bcast=1", 9, 1},
            {"gemm M=%d N=1536 K=512 bias=1", 4, 1},
            {"bgemm B=8 M=%d N=%d K=64 transB=1 alpha=0.125", 4, 2},
            {"rowmax M=%d K=%d", 4, -2},
            {"rowsum M=%d K=%d", 4, -2},
            {"bgemm B=8 M=%d N=64 K=%d", 4, 2},
            {"gemm M=%d N=512 K=512 bias=1", 4, 1},
            {"gemm M=%d N=2048 K=512 bias=1 relu=1", 4, 1},
            {"gemm M=%d N=512 K=2048 bias=1", 4, 1},
        };
        for (size_t i = 0; i < sizeof ops / sizeof ops[0] && n < cap; i++) {
            if (ops[i].nargs == 1) snprintf(out[n].spec, sizeof out[n].spec, ops[i].fmt, S);
            else if (ops[i].nargs == 2) snprintf(out[n].spec, sizeof out[n].spec, ops[i].fmt, S, S);
            else snprintf(out[n].spec, sizeof out[n].spec, ops[i].fmt, 8 * S, S);
            out[n++].count = ops[i].count;
        }
    }
    return n;
}

/* ---- kernels seen, with their NVRTC time -------------------------------------------
 * The default mode compiles through the dispatcher (real NVRTC, timed per
 * kernel); the other modes only construct (compile = 0), and each kernel
 * they need that the default mode did not compile is compiled once here
 * afterwards, so every mode's NVRTC total is the sum of real compile times
 * of its own kernels without compiling a descriptor twice. */
typedef struct kern {
    uint64_t key;
    double ms; /* NAN until compiled */
    char spec[160];
    char config[200];
} kern;

typedef struct ktab {
    kern *k;
    int n, cap;
} ktab;

static int ktab_find(const ktab *t, uint64_t key) {
    for (int i = t->n - 1; i >= 0; i--)
        if (t->k[i].key == key) return i;
    return -1;
}

static int ktab_add(ktab *t, uint64_t key, const char *spec, const char *cfg) {
    int i = ktab_find(t, key);
    if (i >= 0) return i;
    if (t->n == t->cap) {
        int nc = t->cap ? 2 * t->cap : 256;
        kern *nk = realloc(t->k, (size_t)nc * sizeof *nk);
        if (!nk) return -1;
        t->k = nk;
        t->cap = nc;
    }
    kern *k = &t->k[t->n];
    k->key = key;
    k->ms = NAN;
    snprintf(k->spec, sizeof k->spec, "%s", spec);
    snprintf(k->config, sizeof k->config, "%s", cfg);
    return t->n++;
}

/* Compile (emit + NVRTC cubin) every kernel of the table not compiled yet:
 * its configuration as a one-candidate result, emitted for arch. */
static int ktab_compile(gs_ctx *ctx, const gs_hw *hw, ktab *t, int arch) {
    for (int i = 0; i < t->n; i++) {
        kern *k = &t->k[i];
        if (!isnan(k->ms)) continue;
        gs_op *op = NULL;
        gs_result *r = NULL;
        gs_kernel *kn = NULL;
        gs_kernel_stats st;
        gs_status s = gs_op_parse(ctx, k->spec, &op);
        if (s == GS_OK) s = gs_construct_config(ctx, op, hw, k->config, &r);
        if (s == GS_OK) s = gs_kernel_create(ctx, r, 0, GS_DIALECT_CUDA, arch, &kn);
        if (s == GS_OK) {
            if (gs_kernel_key(kn) != k->key)
                fprintf(stderr, "dynamic: warning: %s: descriptor changed on re-emission\n", k->spec);
            s = gs_kernel_compile(ctx, kn, &st);
            if (s == GS_OK) k->ms = st.compile_s * 1e3;
        }
        gs_kernel_destroy(kn);
        gs_result_destroy(r);
        gs_op_destroy(op);
        if (s != GS_OK) {
            fprintf(stderr, "dynamic: compile %s [%s]: %s\n", k->spec, k->config, gs_ctx_errmsg(ctx));
            return 1;
        }
    }
    return 0;
}

/* ---- one run ---------------------------------------------------------------------- */
typedef struct mode {
    const char *name;
    gs_warm_start warm;
    double tol;
} mode;

typedef struct run_result {
    int64_t dispatches, shapes, constructions, kernels, compiles, disk_hits;
    double construct_ms, construct_cpu_ms, compile_ms, total_ms;
    double newhit_ms, newhit_cpu_ms, newhit_max_ms;
    int64_t newhits;
    double repeat_us;
    int64_t repeats;
    double pred_s, fresh_s; /* count-weighted sums */
    double logratio, worst;  /* per new shape: sum of ln(predicted / fresh), max of predicted / fresh */
    int64_t nratio;
    int *kidx;              /* this run's kernels (indices into the table) */
    int nk;
} run_result;

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int run(gs_ctx *ctx, const gs_hw *hw, int arch, bool compile, const char *cache_dir, const mode *m,
               const item *it, int n, const double *fresh, ktab *kt, run_result *res) {
    memset(res, 0, sizeof *res);
    gs_dispatch_opts o;
    gs_dispatch_opts_default(&o);
    o.cache_dir = cache_dir;
    o.arch = arch;
    o.compile = compile;
    o.warm_start = m->warm;
    o.reuse_tol = m->tol;
    gs_dispatcher *d = NULL;
    gs_status s = gs_dispatcher_create(ctx, hw, &o, &d);
    if (s != GS_OK) {
        fprintf(stderr, "dynamic: %s: %s\n", gs_status_str(s), gs_ctx_errmsg(ctx));
        return 1;
    }
    res->kidx = malloc((size_t)(n + 1) * sizeof *res->kidx);
    if (!res->kidx) {
        gs_dispatcher_destroy(d);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        gs_op *op = NULL;
        s = gs_op_parse(ctx, it[i].spec, &op);
        if (s != GS_OK) {
            fprintf(stderr, "dynamic: %s: %s\n", it[i].spec, gs_ctx_errmsg(ctx));
            gs_dispatcher_destroy(d);
            return 1;
        }
        for (int c = 0; c < it[i].count; c++) {
            gs_kernel_handle h;
            double c0 = cpu_now();
            s = gs_dispatch(ctx, d, op, &h);
            double cpu = cpu_now() - c0;
            if (s != GS_OK) {
                fprintf(stderr, "dynamic: dispatch %s: %s: %s\n", it[i].spec, gs_status_str(s), gs_ctx_errmsg(ctx));
                gs_op_destroy(op);
                gs_dispatcher_destroy(d);
                return 1;
            }
            if (!h.hit) {
                int ki = ktab_add(kt, h.key, it[i].spec, h.config);
                if (ki < 0) {
                    gs_op_destroy(op);
                    gs_dispatcher_destroy(d);
                    return 1;
                }
                if (compile && !h.disk_hit && h.compile_s > 0 && isnan(kt->k[ki].ms)) kt->k[ki].ms = h.compile_s * 1e3;
                res->kidx[res->nk++] = ki;
            }
            if (h.new_shape && h.hit) {
                res->newhit_ms += h.dispatch_s * 1e3;
                res->newhit_cpu_ms += cpu * 1e3;
                if (h.dispatch_s * 1e3 > res->newhit_max_ms) res->newhit_max_ms = h.dispatch_s * 1e3;
                res->newhits++;
            } else if (!h.new_shape) {
                res->repeat_us += h.dispatch_s * 1e6;
                res->repeats++;
            }
            res->pred_s += h.predicted_s;
            res->fresh_s += fresh[i];
            if (h.new_shape) {
                double q = h.predicted_s / fresh[i];
                res->logratio += log(q);
                if (q > res->worst) res->worst = q;
                res->nratio++;
            }
        }
        gs_op_destroy(op);
    }
    gs_dispatch_stats st;
    gs_dispatch_stats_get(d, &st);
    res->dispatches = st.dispatches;
    res->shapes = st.shapes;
    res->constructions = st.constructions;
    res->kernels = st.kernels;
    res->compiles = st.compiles;
    res->disk_hits = st.disk_hits;
    res->construct_ms = st.construct_ms;
    res->construct_cpu_ms = st.construct_cpu_ms;
    res->compile_ms = st.compile_ms;
    res->total_ms = st.dispatch_ms;
    if (res->newhits) {
        res->newhit_ms /= (double)res->newhits;
        res->newhit_cpu_ms /= (double)res->newhits;
    }
    if (res->repeats) res->repeat_us /= (double)res->repeats;
    gs_dispatcher_destroy(d);
    return 0;
}

/* Fresh reference: a default (8-chain) construction per item, its top candidate. */
static int fresh_times(gs_ctx *ctx, const gs_hw *hw, const item *it, int n, double *fresh, double *ms) {
    gs_construct_opts co;
    gs_construct_opts_default(&co);
    co.top_k = 1;
    *ms = 0;
    for (int i = 0; i < n; i++) {
        gs_op *op = NULL;
        gs_result *r = NULL;
        gs_status s = gs_op_parse(ctx, it[i].spec, &op);
        if (s == GS_OK) s = gs_construct(ctx, op, hw, &co, &r);
        if (s != GS_OK) {
            fprintf(stderr, "dynamic: %s: %s\n", it[i].spec, gs_ctx_errmsg(ctx));
            gs_op_destroy(op);
            return 1;
        }
        fresh[i] = gs_result_predicted_s(r, 0);
        *ms += gs_result_construct_s(r) * 1e3;
        gs_result_destroy(r);
        gs_op_destroy(op);
    }
    return 0;
}

/* ---- the table of one workload ------------------------------------------------------
 * One row per mode (res[nmodes]: the cold restart when restart), then the
 * verdicts: warm start against cold, and the memo against the < 2 ms target
 * and cold's quality. */
static void print_table(const mode *modes, int nmodes, const run_result *res, bool restart, bool compile,
                        const ktab *kt) {
    printf("%-13s %6s %6s %6s %7s %10s %9s %9s %10s %9s %8s %9s %8s %7s %7s\n", "mode", "disp", "shapes",
           "constr", "kernels", "constr ms", "(cpu ms)", "nvrtc ms", "new-hit ms", "(cpu ms)", "(max ms)",
           "repeat us", "loss %", "geo %", "worst %");
    for (int m = 0; m < nmodes + (restart ? 1 : 0); m++) {
        const run_result *r = &res[m];
        double nv = 0;
        if (m < nmodes)
            for (int j = 0; j < r->nk; j++) nv += compile ? kt->k[r->kidx[j]].ms : 0;
        else nv = r->compile_ms;
        char kern[32];
        if (m < nmodes) snprintf(kern, sizeof kern, "%lld", (long long)r->kernels);
        else snprintf(kern, sizeof kern, "%lld/%lld", (long long)r->compiles, (long long)r->kernels);
        printf("%-13s %6lld %6lld %6lld %7s %10.1f %9.1f %9.1f %10.3f %9.3f %8.3f %9.2f %8.3f %7.2f %7.1f\n",
               m < nmodes ? modes[m].name : "cold-restart", (long long)r->dispatches, (long long)r->shapes,
               (long long)r->constructions, kern, r->construct_ms, r->construct_cpu_ms, nv, r->newhit_ms,
               r->newhit_cpu_ms, r->newhit_max_ms, r->repeat_us, 100.0 * (r->pred_s / r->fresh_s - 1.0),
               100.0 * (exp(r->logratio / (double)(r->nratio ? r->nratio : 1)) - 1.0),
               100.0 * (r->worst - 1.0));
    }
    if (restart)
        printf("(cold-restart: the cold mode again in a new dispatcher over the disk cache the cold run "
               "filled: %lld kernels read from disk, %lld compiled)\n",
               (long long)res[nmodes].disk_hits, (long long)res[nmodes].compiles);
    const run_result *cold = &res[0], *warm = NULL;
    for (int m = 0; m < nmodes; m++)
        if (modes[m].warm == GS_WARM_CONSTRUCT) warm = &res[m];
    /* CPU time: wall clock on a shared machine mostly measures the neighbours */
    bool faster = warm->construct_cpu_ms < cold->construct_cpu_ms;
    bool better = warm->pred_s <= cold->pred_s * (1 + 1e-12);
    printf("warm start vs cold: construction %.1f vs %.1f CPU ms (%s), predicted total %.4f vs %.4f ms (%s), "
           "%lld vs %lld kernels -> %s\n",
           warm->construct_cpu_ms, cold->construct_cpu_ms, faster ? "faster" : "slower", warm->pred_s * 1e3,
           cold->pred_s * 1e3, better ? "not worse" : "worse", (long long)warm->kernels,
           (long long)cold->kernels, faster && better ? "wins on both" : "does not win on both");
    for (int m = 0; m < nmodes; m++) {
        if (modes[m].warm != GS_WARM_MEMO) continue;
        const run_result *r = &res[m];
        double geo = exp(r->logratio / (double)(r->nratio ? r->nratio : 1)) - 1.0;
        printf("memo vs cold: new shape on a compiled kernel %.3f vs %.3f CPU ms (%.3f vs %.3f wall; target < 2), "
               "predicted time per shape against a fresh construction: geomean %+.2f%%, worst %+.1f%%, "
               "%lld vs %lld kernels\n",
               r->newhit_cpu_ms, cold->newhit_cpu_ms, r->newhit_ms, cold->newhit_ms, 100.0 * geo,
               100.0 * (r->worst - 1.0), (long long)r->kernels, (long long)cold->kernels);
    }
}

int main(int argc, char **argv) {
    const char *hwname = "rtx4090";
    int arch = 89, tmax = 128, smax = 512, step_t = 1, step_s = 1;
    bool compile = true;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            step_t = 4;
            step_s = 16;
        } else if (!strcmp(argv[i], "--no-compile")) compile = false;
        else if (!strcmp(argv[i], "--hw") && i + 1 < argc) hwname = argv[++i];
        else if (!strcmp(argv[i], "--arch") && i + 1 < argc) arch = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tmax") && i + 1 < argc) tmax = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--smax") && i + 1 < argc) smax = atoi(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: dynamic [--quick] [--hw NAME] [--arch SM] [--no-compile] [--tmax N] [--smax N]\n");
            return 2;
        }
    }
    if (tmax < 1 || smax < 1 || arch < 0) {
        fprintf(stderr, "dynamic: --tmax, --smax must be >= 1\n");
        return 2;
    }
    gs_ctx *ctx = gs_ctx_create();
    gs_hw *hw = NULL;
    if (!ctx || gs_hw_load(ctx, hwname, &hw) != GS_OK) {
        fprintf(stderr, "dynamic: %s\n", ctx ? gs_ctx_errmsg(ctx) : "out of memory");
        return 2;
    }
    if (compile && !gs_nvrtc_nearest_arch(ctx, arch ? arch : gs_hw_sm(hw))) {
        fprintf(stderr, "dynamic: note: NVRTC missing (%s); kernels are cached as CUDA source, NVRTC ms is 0\n",
                gs_ctx_errmsg(ctx));
    }
    static const mode modes[] = {
        {"cold", GS_WARM_OFF, 0.0},
        {"cold-noreuse", GS_WARM_OFF, -1.0},
        {"cold-tol5", GS_WARM_OFF, 0.05},
        {"warm", GS_WARM_CONSTRUCT, 0.0},
        {"reuse", GS_WARM_REUSE, 0.0},
        {"memo", GS_WARM_MEMO, 0.0},
    };
    enum { NMODES = sizeof modes / sizeof modes[0] };
    int cap = 512 * 12 + 200;
    item *it = calloc((size_t)cap, sizeof *it);
    double *fresh = calloc((size_t)cap, sizeof *fresh);
    if (!it || !fresh) return 1;
    printf("dynamic shapes: profile %s, NVRTC arch sm_%d%s, seed 1; times are wall-clock on this machine\n",
           gs_hw_name(hw), arch, compile ? "" : " (no compile)");
    int rc = 0;
    char tmpl[] = "/tmp/gensor-dynamic-XXXXXX";
    char *cache_dir = compile ? mkdtemp(tmpl) : NULL;
    if (compile && !cache_dir) fprintf(stderr, "dynamic: note: no temporary cache directory; restart row skipped\n");
    for (int w = 0; w < 2 && !rc; w++) {
        int n = w == 0 ? dense_items(tmax, step_t, it, cap) : bert_items(smax, step_s, it, cap);
        double fresh_ms = 0;
        if (fresh_times(ctx, hw, it, n, fresh, &fresh_ms)) {
            rc = 1;
            break;
        }
        if (w == 0)
            printf("\n[dense] gemm M=16T N=2304 K=768 transB=1, T=1..%d step %d: %d shapes\n", tmax, step_t, n);
        else
            printf("\n[bert-small] 4 layers, h=512, 8 heads, FFN 2048, batch 1, S=1..%d step %d: %d shapes, "
                   "78 dispatches per S\n",
                   smax, step_s, n);
        printf("fresh default (8-chain) constructions of every shape (the reference): %.1f ms\n", fresh_ms);
        ktab kt = {0};
        run_result res[NMODES + 1];
        memset(res, 0, sizeof res);
        int nrun = 0;
        /* the default mode compiles for real, into a fresh disk cache */
        for (int m = 0; m < NMODES && !rc; m++, nrun++)
            rc = run(ctx, hw, arch, compile && m == 0, m == 0 && cache_dir ? cache_dir : "", &modes[m], it, n, fresh,
                     &kt, &res[m]);
        /* a second process would find the default mode's kernels on disk */
        bool restart = !rc && compile && cache_dir;
        if (restart) {
            rc = run(ctx, hw, arch, true, cache_dir, &modes[0], it, n, fresh, &kt, &res[NMODES]);
            nrun++;
        }
        if (!rc && compile) rc = ktab_compile(ctx, hw, &kt, arch);
        if (!rc) {
            print_table(modes, NMODES, res, restart, compile, &kt);
        }
        for (int m = 0; m < nrun; m++) free(res[m].kidx);
        free(kt.k);
        fflush(stdout);
    }
    if (cache_dir) {
        /* remove the temporary cache (flat: entries only) */
        DIR *dh = opendir(cache_dir);
        struct dirent *de;
        while (dh && (de = readdir(dh))) {
            if (de->d_name[0] == '.') continue;
            char p[512];
            snprintf(p, sizeof p, "%s/%s", cache_dir, de->d_name);
            (void)unlink(p);
        }
        if (dh) closedir(dh);
        if (rmdir(cache_dir) != 0) fprintf(stderr, "dynamic: note: could not remove %s\n", cache_dir);
    }
    printf("\nnotes: kernels = distinct descriptors (NVRTC cubins); nvrtc ms = the real NVRTC time of those "
           "kernels; new-hit = a shape not seen before whose kernel was compiled already (construction + lookup; "
           "target < 2 ms), wall and thread-CPU time; constr = walks run (gs_construct); constr ms = the time in them "
           "and in the memo's fits and polish, wall and thread-CPU; repeat = a shape seen before; loss = count-weighted "
           "predicted time of the dispatched kernels over that of a fresh default (8-chain) construction's top "
           "candidate per shape, minus 1; geo, worst = the geometric mean and the maximum over new shapes of that "
           "ratio, minus 1.\n");
    free(it);
    free(fresh);
    gs_hw_destroy(hw);
    gs_ctx_destroy(ctx);
    return rc;
}
