/* calibrate.c — the analytic estimate against measured kernels, and a fit of
 * its code-level constants (gs_model_params).
 *
 *   calibrate [--xgemm CSV] [--fidelity CSV] [--suite CSV] [--fit] [--param name=value ...]
 *             [--scatter FILE]
 *
 * Three measured sets, each priced as the plan that was actually run:
 *
 * 1. --xgemm: a CLBlast Xgemm sweep on an RTX 3090 (Kernel Tuner
 *    benchmark-hub format; columns MWG,NWG,KWG,MDIMC,NDIMC,MDIMA,NDIMB,KWI,
 *    VWM,VWN,STRM,STRN,SA,SB,time_ms). Rows that share tiles, threads and
 *    staging differ only in load mappings and vector widths; each such group
 *    is represented by its fastest row. CLBlast is column-major: M is the
 *    contiguous dimension of A and C, and local id 0 (MDIMC threads) runs
 *    along M. In gensor's row-major terms the kernel computes gemm M'=N N'=M
 *    with A' = B stored [K,N] (transA=1) and B' = A stored [K,M], so a group
 *    maps to bm=NWG bn=MWG bk=KWG tm=NWG/NDIMC tn=MWG/MDIMC vm=vn=1 sa=SB
 *    sb=SA. CLBlast loads and reads local memory with vectors, one stage,
 *    no bounds checks (it pads the matrices): gensor's default plan with one
 *    stage is that kernel.
 * 2. --fidelity: codegen v1 kernels measured on an H100
 *    (../shared/data/h100/fidelity_v1.csv: gemm 4096^3 and two 3x3 convs,
 *    about 200 configurations each). v1 is priced as the baseline plan
 *    (scalar copies and reads, odd-pitch layout, predicated everywhere, one
 *    stage, launch bounds (threads, 1)), which is what v1 emitted.
 * 3. --suite: the walk's v1 top-1 of every suite operator, measured on the
 *    H100 (suite_v1.csv), priced the same way.
 *
 * Reported per set: Spearman rank correlation of predicted and measured,
 * the geometric mean of predicted/measured, the measured time of the model's
 * top-1 and the best measured in its top-10 relative to the measured best.
 * --fit runs a coordinate descent over the constants (multiplicative steps)
 * on all given sets and prints the constants it finds; they are copied by
 * hand into gs_model_params_default() (hwmodel/model/model.c) and MODEL.md.
 * Nothing from the data is stored in the product.
 */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwmodel/model/model.h" /* internal: fits gs_model_params, pricing plans with gs_estimate_plan; gensor.h has neither */

enum { SET_XGEMM = 0, SET_F1, SET_F3, SET_F5, SET_SUITE, NSETS };
static const char *set_names[NSETS] = {"xgemm-rtx3090", "fidelity-F1-gemm", "fidelity-F3-conv", "fidelity-F5-conv",
                                       "suite-v1-top1"};

typedef struct sample {
    int set;
    gs_op op;
    gs_etir e;
    gs_plan plan;
    const gs_hw *hw;
    double meas_ms, pred_ms;
    char label[96];
} sample;

typedef struct samples {
    sample *s;
    int n, cap;
} samples;

static sample *push(samples *v) {
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 1024;
        v->s = realloc(v->s, (size_t)v->cap * sizeof *v->s);
        if (!v->s) {
            fprintf(stderr, "calibrate: out of memory\n");
            exit(2);
        }
    }
    memset(&v->s[v->n], 0, sizeof v->s[v->n]);
    return &v->s[v->n++];
}

/* Split a CSV line into fields (double quotes group commas). */
static int csv_fields(char *line, char **f, int cap) {
    int n = 0;
    char *p = line;
    while (*p && n < cap) {
        if (*p == '"') {
            f[n++] = ++p;
            while (*p && *p != '"') p++;
            if (*p) *p++ = 0;
            if (*p == ',') p++;
        } else {
            f[n++] = p;
            while (*p && *p != ',' && *p != '\n' && *p != '\r') p++;
            if (*p) *p++ = 0;
        }
    }
    return n;
}

/* ---- loaders ------------------------------------------------------------------------ */
typedef struct xgroup {
    int mwg, nwg, kwg, mdimc, ndimc, sa, sb;
    double ms;
} xgroup;

