/* mma.h — the tensor-core instruction table (issue 20): one row per warp-wide
 * mma.sync shape and input type, with its per-lane fragment layouts and its
 * ldmatrix blocks as data, written from the PTX ISA's "Matrix fragments for
 * mma.m16n8k*" sections. Facts of the instructions only: no profile. The
 * plan (hwmodel/plan/plan.c) and both printers (kernels/codegen/lower.c)
 * read the rows; tests/test_mma.c checks them against a second transcription.
 *
 * Operands: A is m x k (row = m, col = k), B is k x n (row = k, col = n),
 * C and D are m x n; every row accumulates in f32. A lane l of the warp has
 * g = l >> 2 (its group) and t = l & 3 (its place in the group). Its element
 * i (0 <= i < elems; register i / per_reg, the lower half first) of an
 * operand sits at
 *     row = rg * g + rt * t + row_off[i],   col = cg * g + ct * t + col_off[i]. */
#ifndef GS_MMA_H
#define GS_MMA_H

#include "ir/ir.h"

/* Rows of gs_mma_table: index 1..GS_MMA_COUNT (0 is FFMA, no row). */
#define GS_MMA_COUNT 5
#define GS_MMA_MAX_ELEMS 8 /* elements of one operand per lane */

typedef struct gs_mma_frag {
    int8_t regs;  /* 32-bit registers per lane */
    int8_t elems; /* elements per lane: regs * per_reg (C: regs) */
    int8_t rg, rt, cg, ct;                /* row and col coefficients of g and t */
    int8_t row_off[GS_MMA_MAX_ELEMS];     /* per element */
    int8_t col_off[GS_MMA_MAX_ELEMS];
} gs_mma_frag;

typedef struct gs_mma_row {
    const char *name;    /* "m16n8k16.f16" */
    const char *ptx;     /* the whole opcode: "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" */
    int min_arch;        /* sm_XX from which the shape and type exist (80, or 75 for m16n8k8 f16) */
    int max_arch;        /* the last sm_XX (0: none) */
    int m, n, k;
    uint8_t dtype_in;    /* gs_dtype of A and B: f16, bf16, or f32 with math tf32 */
    uint8_t math;        /* gs_math the operator must have (GS_MATH_TF32 for the tf32 row) */
    int8_t per_reg;      /* input elements per 32-bit register: 2 (16-bit) or 1 (tf32) */
    gs_mma_frag a, b, c; /* C and D share a layout */
    /* ldmatrix: one matrix of 8 rows of 16 bytes per register of A (ldsm_a,
     * .x<a.regs>) and of B (ldsm_b); register j holds matrix j, whose origin
     * in the operand is (row, col) = ldsm_*[j]. Lane l gets word l % 4 of row
     * l / 4 (the .b16 form: halves 2(l % 4), 2(l % 4) + 1), so a 16-byte row
     * holds gs_mma_ldsm_row_elems elements: 8 of 16 bits, 4 of tf32, whose
     * words are whole elements. A register's elements run along k (A's col,
     * B's row): without .trans each row an address names runs along k; with
     * .trans (16-bit elements only: it transposes halves, gs_mma_ldsm_trans)
     * along m (A) or n (B). */
    int8_t ldsm;               /* 1: the operands load with ldmatrix */
    int8_t ldsm_a[4][2], ldsm_b[4][2];
} gs_mma_row;

/* The number of rows, and row idx (1..count; NULL for 0, FFMA, or out of range). */
int gs_mma_count(void);
const gs_mma_row *gs_mma_get(int idx);
/* Bytes of one input element of row r (4 / per_reg: 2, or 4 for tf32), the
 * elements one 16-byte ldmatrix row holds (8, or 4), and whether its
 * ldmatrix may transpose (.trans moves 16-bit elements: 16-bit rows only). */
int gs_mma_elem_bytes(const gs_mma_row *r);
int gs_mma_ldsm_row_elems(const gs_mma_row *r);
bool gs_mma_ldsm_trans(const gs_mma_row *r);
/* Row and col of element i of lane (0..31) in fragment f. */
void gs_mma_elem(const gs_mma_frag *f, int lane, int i, int *row, int *col);
/* The k offset of element i of operand t's fragment (t 0: A, whose k is its
 * col; 1: B, whose k is its row), and the number of distinct ones a lane
 * holds (A of m16n8k16: 4, its rows g and g+8 sharing each). */
int gs_mma_elem_k(const gs_mma_frag *f, int t, int i);
int gs_mma_distinct_k(const gs_mma_frag *f, int t);
/* The role of each axis under mma (implicit GEMM): the reduce axes are k;
 * a spatial axis used by input 0 and the output but not input 1 is one of
 * m's; one used by input 1 and the output but not input 0 one of n's; one
 * used by all three a batch. gemm in every transpose, bgemm, conv2d NCHW and
 * NHWC (m = n, p, q; n = the output channels; k = c, r, s) and the 1x1 conv
 * as a matmul qualify. The flattened m (n, k) index runs over its axes' block
 * tiles with the last axis fastest. */
typedef enum gs_mma_role { GS_MMA_ROLE_NONE = 0, GS_MMA_ROLE_M, GS_MMA_ROLE_N, GS_MMA_ROLE_K, GS_MMA_ROLE_BATCH } gs_mma_role;
/* role[GS_MAX_AXES] of op's axes; false when op is not a two-input
 * multiply-accumulate, an axis has no role, or m, n or k has no axis. */
bool gs_mma_roles(const gs_op *op, int8_t *role);
/* The single m, n and k axes when each role has exactly one (gemm, bgemm,
 * the 1x1 NHWC conv as a matmul); false otherwise. */
bool gs_mma_axes(const gs_op *op, int *m, int *n, int *k);
/* Whether row idx takes op's types: dtype_in and math match the row's, f32
 * accumulation. Says nothing of the arch or the tiles. */
bool gs_mma_type_ok(const gs_op *op, int idx);
/* Whether row idx exists on sm_<arch>. */
bool gs_mma_arch_ok(int idx, int arch);
/* Whether state e of op may use row idx (0: always): the roles and types
 * above, and the tiles. Over the m axes, TM is the product of the thread
 * tiles and BM of the block tiles (n likewise); TM and TN are a lane's share
 * of a warp tile: a warp's lanes form an 8 x 4 grid of threads (m x n), so a
 * warp tile is 8*TM x 4*TN, TM and TN even (whole 16 x 8 instruction tiles);
 * the threads along m (BM/TM) are a multiple of 8 and along n (BN/TN) of 4;
 * no vthreads on m and n; a batch axis' thread tile is 1; the product of the
 * k block tiles is a multiple of the row's k; both inputs staged; no reduce
 * lanes. */
bool gs_mma_state_ok(const gs_op *op, const gs_etir *e, int idx);
/* The row an arch would use for op's types (the widest k it has), or 0. */
int gs_mma_pick(int arch, const gs_op *op);
/* The widest row of op's types on arch whose k divides k_tile (a block's
 * product of reduce tiles; 0: any k, gs_mma_pick), or 0. */
int gs_mma_pick_dividing(int arch, const gs_op *op, int64_t k_tile);

#endif
