/* mma.c — the tensor-core instruction table (ir/mma.h) and the legality of
 * its rows for an operator and a state. The layouts are the PTX ISA's
 * fragment figures for mma.m16n8k16 (.f16, .bf16), mma.m16n8k8 (.tf32, .f16,
 * .bf16) and ldmatrix (whose 16-byte rows serve 32-bit tf32 words as they serve
 * pairs of halves); tests/test_mma.c holds a second transcription, register by
 * register. */
#include "ir/mma.h"

#include <stddef.h>

/* C/D of every m16n8 shape (f32): c0, c1 at (g, 2t + 0/1); c2, c3 at (g + 8, 2t + 0/1). */
#define GS_MMA_C_M16N8 {4, 4, 1, 0, 0, 2, {0, 0, 8, 8}, {0, 1, 0, 1}}

static const gs_mma_row mma_rows[GS_MMA_COUNT + 1] = {
    [1] = {.name = "m16n8k16.f16", .ptx = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", .min_arch = 80,
           .m = 16, .n = 8, .k = 16, .dtype_in = GS_DTYPE_F16, .math = GS_MATH_F32, .per_reg = 2,
           /* a0..a3, two halves each: rows g / g+8, k 2t.. / 2t+8.. */
           .a = {4, 8, 1, 0, 0, 2, {0, 0, 8, 8, 0, 0, 8, 8}, {0, 1, 0, 1, 8, 9, 8, 9}},
           /* b0, b1: k 2t.. / 2t+8.., column g */
           .b = {2, 4, 0, 2, 1, 0, {0, 1, 8, 9}, {0, 0, 0, 0}},
           .c = GS_MMA_C_M16N8, .ldsm = 1,
           .ldsm_a = {{0, 0}, {8, 0}, {0, 8}, {8, 8}}, .ldsm_b = {{0, 0}, {8, 0}}},
    [2] = {.name = "m16n8k16.bf16", .ptx = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", .min_arch = 80,
           .m = 16, .n = 8, .k = 16, .dtype_in = GS_DTYPE_BF16, .math = GS_MATH_F32, .per_reg = 2,
           .a = {4, 8, 1, 0, 0, 2, {0, 0, 8, 8, 0, 0, 8, 8}, {0, 1, 0, 1, 8, 9, 8, 9}},
           .b = {2, 4, 0, 2, 1, 0, {0, 1, 8, 9}, {0, 0, 0, 0}},
           .c = GS_MMA_C_M16N8, .ldsm = 1,
           .ldsm_a = {{0, 0}, {8, 0}, {0, 8}, {8, 8}}, .ldsm_b = {{0, 0}, {8, 0}}},
    [3] = {.name = "m16n8k8.tf32", .ptx = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", .min_arch = 80,
           .m = 16, .n = 8, .k = 8, .dtype_in = GS_DTYPE_F32, .math = GS_MATH_TF32, .per_reg = 1,
           /* a0..a3: rows g / g+8, k t / t+4 */
           .a = {4, 4, 1, 0, 0, 1, {0, 8, 0, 8}, {0, 0, 4, 4}},
           /* b0, b1: k t / t+4, column g */
           .b = {2, 2, 0, 1, 1, 0, {0, 4}, {0, 0}},
           .c = GS_MMA_C_M16N8,
           /* ldmatrix of 32-bit words, 4 elements a row (no .trans): A's
            * matrices at (m, k) (0, 0), (8, 0), (0, 4), (8, 4); B's at (k, n)
            * (0, 0), (4, 0), its rows n rows of k */
           .ldsm = 1, .ldsm_a = {{0, 0}, {8, 0}, {0, 4}, {8, 4}}, .ldsm_b = {{0, 0}, {4, 0}}},
    [4] = {.name = "m16n8k8.f16", .ptx = "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", .min_arch = 75,
           .m = 16, .n = 8, .k = 8, .dtype_in = GS_DTYPE_F16, .math = GS_MATH_F32, .per_reg = 2,
           .a = {2, 4, 1, 0, 0, 2, {0, 0, 8, 8}, {0, 1, 0, 1}},
           .b = {1, 2, 0, 2, 1, 0, {0, 1}, {0, 0}},
           .c = GS_MMA_C_M16N8, .ldsm = 1,
           .ldsm_a = {{0, 0}, {8, 0}}, .ldsm_b = {{0, 0}}},
    /* The PTX ISA gives m16n8k8 one figure for .f16 and .bf16 (row 4's
     * layout), but bf16 is one of the alternate types that came with sm_80,
     * where the f16 shape dates from sm_75. */
    [5] = {.name = "m16n8k8.bf16", .ptx = "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", .min_arch = 80,
           .m = 16, .n = 8, .k = 8, .dtype_in = GS_DTYPE_BF16, .math = GS_MATH_F32, .per_reg = 2,
           .a = {2, 4, 1, 0, 0, 2, {0, 0, 8, 8}, {0, 1, 0, 1}},
           .b = {1, 2, 0, 2, 1, 0, {0, 1}, {0, 0}},
           .c = GS_MMA_C_M16N8, .ldsm = 1,
           .ldsm_a = {{0, 0}, {8, 0}}, .ldsm_b = {{0, 0}}},
};

int gs_mma_count(void) { return GS_MMA_COUNT; }

const gs_mma_row *gs_mma_get(int idx) { return idx >= 1 && idx <= GS_MMA_COUNT ? &mma_rows[idx] : NULL; }

