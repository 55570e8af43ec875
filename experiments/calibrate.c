/* calibrate.c — check the analytic estimate against measured GEMM sweeps.
 *
 *   calibrate CSV [--hw NAME] [--M m --N n --K k] [--scatter FILE]
 *
 * CSV is a CLBlast Xgemm sweep (Kernel Tuner benchmark-hub format; columns
 * MWG,NWG,KWG,MDIMC,NDIMC,MDIMA,NDIMB,KWI,VWM,VWN,STRM,STRN,SA,SB,time_ms).
 * Rows that share tiles, threads and staging (SA, SB) differ only in load
 * mappings and vector widths, which ETIR does not describe: each such group
 * is represented by its fastest row.
 *
 * CLBlast's Xgemm is column-major: M is the contiguous dimension of A and C,
 * and local id 0 (MDIMC threads) runs along M. In gensor's row-major terms
 * that kernel computes C^T[N,M] = B^T A, i.e. gemm M'=N N'=M with A' = B
 * stored [K,N] (transA=1) and B' = A stored [K,M]; the contiguous,
 * fastest-thread axis is n' = CLBlast's m. Each group therefore maps to
 *   bm=NWG bn=MWG bk=KWG tm=NWG/NDIMC tn=MWG/MDIMC vm=vn=1 sa=SB sb=SA
 * on gemm M=N N=M K transA=1, and the prediction is compared with the
 * measurement:
 *   - Spearman rank correlation over the groups;
 *   - the measured time of the model's top-1, relative to the measured best;
 *   - the best measured time among the model's top-10, relative to the best.
 * Nothing from the data flows back into the product: this only reports.
 */
#include <gsl/gsl_errno.h>
#include <math.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwmodel/hw.h"

typedef struct group {
    int mwg, nwg, kwg, mdimc, ndimc, sa, sb;
    double meas_ms, pred_ms;
    bool fits;
} group;

static int find(group *g, int n, const group *k) {
    for (int i = 0; i < n; i++)
        if (g[i].mwg == k->mwg && g[i].nwg == k->nwg && g[i].kwg == k->kwg && g[i].mdimc == k->mdimc &&
            g[i].ndimc == k->ndimc && g[i].sa == k->sa && g[i].sb == k->sb)
            return i;
    return -1;
}

