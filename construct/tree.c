/* tree.c — the tree-based (Roller-style) baseline.
 *
 * Roller (OSDI'22) builds a program top-down, one memory level at a time. At
 * each level it starts from the smallest hardware-aligned tile and enlarges
 * it greedily along the axis with the best data-reuse score, the traffic it
 * saves per element of footprint it adds, until the level's capacity is
 * exhausted. The tiles met on the way are the candidates, and a model ranks
 * them. There is no way back (no invTile) and no vthread: it is a tree walk,
 * which is what the Gensor paper contrasts with its graph.
 *
 * Alignment here: tiles are powers of two; an axis that is the innermost
 * dim of any tensor starts at 8 elements (a 32-byte sector of fp32) when the
 * extent allows, and a block keeps at least one warp of threads when it can.
 */
#include "construct/construct.h"

#include <math.h>
#include <string.h>

/* Reuse score of growing box along axis d at a level: traffic saved per unit
 * of footprint added, (Q(T) - Q(T')) / (F(T') - F(T)). */
static double reuse_score(const gs_op *op, const gs_etir *e, const gs_etir *g, int level) {
    int64_t b0[GS_MAX_AXES], b1[GS_MAX_AXES];
    gs_etir_box(op, e, level, b0);
    gs_etir_box(op, g, level, b1);
    double dq = gs_traffic(op, b0) - gs_traffic(op, b1);
    double df = gs_footprint_total(op, b1) - gs_footprint_total(op, b0);
    if (df <= 0) return dq > 0 ? INFINITY : 0;
    return dq / df;
}

/* Grow level 1 greedily from the entry state, collecting every step. */
static int grow_threads(const gs_hw *hw, const gs_op *op, gs_etir e, gs_etir *out, int n, int cap) {
    for (;;) {
        gs_etir done = e;
        done.level = 0;
        if (n < cap && gs_hw_check(hw, op, &done)) out[n++] = done;
        double best = 0;
        gs_etir next = e;
        bool found = false;
        for (int d = 0; d < op->naxes; d++) {
            if (op->axes[d].kind != GS_AXIS_SPATIAL || e.tile[d].thread > e.tile[d].block / 2) continue;
            gs_etir g = e;
            g.tile[d].thread *= 2;
            /* keep at least a warp of threads when the block tile allows */
            if (gs_etir_threads(op, &g) < hw->warp_size && gs_etir_threads(op, &e) >= hw->warp_size) continue;
            gs_etir gd = g;
            gd.level = 0;
            if (!gs_hw_check(hw, op, &gd)) continue;
            double sc = reuse_score(op, &e, &g, 1);
            if (!found || sc > best) {
                best = sc;
                next = g;
                found = true;
            }
        }
        if (!found) return n;
        e = next;
    }
}

int gs_tree_candidates(const gs_hw *hw, const gs_op *op, gs_etir *out, int cap) {
    gs_etir e;
    gs_etir_init(op, &e);
    /* align every axis that is the innermost (contiguous) dim of some tensor
     * to a 32-byte sector: 8 fp32 elements */
    for (int t = 0; t <= op->ninputs; t++) {
        const gs_tensor *ts = &op->tensors[t];
        for (int a = 0; a < op->naxes; a++) {
            if (!ts->idx[ts->ndim - 1].coeff[a]) continue;
            int32_t mx = gs_etir_max_tile(op, a);
            e.tile[a].block = mx < 8 ? mx : 8;
        }
    }
    /* level 2: greedy growth by reuse score, every step a candidate root */
    gs_etir roots[256];
    int nroots = 0;
    for (;;) {
        if (nroots < 256 && gs_hw_check(hw, op, &e)) roots[nroots++] = e;
        double best = 0;
        gs_etir next = e;
        bool found = false;
        for (int d = 0; d < op->naxes; d++) {
            gs_action a = {GS_ACT_TILE, d, 0};
            gs_etir g;
            if (!gs_etir_apply(op, &e, a, hw->max_threads_per_block, &g) || !gs_hw_check(hw, op, &g)) continue;
            double sc = reuse_score(op, &e, &g, 2);
            if (!found || sc > best) {
                best = sc;
                next = g;
                found = true;
            }
        }
        if (!found) break;
        e = next;
    }
    /* level 1 under each root: descend and grow the register tile */
    int n = 0;
    for (int i = 0; i < nroots && n < cap; i++) {
        gs_etir l1;
        gs_action c = {GS_ACT_CACHE, -1, 0};
        int lim = hw->max_threads_per_block < GS_COMPLETE_THREADS ? hw->max_threads_per_block : GS_COMPLETE_THREADS;
        if (!gs_etir_apply(op, &roots[i], c, lim, &l1)) continue;
        n = grow_threads(hw, op, l1, out, n, cap);
    }
    return n;
}