int gs_mma_elem_bytes(const gs_mma_row *r) { return 4 / r->per_reg; }

int gs_mma_ldsm_row_elems(const gs_mma_row *r) { return 16 / gs_mma_elem_bytes(r); }

bool gs_mma_ldsm_trans(const gs_mma_row *r) { return r->ldsm && gs_mma_elem_bytes(r) == 2; }

void gs_mma_elem(const gs_mma_frag *f, int lane, int i, int *row, int *col) {
    const int g = lane >> 2, t = lane & 3;
    *row = f->rg * g + f->rt * t + f->row_off[i];
    *col = f->cg * g + f->ct * t + f->col_off[i];
}

int gs_mma_elem_k(const gs_mma_frag *f, int t, int i) { return t == 0 ? f->col_off[i] : f->row_off[i]; }

int gs_mma_distinct_k(const gs_mma_frag *f, int t) {
    int dk = 0;
    for (int i = 0; i < f->elems; i++) {
        bool seen = false;
        for (int q = 0; q < i && !seen; q++) seen = gs_mma_elem_k(f, t, q) == gs_mma_elem_k(f, t, i);
        dk += !seen;
    }
    return dk;
}

static bool is_spatial(const gs_op *op, int a) { return op->axes[a].kind == GS_AXIS_SPATIAL; }

bool gs_mma_roles(const gs_op *op, int8_t *role) {
    bool any[GS_MMA_ROLE_BATCH + 1] = {0};
    for (int a = 0; a < GS_MAX_AXES; a++) role[a] = GS_MMA_ROLE_NONE;
    if (op->ninputs != 2 || op->combine != GS_COMBINE_MAC) return false;
    const gs_tensor *A = &op->tensors[0], *B = &op->tensors[1], *C = gs_op_out(op);
    for (int a = 0; a < op->naxes; a++) {
        bool ua = gs_tensor_uses_axis(A, a), ub = gs_tensor_uses_axis(B, a), uc = gs_tensor_uses_axis(C, a);
        if (!is_spatial(op, a)) role[a] = ua && ub ? GS_MMA_ROLE_K : GS_MMA_ROLE_NONE;
        else if (ua && !ub && uc) role[a] = GS_MMA_ROLE_M;
        else if (ub && !ua && uc) role[a] = GS_MMA_ROLE_N;
        else if (ua && ub && uc) role[a] = GS_MMA_ROLE_BATCH;
        if (role[a] == GS_MMA_ROLE_NONE) return false;
        any[role[a]] = true;
    }
    return any[GS_MMA_ROLE_M] && any[GS_MMA_ROLE_N] && any[GS_MMA_ROLE_K];
}

bool gs_mma_axes(const gs_op *op, int *m, int *n, int *k) {
    int8_t role[GS_MAX_AXES];
    int *slot[GS_MMA_ROLE_BATCH + 1] = {NULL, m, n, k, NULL};
    *m = *n = *k = -1;
    if (!gs_mma_roles(op, role)) return false;
    for (int a = 0; a < op->naxes; a++) {
        int *s = slot[role[a]];
        if (!s) continue;
        if (*s >= 0) return false;
        *s = a;
    }
    return true;
}

bool gs_mma_type_ok(const gs_op *op, int idx) {
    const gs_mma_row *r = gs_mma_get(idx);
    return r && op->dtype_in == r->dtype_in && op->math == r->math;
}

bool gs_mma_arch_ok(int idx, int arch) {
    const gs_mma_row *r = gs_mma_get(idx);
    return r && arch >= r->min_arch && (r->max_arch == 0 || arch <= r->max_arch);
}

bool gs_mma_state_ok(const gs_op *op, const gs_etir *e, int idx) {
    if (idx == 0) return true;
    int8_t role[GS_MAX_AXES];
    if (!gs_mma_type_ok(op, idx) || !gs_mma_roles(op, role)) return false;
    const gs_mma_row *r = gs_mma_get(idx);
    int64_t tm = 1, bm = 1, tn = 1, bn = 1, bk = 1;
    for (int a = 0; a < op->naxes; a++) {
        const gs_tile *t = &e->tile[a];
        if (role[a] == GS_MMA_ROLE_K) bk *= t->block;
        else if (role[a] == GS_MMA_ROLE_M) tm *= t->thread, bm *= t->block;
        else if (role[a] == GS_MMA_ROLE_N) tn *= t->thread, bn *= t->block;
        else if (t->thread != 1) return false; /* a batch */
        if (role[a] != GS_MMA_ROLE_K && e->V[a] != 1) return false;
    }
    if (tm % 2 || tn % 2 || (bm / tm) % 8 || (bn / tn) % 4) return false;
    if (bk % r->k || e->lanes_log2) return false;
    return e->staged[0] && e->staged[1];
}

int gs_mma_pick_dividing(int arch, const gs_op *op, int64_t k_tile) {
    int best = 0;
    for (int i = 1; i <= GS_MMA_COUNT; i++)
        if (gs_mma_type_ok(op, i) && gs_mma_arch_ok(i, arch) && (!k_tile || k_tile % mma_rows[i].k == 0) &&
            (!best || mma_rows[i].k > mma_rows[best].k))
            best = i;
    return best;
}

int gs_mma_pick(int arch, const gs_op *op) { return gs_mma_pick_dividing(arch, op, 0); }
