/* rerank.c — ptxas-informed ranking: compile candidates with NVRTC and
 * re-estimate them with their real register counts (which change occupancy
 * and reveal spills), then re-sort. Falls back cleanly without NVRTC. */
#include "kernels/service/service.h"

#include <string.h>

gs_status gs_rerank_ptxas(gs_ctx *ctx, const gs_hw *hw, const gs_op *op, int arch, gs_etir *cand, gs_estimate *est,
                          int n, gs_ptxas_stats *stats) {
    return gs_rerank_ptxas_cached(ctx, NULL, hw, op, arch, cand, est, n, stats);
}

gs_status gs_rerank_ptxas_cached(gs_ctx *ctx, gs_kcache *c, const gs_hw *hw, const gs_op *op, int arch, gs_etir *cand,
                                 gs_estimate *est, int n, gs_ptxas_stats *stats) {
    if (!hw || !op || !cand || !est || n < 0) return gs_err(ctx, GS_ERR_INVALID_ARG, "rerank: NULL argument");
    if (!gs_nvrtc_available(ctx)) return GS_ERR_NVRTC_MISSING; /* ctx says why; ranking unchanged */
    gs_ptxas_stats st[64];
    if (n > 64) n = 64;
    for (int i = 0; i < n; i++) {
        gs_kernel_src ks;
        gs_nvrtc_out nv;
        gs_status s = gs_lower_emit(ctx, hw, op, &cand[i], GS_DIALECT_CUDA, arch, &ks);
        if (s != GS_OK) return s;
        s = gs_nvrtc_compile_cached(ctx, c, ks.src, ks.name, arch, false, true, &nv, NULL);
        gs_kernel_src_free(&ks);
        if (s != GS_OK) {
            gs_nvrtc_out_free(&nv);
            return s;
        }
        st[i] = nv.stats;
        gs_nvrtc_out_free(&nv);
        /* spills count as extra registers in the estimate: a spilled word is
         * a register the thread wanted but did not get */
        int regs = st[i].registers + (int)((st[i].spill_store_bytes + 3) / 4);
        gs_estimate_etir(hw, op, &cand[i], regs, &est[i]);
    }
    /* stable insertion sort by the new predictions */
    for (int i = 1; i < n; i++) {
        gs_etir c = cand[i];
        gs_estimate e = est[i];
        gs_ptxas_stats s = st[i];
        int j = i - 1;
        for (; j >= 0 && est[j].time_s > e.time_s; j--) {
            cand[j + 1] = cand[j];
            est[j + 1] = est[j];
            st[j + 1] = st[j];
        }
        cand[j + 1] = c;
        est[j + 1] = e;
        st[j + 1] = s;
    }
    if (stats) memcpy(stats, st, sizeof st[0] * (size_t)n);
    return GS_OK;
}
