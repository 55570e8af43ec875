/* calibrate.c — the analytic estimate against measured kernels, and a fit of
 * its code-level constants (gs_model_params).
 *
 *   calibrate [--xgemm CSV] [--fidelity CSV] [--suite CSV] [--fit] [--param name=value ...]
 *             [--scatter FILE]
 *             [--holdout [--folds K] [--seed N] [--start mid|given] [--fix name ...] [--dump-split FILE]]
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
 *
 * --holdout validates the fit on rows it did not see (after the default
 * report, which it leaves as it is):
 * - k-fold (K = 5): within each set the rows are shuffled by PCG (--seed,
 *   22; one stream per set) and dealt into K folds; each fold is held out
 *   while the free constants are refitted on the rest, starting from the
 *   middle of their ranges (--start given: from the defaults and --param,
 *   which were fitted on every row). Training and held-out metrics, per set,
 *   averaged over the folds.
 * - across GPUs: refit on the H100 sets and price the RTX 3090 sweep, and
 *   the other way round.
 * - per constant: its refits, how far the objective rises when it moves
 *   by 1.25x (flat: the data does not determine it), and how much it moves
 *   the ranking within each set and on the t4 profile.
 * --fix name keeps a constant out of the refits; --dump-split FILE lists
 * the rows given to each refit and to its held-out pricing.
 */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/pcg.h"
#include "hwmodel/model/model.h" /* internal: fits gs_model_params, pricing plans with gs_estimate_plan; gensor.h has neither */

enum { SET_XGEMM = 0, SET_F1, SET_F3, SET_F5, SET_SUITE, NSETS };
static const char *set_names[NSETS] = {"xgemm-rtx3090", "fidelity-F1-gemm", "fidelity-F3-conv", "fidelity-F5-conv",
                                       "suite-v1-top1"};