static int load_xgemm(gs_ctx *ctx, const char *path, const gs_hw *hw, samples *v) {
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    int cap = 4096, n = 0;
    xgroup *g = calloc((size_t)cap, sizeof *g);
    char line[1024];
    if (!fgets(line, sizeof line, f)) {
        fclose(f);
        free(g);
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        xgroup k;
        int mdima, ndimb, kwi, vwm, vwn, strm, strn;
        if (sscanf(line, "%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%lf", &k.mwg, &k.nwg, &k.kwg, &k.mdimc, &k.ndimc,
                   &mdima, &ndimb, &kwi, &vwm, &vwn, &strm, &strn, &k.sa, &k.sb, &k.ms) != 15)
            continue;
        int i = 0;
        for (; i < n; i++)
            if (g[i].mwg == k.mwg && g[i].nwg == k.nwg && g[i].kwg == k.kwg && g[i].mdimc == k.mdimc &&
                g[i].ndimc == k.ndimc && g[i].sa == k.sa && g[i].sb == k.sb)
                break;
        if (i == n && n < cap) g[n++] = k;
        else if (i < n && k.ms < g[i].ms) g[i].ms = k.ms;
    }
    fclose(f);
    gs_op op;
    if (gs_op_build_gemm(ctx, &op, 4096, 4096, 4096, 1, 0, 1, 0) != GS_OK) return -1;
    int used = 0;
    for (int i = 0; i < n; i++) {
        char cfg[256];
        snprintf(cfg, sizeof cfg, "bm=%d,bn=%d,bk=%d,tm=%d,tn=%d,vm=1,vn=1,sa=%d,sb=%d", g[i].nwg, g[i].mwg, g[i].kwg,
                 g[i].nwg / g[i].ndimc, g[i].mwg / g[i].mdimc, g[i].sb, g[i].sa);
        gs_etir e;
        if (gs_etir_parse_config(ctx, &op, cfg, &e) != GS_OK) continue;
        sample *s = push(v);
        s->set = SET_XGEMM;
        s->op = op;
        s->e = e;
        s->hw = hw;
        s->meas_ms = g[i].ms;
        gs_plan_make(hw, &op, &e, NULL, &s->plan);
        snprintf(s->label, sizeof s->label, "%.90s", cfg);
        used++;
    }
    free(g);
    return used;
}

/* v1 kernels: the baseline plan (what codegen v1 emitted). */
static const gs_plan_opts v1_style = {.scalar = 1, .predicated = 1, .no_async = 1, .min_blocks1 = 1, .im2col = GS_IM2COL_OFF};

static int load_rows(gs_ctx *ctx, const char *path, const gs_hw *hw, samples *v, bool suite) {
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char line[4096];
    int used = 0, skipped = 0;
    if (!fgets(line, sizeof line, f)) {
        fclose(f);
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        char *fl[16];
        int nf = csv_fields(line, fl, 16);
        const char *spec, *cfg, *ms, *name;
        int set;
        if (suite) { /* name,spec,markov_top1_ms,...,markov_top1_config,... */
            if (nf < 9) continue;
            name = fl[0], spec = fl[1], ms = fl[2], cfg = fl[8];
            set = SET_SUITE;
        } else { /* set,spec,config,predicted,measured_ms,... */
            if (nf < 5) continue;
            name = fl[0], spec = fl[1], cfg = fl[2], ms = fl[4];
            set = !strcmp(fl[0], "F1") ? SET_F1 : !strcmp(fl[0], "F3") ? SET_F3 : SET_F5;
        }
        sample s;
        memset(&s, 0, sizeof s);
        if (gs_op_parse_into(ctx, spec, &s.op) != GS_OK || gs_etir_parse_config(ctx, &s.op, cfg, &s.e) != GS_OK) {
            skipped++;
            continue;
        }
        s.set = set;
        s.hw = hw;
        s.meas_ms = atof(ms);
        if (!(s.meas_ms > 0)) continue;
        gs_plan_make(hw, &s.op, &s.e, &v1_style, &s.plan);
        snprintf(s.label, sizeof s.label, "%s %.70s", name, cfg);
        *push(v) = s;
        used++;
    }
    fclose(f);
    if (skipped) fprintf(stderr, "calibrate: %s: %d rows not parsed\n", path, skipped);
    return used;
}