static int by_pred(const void *a, const void *b) {
    double x = ((const group *)a)->pred_ms, y = ((const group *)b)->pred_ms;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    gsl_set_error_handler_off();
    const char *csv = NULL, *hwname = "rtx3090", *scatter = NULL;
    long M = 4096, N = 4096, K = 4096;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--hw") && i + 1 < argc) hwname = argv[++i];
        else if (!strcmp(argv[i], "--scatter") && i + 1 < argc) scatter = argv[++i];
        else if (!strcmp(argv[i], "--M") && i + 1 < argc) M = atol(argv[++i]);
        else if (!strcmp(argv[i], "--N") && i + 1 < argc) N = atol(argv[++i]);
        else if (!strcmp(argv[i], "--K") && i + 1 < argc) K = atol(argv[++i]);
        else if (argv[i][0] != '-' && !csv) csv = argv[i];
        else {
            fprintf(stderr, "usage: calibrate CSV [--hw NAME] [--M m --N n --K k] [--scatter FILE]\n");
            return 2;
        }
    }
    if (!csv) {
        fprintf(stderr, "usage: calibrate CSV [--hw NAME] [--M m --N n --K k] [--scatter FILE]\n");
        return 2;
    }
    gs_ctx *ctx = gs_ctx_create();
    gs_hw *hw = NULL;
    gs_op op;
    if (gs_hw_load(ctx, hwname, &hw) != GS_OK || gs_op_build_gemm(ctx, &op, N, M, K, 1, 0, 1, 0) != GS_OK) {
        fprintf(stderr, "calibrate: %s\n", gs_ctx_errmsg(ctx));
        return 2;
    }
    FILE *f = fopen(csv, "r");
    if (!f) {
        perror(csv);
        return 2;
    }
    int cap = 4096, n = 0, rows = 0, skipped = 0;
    group *g = calloc((size_t)cap, sizeof *g);
    char line[1024];
    if (!fgets(line, sizeof line, f)) return 2; /* header */
    while (fgets(line, sizeof line, f)) {
        group k;
        int mdima, ndimb, kwi, vwm, vwn, strm, strn;
        memset(&k, 0, sizeof k);
        if (sscanf(line, "%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%lf", &k.mwg, &k.nwg, &k.kwg, &k.mdimc, &k.ndimc,
                   &mdima, &ndimb, &kwi, &vwm, &vwn, &strm, &strn, &k.sa, &k.sb, &k.meas_ms) != 15) {
            skipped++;
            continue;
        }
        rows++;
        int i = find(g, n, &k);
        if (i < 0 && n < cap) g[n++] = k;
        else if (i >= 0 && k.meas_ms < g[i].meas_ms) g[i].meas_ms = k.meas_ms;
    }
    fclose(f);
    /* predict every group the model can express */
    int m = 0, nfit = 0;
    double best_meas = 1e300;
    for (int i = 0; i < n; i++) {
        char cfg[256];
        snprintf(cfg, sizeof cfg, "bm=%d,bn=%d,bk=%d,tm=%d,tn=%d,vm=1,vn=1,sa=%d,sb=%d", g[i].nwg, g[i].mwg, g[i].kwg,
                 g[i].nwg / g[i].ndimc, g[i].mwg / g[i].mdimc, g[i].sb, g[i].sa);
        gs_etir e;
        if (gs_etir_parse_config(ctx, &op, cfg, &e) != GS_OK) continue;
        gs_estimate est;
        gs_estimate_etir(hw, &op, &e, 0, &est);
        g[m] = g[i];
        g[m].pred_ms = est.time_s * 1e3;
        g[m].fits = gs_hw_check(hw, &op, &e);
        nfit += g[m].fits;
        if (g[m].meas_ms < best_meas) best_meas = g[m].meas_ms;
        m++;
    }
    double *x = malloc(sizeof(double) * (size_t)m), *y = malloc(sizeof(double) * (size_t)m),
           *work = malloc(sizeof(double) * 2 * (size_t)m);
    for (int i = 0; i < m; i++) {
        x[i] = g[i].pred_ms;
        y[i] = g[i].meas_ms;
    }
    double rho = gsl_stats_spearman(x, 1, y, 1, (size_t)m, work);
    double pearson_log = 0;
    {
        double *lx = malloc(sizeof(double) * (size_t)m), *ly = malloc(sizeof(double) * (size_t)m);
        for (int i = 0; i < m; i++) {
            lx[i] = log(x[i]);
            ly[i] = log(y[i]);
        }
        pearson_log = gsl_stats_correlation(lx, 1, ly, 1, (size_t)m);
        free(lx);
        free(ly);
    }
    if (scatter) {
        FILE *s = fopen(scatter, "w");
        if (s) {
            fprintf(s, "# predicted_ms measured_ms bm bn bk threads sa sb\n");
            for (int i = 0; i < m; i++)
                fprintf(s, "%.5f %.5f %d %d %d %d %d %d\n", g[i].pred_ms, g[i].meas_ms, g[i].mwg, g[i].nwg, g[i].kwg,
                        g[i].mdimc * g[i].ndimc, g[i].sa, g[i].sb);
            fclose(s);
        }
    }
    qsort(g, (size_t)m, sizeof *g, by_pred);
    double top10 = 1e300;
    for (int i = 0; i < m && i < 10; i++)
        if (g[i].meas_ms < top10) top10 = g[i].meas_ms;
    printf("calibration: %s, gemm %ldx%ldx%ld, profile %s\n", csv, M, N, K, hw->name);
    printf("rows %d (skipped %d), tile groups %d, expressible %d (%d within gensor's own limits)\n", rows, skipped, n, m,
           nfit);
    printf("spearman rho %.4f   pearson(log) %.4f\n", rho, pearson_log);
    printf("measured best %.4f ms\n", best_meas);
    printf("model top-1: bm=%d bn=%d bk=%d threads=%d sa=%d sb=%d predicted %.4f ms measured %.4f ms = %.3fx best\n",
           g[0].mwg, g[0].nwg, g[0].kwg, g[0].mdimc * g[0].ndimc, g[0].sa, g[0].sb, g[0].pred_ms, g[0].meas_ms,
           g[0].meas_ms / best_meas);
    printf("best measured in model top-10: %.4f ms = %.3fx best\n", top10, top10 / best_meas);
    free(x);
    free(y);
    free(work);
    free(g);
    gs_hw_destroy(hw);
    gs_ctx_destroy(ctx);
    return 0;
}