typedef struct sample {
    int set;
    int id;           /* row number in the loaded order (the held-out split's key) */
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
    v->s[v->n].id = v->n;
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
        sample *d = push(v);
        s.id = d->id;
        *d = s;
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

static void predict(samples *v, const gs_model_params *mp) {
    for (int i = 0; i < v->n; i++) {
        sample *s = &v->s[i];
        gs_estimate est;
        gs_estimate_plan(s->hw, &s->op, &s->e, &s->plan, 0, mp, NULL, &est);
        s->pred_ms = est.time_s * 1e3;
    }
}

/* The metrics of each set from the samples' pred_ms. */
static void score(const samples *v, metrics *m) {
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

static void evaluate(samples *v, const gs_model_params *mp, metrics *m) {
    predict(v, mp);
    score(v, m);
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
static int param_index(const char *name) {
    for (int k = 0; k < NPARAMS; k++)
        if (!strcmp(params[k].name, name)) return k;
    fprintf(stderr, "calibrate: unknown parameter '%s'\n", name);
    return -1;
}

/* The fit: a coordinate descent over the free constants (is_free NULL: all),
 * multiplicative steps of 1.5 shrinking by square roots once no step helps,
 * down to 1.02, at most 40 rounds, each constant within its range. The
 * objective (rank, top-1, scale) is a step function of the constants, which
 * rules out gradient minimisers; this search is deterministic: it tries the
 * constants in table order and moves only on a strict improvement, so a
 * constant the data does not see stays where it started. Returns the
 * objective; *mp holds the constants found. */
static double fit_params(samples *v, gs_model_params *mp, const bool *is_free) {
    metrics m[NSETS];
    evaluate(v, mp, m);
    double best = objective(m);
    double step[NPARAMS];
    for (int k = 0; k < NPARAMS; k++) step[k] = 1.5;
    for (int round = 0; round < 40; round++) {
        bool moved = false;
        for (int k = 0; k < NPARAMS; k++) {
            if (is_free && !is_free[k]) continue;
            for (int dir = -1; dir <= 1; dir += 2) {
                gs_model_params t = *mp;
                double *f = pfield(&t, k);
                *f = dir > 0 ? *f * step[k] : *f / step[k];
                if (*f < params[k].lo || *f > params[k].hi) continue;
                evaluate(v, &t, m);
                double o = objective(m);
                if (o < best - 1e-6) {
                    best = o;
                    *mp = t;
                    moved = true;
                }
            }
        }
        if (!moved) {
            bool any = false;
            for (int k = 0; k < NPARAMS; k++)
                if ((!is_free || is_free[k]) && step[k] > 1.02) {
                    step[k] = sqrt(step[k]);
                    any = true;
                }
            if (!any) break;
        }
    }
    return best;
}

static void report(const metrics *m) {
    printf("%-18s %5s %8s %8s %8s %8s %8s\n", "set", "n", "spearman", "pred/meas", "spread", "top-1", "top-10");
    for (int k = 0; k < NSETS; k++)
        if (m[k].n)
            printf("%-18s %5d %8.3f %9.3f %8.3f %7.3fx %7.3fx\n", set_names[k], m[k].n, m[k].rho, m[k].gm, m[k].spread,
                   m[k].top1, m[k].top10);
}


/* ---- held-out validation (--holdout) ----------------------------------------------- */
enum { HELD_NONE = -1 };

/* fold[i] of every row: within each set the rows, in load order, are
 * shuffled by PCG (seed, stream 1 + set) and dealt out in turn, so every
 * fold holds 1/folds of every set (a suite row is an operator, any other row
 * one configuration). */
static void split_folds(const samples *v, int folds, uint64_t seed, int *fold) {
    int *idx = malloc(sizeof(int) * (size_t)(v->n > 0 ? v->n : 1));
    for (int k = 0; k < NSETS; k++) {
        int n = 0;
        for (int i = 0; i < v->n; i++)
            if (v->s[i].set == k) idx[n++] = i;
        gs_pcg32 rng;
        gs_pcg32_seed(&rng, seed, (uint64_t)k + 1);
        for (int j = n - 1; j > 0; j--) { /* Fisher-Yates */
            int r = (int)gs_pcg32_bounded(&rng, (uint32_t)j + 1), t = idx[j];
            idx[j] = idx[r];
            idx[r] = t;
        }
        for (int j = 0; j < n; j++) fold[idx[j]] = j % folds;
    }
    free(idx);
}

/* Copies of the rows of v whose train[i] equals want. */
static void subset(const samples *v, const bool *train, bool want, samples *out) {
    memset(out, 0, sizeof *out);
    for (int i = 0; i < v->n; i++)
        if (train[i] == want) {
            sample *d = push(out);
            *d = v->s[i];
        }
}

/* One split: refits the free constants on the rows with train[i], starting
 * from *mp, and leaves them in *mp; mtrain gets the metrics of the training
 * rows, pred[id] the prediction of each held-out row. The fitter and the
 * held-out pricing see separate copies; dump (may be NULL) lists the ids in
 * each copy as they were used, "label train|held id". */
static void fit_split(const samples *v, const bool *train, gs_model_params *mp, const bool *is_free, metrics *mtrain,
                      double *pred, FILE *dump, const char *label) {
    samples tr, te;
    subset(v, train, true, &tr);
    subset(v, train, false, &te);
    fit_params(&tr, mp, is_free);
    evaluate(&tr, mp, mtrain);
    predict(&te, mp);
    for (int i = 0; i < te.n; i++) pred[te.s[i].id] = te.s[i].pred_ms;
    if (dump) {
        for (int i = 0; i < tr.n; i++) fprintf(dump, "%s train %d\n", label, tr.s[i].id);
        for (int i = 0; i < te.n; i++) fprintf(dump, "%s held %d\n", label, te.s[i].id);
    }
    free(tr.s);
    free(te.s);
}

/* The metrics of the rows with pick[i], priced at pred[id]. */
static void score_preds(const samples *v, const bool *pick, const double *pred, metrics *m) {
    samples h;
    subset(v, pick, true, &h);
    for (int i = 0; i < h.n; i++) h.s[i].pred_ms = pred[h.s[i].id];
    score(&h, m);
    free(h.s);
}

/* One metric of a fit/held pair, or "-" for a side without rows. */
static void cell(const metrics *m, double x, bool times) {
    if (m->n) printf(times ? " %6.3fx" : " %6.3f", x);
    else printf(times ? " %7s" : " %6s", "-");
}

static void report_pair(const metrics *fit, const metrics *held) {
    printf("%-18s %9s %13s %13s %13s %15s %15s\n", "set", "rows", "spearman", "pred/meas", "spread", "top-1",
           "top-10");
    printf("%-18s %9s %13s %13s %13s %15s %15s\n", "", "fit/held", "fit   held", "fit   held", "fit   held",
           "fit    held", "fit    held");
    for (int k = 0; k < NSETS; k++) {
        const metrics *f = &fit[k], *h = &held[k];
        if (!f->n && !h->n) continue;
        printf("%-18s %4d/%-4d", set_names[k], f->n, h->n);
        cell(f, f->rho, false), cell(h, h->rho, false);
        cell(f, f->gm, false), cell(h, h->gm, false);
        cell(f, f->spread, false), cell(h, h->spread, false);
        cell(f, f->top1, true), cell(h, h->top1, true);
        cell(f, f->top10, true), cell(h, h->top10, true);
        printf("\n");
    }
}

typedef struct holdout_cfg {
    int folds;
    uint64_t seed;
    bool free[NPARAMS]; /* the constants refitted (--fix takes one out) */
    bool mid_start;     /* start every refit at the middle of the ranges */
    FILE *dump;         /* --dump-split */
} holdout_cfg;

/* Where every refit starts: the given constants (defaults and --param), or
 * with mid_start the geometric middle of each free constant's range, so that
 * no value fitted on the held-out rows leaks into their fold's start. */
static void start_params(const holdout_cfg *c, const gs_model_params *given, gs_model_params *mp) {
    *mp = *given;
    if (!c->mid_start) return;
    for (int k = 0; k < NPARAMS; k++)
        if (c->free[k]) *pfield(mp, k) = sqrt(params[k].lo * params[k].hi);
}

/* Adds a fold's metrics to a running sum (the mean is taken by mean_of). */
static void add_metrics(metrics *sum, const metrics *m) {
    for (int k = 0; k < NSETS; k++) {
        if (!m[k].n) continue;
        sum[k].n += m[k].n;
        sum[k].rho += m[k].rho;
        sum[k].gm += log(m[k].gm);
        sum[k].spread += m[k].spread;
        sum[k].top1 += m[k].top1;
        sum[k].top10 += m[k].top10;
    }
}

static void mean_of(metrics *sum, int folds) {
    for (int k = 0; k < NSETS; k++) {
        if (!sum[k].n) continue;
        sum[k].n /= folds;
        sum[k].rho /= folds;
        sum[k].gm = exp(sum[k].gm / folds);
        sum[k].spread /= folds;
        sum[k].top1 /= folds;
        sum[k].top10 /= folds;
    }
}

/* k-fold by row within each set: fold f is held out while the constants
 * are refitted on the others. Both sides are scored per fold and averaged
 * over the folds: fit on the training rows, held on the held-out rows (so a
 * held-out top-1 is the model's pick among rows it was not fitted on,
 * against the best of those rows). fold_mp[f] receives fold f's constants. */
static void holdout_kfold(const samples *v, const holdout_cfg *c, const gs_model_params *given,
                          gs_model_params *fold_mp) {
    size_t n = (size_t)(v->n > 0 ? v->n : 1);
    int *fold = malloc(sizeof(int) * n);
    bool *train = malloc(sizeof(bool) * n), *held = malloc(sizeof(bool) * n);
    double *pred = malloc(sizeof(double) * n);
    split_folds(v, c->folds, c->seed, fold);
    metrics fit[NSETS], out[NSETS];
    memset(fit, 0, sizeof fit);
    memset(out, 0, sizeof out);
    for (int f = 0; f < c->folds; f++) {
        char label[32];
        snprintf(label, sizeof label, "fold%d", f);
        for (int i = 0; i < v->n; i++) {
            train[i] = fold[i] != f;
            held[i] = !train[i];
        }
        metrics mt[NSETS], mh[NSETS];
        start_params(c, given, &fold_mp[f]);
        fit_split(v, train, &fold_mp[f], c->free, mt, pred, c->dump, label);
        score_preds(v, held, pred, mh);
        add_metrics(fit, mt);
        add_metrics(out, mh);
    }
    mean_of(fit, c->folds);
    mean_of(out, c->folds);
    int nfree = 0;
    for (int k = 0; k < NPARAMS; k++) nfree += c->free[k];
    printf("\nheld out: %d folds by row within each set (PCG seed %llu); %d free constants refitted on the other "
           "folds from %s;\nfit: the training rows, held: the held-out rows, each scored per fold and averaged over "
           "the folds\n",
           c->folds, (unsigned long long)c->seed, nfree,
           c->mid_start ? "the middle of their ranges" : "the given values");
    report_pair(fit, out);
    free(fold);
    free(train);
    free(held);
    free(pred);
}

/* Across GPUs: refit on the H100 sets, price the RTX 3090 sweep, and the
 * other way round. */
static void holdout_cross(const samples *v, const holdout_cfg *c, const gs_model_params *given) {
    size_t n = (size_t)(v->n > 0 ? v->n : 1);
    bool *train = malloc(sizeof(bool) * n), *held = malloc(sizeof(bool) * n);
    double *pred = malloc(sizeof(double) * n);
    static const char *names[2] = {"on the H100 sets, held out: the RTX 3090 sweep",
                                   "on the RTX 3090 sweep, held out: the H100 sets"};
    for (int dir = 0; dir < 2; dir++) {
        int ntr = 0;
        for (int i = 0; i < v->n; i++) {
            train[i] = (v->s[i].set == SET_XGEMM) == (dir == 1);
            held[i] = !train[i];
            ntr += train[i];
        }
        if (ntr == 0 || ntr == v->n) continue;
        gs_model_params mp;
        metrics mt[NSETS], mh[NSETS];
        start_params(c, given, &mp);
        fit_split(v, train, &mp, c->free, mt, pred, c->dump, dir ? "gpu-rtx3090" : "gpu-h100");
        score_preds(v, held, pred, mh);
        printf("\nheld out across GPUs: refitted %s\n", names[dir]);
        report_pair(mt, mh);
        printf("  constants:");
        for (int k = 0; k < NPARAMS; k++) printf(" %s=%.3g", params[k].name, *pfield(&mp, k));
        printf("\n");
    }
    free(train);
    free(held);
    free(pred);
}

/* The spread over the rows of each set of ln(pred / base) (a change of
 * scale alone gives 0: what a constant does to the ranking); out[NSETS] is
 * for the t4 rows. */
static void reach(samples *v, samples *t4, const double *base, const double *base_t4, const gs_model_params *mp,
                  double *out) {
    predict(v, mp);
    predict(t4, mp);
    for (int k = 0; k <= NSETS; k++) {
        samples *w = k == NSETS ? t4 : v;
        const double *b = k == NSETS ? base_t4 : base;
        double *d = malloc(sizeof(double) * (size_t)(w->n > 0 ? w->n : 1));
        int m = 0;
        for (int i = 0; i < w->n; i++)
            if (k == NSETS || w->s[i].set == k) d[m++] = log(w->s[i].pred_ms / b[i]);
        out[k] = m >= 2 ? gsl_stats_sd(d, 1, (size_t)m) : NAN;
        free(d);
    }
}

/* Which constants the data determines. Per constant: where the refits
 * started, its refit on all the rows, its range over the folds' refits, the
 * rise of the objective on all the rows when it alone moves by x1.25 or
 * /1.25 from the all-row refit (the smaller rise: flat means undetermined),
 * and what x1.25 does to the ranking within each set (the sd of ln pred
 * change), the last column for the sweep's configurations priced on the t4
 * profile (Turing: 64 FP32 lanes, 64 KiB of shared memory, 32 warps). */
static void holdout_constants(samples *v, const holdout_cfg *c, const gs_model_params *given,
                              const gs_model_params *fold_mp) {
    gs_model_params all, start;
    start_params(c, given, &start);
    all = start;
    double o_all = fit_params(v, &all, c->free);
    const gs_hw *t4hw = gs_hw_find_builtin("t4");
    samples t4 = {0};
    for (int i = 0; i < v->n; i++)
        if (v->s[i].set == SET_XGEMM) {
            sample *d = push(&t4);
            *d = v->s[i];
            d->hw = t4hw;
            gs_plan_make(t4hw, &d->op, &d->e, NULL, &d->plan);
        }
    size_t n = (size_t)(v->n > 0 ? v->n : 1), n4 = (size_t)(t4.n > 0 ? t4.n : 1);
    double *base = malloc(sizeof(double) * n), *base4 = malloc(sizeof(double) * n4),
           *x = malloc(sizeof(double) * n4), *w = malloc(sizeof(double) * 2 * n4);
    predict(v, &all);
    predict(&t4, &all);
    for (int i = 0; i < v->n; i++) base[i] = v->s[i].pred_ms;
    for (int i = 0, j = 0; i < t4.n; i++) {
        base4[i] = t4.s[i].pred_ms;
        while (v->s[j].id != t4.s[i].id) j++;
        x[i] = base[j];
    }
    printf("\nconstants: refitted on all rows (objective %.4f) and per fold; rise: the objective's smallest rise "
           "for x1.25 or /1.25;\nsd of ln(pred change) for x1.25 within each set (t4: the sweep's configurations "
           "priced on the t4 profile)\n",
           o_all);
    printf("%-19s %7s %7s %15s %7s %7s %7s %7s %7s %7s %7s\n", "constant", "start", "all", "folds", "rise", "xgemm",
           "F1", "F3", "F5", "suite", "t4");
    for (int k = 0; k < NPARAMS; k++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int f = 0; f < c->folds; f++) {
            lo = fmin(lo, *pfield((gs_model_params *)&fold_mp[f], k));
            hi = fmax(hi, *pfield((gs_model_params *)&fold_mp[f], k));
        }
        gs_model_params up = all, dn = all;
        *pfield(&up, k) *= 1.25;
        *pfield(&dn, k) /= 1.25;
        metrics m[NSETS];
        evaluate(v, &dn, m);
        double o_dn = objective(m);
        evaluate(v, &up, m);
        double rise = fmin(objective(m), o_dn) - o_all, r[NSETS + 1];
        reach(v, &t4, base, base4, &up, r);
        char folds[32];
        if (c->free[k]) snprintf(folds, sizeof folds, "%.3g..%.3g", lo, hi);
        else snprintf(folds, sizeof folds, "(fixed)");
        printf("%-19s %7.3g %7.3g %15s %7.4f", params[k].name, *pfield(&start, k), *pfield(&all, k), folds, rise);
        for (int q = 0; q <= NSETS; q++) printf(" %7.4f", r[q]);
        printf("\n");
    }
    printf("the model's own rank correlation between its rtx3090 and t4 prices of the sweep: %.3f\n",
           t4.n >= 3 ? gsl_stats_spearman(x, 1, base4, 1, (size_t)t4.n, w) : NAN);
    free(base);
    free(base4);
    free(x);
    free(w);
    free(t4.s);
}

int main(int argc, char **argv) {
    gsl_set_error_handler_off();
    const char *xgemm = NULL, *fid = NULL, *suite = NULL, *scatter = NULL;
    bool fit = false, holdout = false;
    const char *dump = NULL;
    holdout_cfg hc = {.folds = 5, .seed = 22, .mid_start = true};
    for (int k = 0; k < NPARAMS; k++) hc.free[k] = true;
    gs_model_params mp;
    gs_model_params_default(&mp);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--xgemm") && i + 1 < argc) xgemm = argv[++i];
        else if (!strcmp(argv[i], "--fidelity") && i + 1 < argc) fid = argv[++i];
        else if (!strcmp(argv[i], "--suite") && i + 1 < argc) suite = argv[++i];
        else if (!strcmp(argv[i], "--scatter") && i + 1 < argc) scatter = argv[++i];
        else if (!strcmp(argv[i], "--fit")) fit = true;
        else if (!strcmp(argv[i], "--holdout")) holdout = true;
        else if (!strcmp(argv[i], "--dump-split") && i + 1 < argc) dump = argv[++i];
        else if (!strcmp(argv[i], "--folds") && i + 1 < argc) {
            char *end;
            long f = strtol(argv[++i], &end, 10);
            if (*end || f < 2 || f > 50) {
                fprintf(stderr, "calibrate: --folds wants a whole number from 2 to 50, not '%s'\n", argv[i]);
                return 2;
            }
            hc.folds = (int)f;
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            char *end;
            unsigned long long sd = strtoull(argv[++i], &end, 10);
            if (*end || !*argv[i] || argv[i][0] == '-') {
                fprintf(stderr, "calibrate: --seed wants a whole number, not '%s'\n", argv[i]);
                return 2;
            }
            hc.seed = sd;
        } else if (!strcmp(argv[i], "--start") && i + 1 < argc) {
            i++;
            if (!strcmp(argv[i], "mid")) hc.mid_start = true;
            else if (!strcmp(argv[i], "given")) hc.mid_start = false;
            else {
                fprintf(stderr, "calibrate: --start is 'mid' or 'given', not '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--fix") && i + 1 < argc) {
            int k = param_index(argv[++i]);
            if (k < 0) return 2;
            hc.free[k] = false;
        }
        else if (!strcmp(argv[i], "--param") && i + 1 < argc) {
            char name[64];
            double val;
            if (sscanf(argv[++i], "%63[^=]=%lf", name, &val) != 2) goto usage;
            int k = param_index(name);
            if (k < 0) return 2;
            *pfield(&mp, k) = val;
        } else goto usage;
    }
    if (!xgemm && !fid && !suite) goto usage;
    if (holdout && dump && !(hc.dump = fopen(dump, "w"))) {
        perror(dump);
        return 2;
    }
    gs_ctx *ctx = gs_ctx_create();
    const gs_hw *rtx = gs_hw_find_builtin("rtx3090"), *h100 = gs_hw_find_builtin("h100");
    samples v = {0};
    if (xgemm && load_xgemm(ctx, xgemm, rtx, &v) < 0) return 2;
    if (fid && load_rows(ctx, fid, h100, &v, false) < 0) return 2;
    if (suite && load_rows(ctx, suite, h100, &v, true) < 0) return 2;
    metrics m[NSETS];
    evaluate(&v, &mp, m);
    printf("calibration of the analytic estimate against measured kernels (docs/MODEL.md)\n");
    report(m);
    if (fit) {
        double best = fit_params(&v, &mp, NULL);
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
    if (holdout) {
        gs_model_params fold_mp[50];
        holdout_kfold(&v, &hc, &mp, fold_mp);
        holdout_cross(&v, &hc, &mp);
        holdout_constants(&v, &hc, &mp, fold_mp);
        if (hc.dump) fclose(hc.dump);
    }
    free(v.s);
    gs_ctx_destroy(ctx);
    return 0;
usage:
    fprintf(stderr, "usage: calibrate [--xgemm CSV] [--fidelity CSV] [--suite CSV] [--fit] [--param name=value]... "
                    "[--scatter FILE]\n"
                    "                 [--holdout [--folds K] [--seed N] [--start mid|given] [--fix name]... "
                    "[--dump-split FILE]]\n");
    return 2;
}