/* ---- evaluation ------------------------------------------------------------------------ */
typedef struct metrics {
    int n;
    double rho, gm, top1, top10, spread;
} metrics;

static void evaluate(samples *v, const gs_model_params *mp, metrics *m) {
    for (int i = 0; i < v->n; i++) {
        sample *s = &v->s[i];
        gs_estimate est;
        gs_estimate_plan(s->hw, &s->op, &s->e, &s->plan, 0, mp, NULL, &est);
        s->pred_ms = est.time_s * 1e3;
    }
    for (int k = 0; k < NSETS; k++) {
        metrics *r = &m[k];
        memset(r, 0, sizeof *r);
        int n = 0;
        for (int i = 0; i < v->n; i++) n += v->s[i].set == k;
        r->n = n;
        if (n == 0) continue;
        double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n),
               *w = malloc(sizeof(double) * 2 * (size_t)n), *lr = malloc(sizeof(double) * (size_t)n);
        int j = 0, arg = -1;
        double best = INFINITY, slog = 0;
        for (int i = 0; i < v->n; i++) {
            const sample *s = &v->s[i];
            if (s->set != k) continue;
            x[j] = s->pred_ms;
            y[j] = s->meas_ms;
            lr[j] = log(s->pred_ms / s->meas_ms);
            slog += lr[j];
            if (s->meas_ms < best) best = s->meas_ms;
            if (arg < 0 || s->pred_ms < x[arg]) arg = j;
            j++;
        }
        r->rho = n >= 3 ? gsl_stats_spearman(x, 1, y, 1, (size_t)n, w) : NAN;
        r->gm = exp(slog / n);
        r->spread = n >= 2 ? gsl_stats_sd(lr, 1, (size_t)n) : 0;
        r->top1 = y[arg] / best;
        /* best measured among the 10 smallest predictions */
        double t10 = INFINITY;
        for (int q = 0; q < 10 && q < n; q++) {
            int a = -1;
            for (int i = 0; i < n; i++)
                if (x[i] >= 0 && (a < 0 || x[i] < x[a])) a = i;
            if (a < 0) break;
            if (y[a] < t10) t10 = y[a];
            x[a] = -1;
        }
        r->top10 = t10 / best;
        free(x);
        free(y);
        free(w);
        free(lr);
    }
}

/* The fit's objective: rank correlation everywhere, scale on the sets of
 * the emitted code's own kind (v1 on the H100), the top-1 on the sweep. */
static double objective(const metrics *m) {
    double o = 0;
    for (int k = 0; k < NSETS; k++) {
        if (!m[k].n) continue;
        double rho = isnan(m[k].rho) ? 0 : m[k].rho;
        if (k == SET_XGEMM) o += 2 * (1 - rho) + 2 * log(m[k].top1) + log(m[k].top10) + fabs(log(m[k].gm));
        else if (k == SET_SUITE) o += fabs(log(m[k].gm)) + 0.5 * m[k].spread + 0.5 * (1 - rho);
        else o += (k == SET_F1 ? 2 : 1) * (1 - rho) + fabs(log(m[k].gm)) + log(m[k].top1);
    }
    return o;
}

/* Each constant with the range the fit may move it in: the physically
 * plausible values of what it stands for (an efficiency below 1, an
 * instruction count of a few, a barrier of tens of cycles, a loaded latency
 * up to three times the idle one). */
typedef struct pdesc {
    const char *name;
    size_t off;
    double lo, hi;
} pdesc;
#define P(f, lo, hi) {#f, offsetof(gs_model_params, f), lo, hi}
static const pdesc params[] = {
    P(fma_efficiency, 0.6, 0.95),   P(k_overhead_fast, 0.25, 4),    P(k_overhead_bounded, 1, 8),
    P(copy_unit_fast, 1, 6),        P(copy_elem_edge, 4, 24),       P(unstaged_pred, 1, 12),
    P(barrier_cycles, 20, 120),     P(pipe_norm, 1.5, 16),          P(latency_norm, 1.5, 16),
    P(l1_sectors_per_clk, 0.5, 4),  P(latency_scale, 1, 3)};
enum { NPARAMS = (int)(sizeof params / sizeof params[0]) };
static double *pfield(gs_model_params *mp, int i) { return (double *)((char *)mp + params[i].off); }

static void report(const metrics *m) {
    printf("%-18s %5s %8s %8s %8s %8s %8s\n", "set", "n", "spearman", "pred/meas", "spread", "top-1", "top-10");
    for (int k = 0; k < NSETS; k++)
        if (m[k].n)
            printf("%-18s %5d %8.3f %9.3f %8.3f %7.3fx %7.3fx\n", set_names[k], m[k].n, m[k].rho, m[k].gm, m[k].spread,
                   m[k].top1, m[k].top10);
}

int main(int argc, char **argv) {
    gsl_set_error_handler_off();
    const char *xgemm = NULL, *fid = NULL, *suite = NULL, *scatter = NULL;
    bool fit = false;
    gs_model_params mp;
    gs_model_params_default(&mp);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--xgemm") && i + 1 < argc) xgemm = argv[++i];
        else if (!strcmp(argv[i], "--fidelity") && i + 1 < argc) fid = argv[++i];
        else if (!strcmp(argv[i], "--suite") && i + 1 < argc) suite = argv[++i];
        else if (!strcmp(argv[i], "--scatter") && i + 1 < argc) scatter = argv[++i];
        else if (!strcmp(argv[i], "--fit")) fit = true;
        else if (!strcmp(argv[i], "--param") && i + 1 < argc) {
            char name[64];
            double val;
            if (sscanf(argv[++i], "%63[^=]=%lf", name, &val) != 2) goto usage;
            int k = 0;
            for (; k < NPARAMS && strcmp(params[k].name, name); k++) {}
            if (k == NPARAMS) {
                fprintf(stderr, "calibrate: unknown parameter '%s'\n", name);
                return 2;
            }
            *pfield(&mp, k) = val;
        } else goto usage;
    }
    if (!xgemm && !fid && !suite) goto usage;
    gs_ctx *ctx = gs_ctx_create();
    const gs_hw *rtx = gs_hw_find_builtin("rtx3090"), *h100 = gs_hw_find_builtin("h100");
    samples v = {0};
    if (xgemm && load_xgemm(ctx, xgemm, rtx, &v) < 0) return 2;
    if (fid && load_rows(ctx, fid, h100, &v, false) < 0) return 2;
    if (suite && load_rows(ctx, suite, h100, &v, true) < 0) return 2;
    metrics m[NSETS];
    evaluate(&v, &mp, m);
    printf("calibration of the analytic estimate against measured kernels (hwmodel/MODEL.md)\n");
    report(m);
    if (fit) {
        double best = objective(m);
        double step[NPARAMS];
        for (int k = 0; k < NPARAMS; k++) step[k] = 1.5;
        for (int round = 0; round < 40; round++) {
            bool moved = false;
            for (int k = 0; k < NPARAMS; k++) {
                for (int dir = -1; dir <= 1; dir += 2) {
                    gs_model_params t = mp;
                    double *f = pfield(&t, k);
                    *f = dir > 0 ? *f * step[k] : *f / step[k];
                    if (*f < params[k].lo || *f > params[k].hi) continue;
                    evaluate(&v, &t, m);
                    double o = objective(m);
                    if (o < best - 1e-6) {
                        best = o;
                        mp = t;
                        moved = true;
                    }
                }
            }
            if (!moved) {
                bool any = false;
                for (int k = 0; k < NPARAMS; k++)
                    if (step[k] > 1.02) {
                        step[k] = sqrt(step[k]);
                        any = true;
                    }
                if (!any) break;
            }
        }
        evaluate(&v, &mp, m);
        printf("\nfitted constants (objective %.4f):\n", best);
        for (int k = 0; k < NPARAMS; k++) printf("  %-20s %.4g\n", params[k].name, *pfield(&mp, k));
        report(m);
    }
    if (scatter) {
        FILE *s = fopen(scatter, "w");
        if (s) {
            fprintf(s, "# set predicted_ms measured_ms label\n");
            for (int i = 0; i < v.n; i++)
                fprintf(s, "%s %.6f %.6f %s\n", set_names[v.s[i].set], v.s[i].pred_ms, v.s[i].meas_ms, v.s[i].label);
            fclose(s);
        }
    }
    free(v.s);
    gs_ctx_destroy(ctx);
    return 0;
usage:
    fprintf(stderr, "usage: calibrate [--xgemm CSV] [--fidelity CSV] [--suite CSV] [--fit] [--param name=value]... "
                    "[--scatter FILE]\n");
    return 2;
}
