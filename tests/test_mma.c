/* test_mma.c — the tensor-core instruction table (ir/mma.h), the mma knob and
 * the plan's mma fields. The table is checked against a second transcription
 * of the PTX ISA's fragment figures written register by register (a case per
 * register, not coefficients), so a swapped register or a wrong offset in
 * either fails; the rows' ldmatrix blocks against ldmatrix's own
 * distribution (lane l gets 32-bit word l%4 of row l/4 of each matrix of 8
 * rows of 16 bytes: halves 2(l%4), 2(l%4)+1 of 16-bit elements, element
 * l%4 of tf32's); each layout covers its operand exactly once. */
#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* ---- the second transcription ---------------------------------------------------
 * Per operand: (row, col) of register reg, half h (0 for 32-bit elements) of
 * lane l, from the ISA's figures; A is m x k, B is k x n, C is m x n. */
typedef void (*xfrag)(int l, int reg, int h, int *row, int *col);

/* m16n8k16 .f16/.bf16, A: a0 {g, 2t}, a1 {g+8, 2t}, a2 {g, 2t+8}, a3 {g+8, 2t+8} */
static void k16_a(int l, int reg, int h, int *row, int *col) {
    const int g = l / 4, t = l % 4;
    switch (reg) {
    case 0: *row = g; *col = 2 * t + h; break;
    case 1: *row = g + 8; *col = 2 * t + h; break;
    case 2: *row = g; *col = 2 * t + 8 + h; break;
    default: *row = g + 8; *col = 2 * t + 8 + h; break;
    }
}
/* B: b0 {k 2t, n g}, b1 {k 2t+8, n g} */
static void k16_b(int l, int reg, int h, int *row, int *col) {
    *row = (l % 4) * 2 + h + (reg == 1 ? 8 : 0);
    *col = l / 4;
}
/* C/D of m16n8 (f32): c0, c1 {g, 2t, 2t+1}; c2, c3 {g+8, ...}; one element per register */
static void m16n8_c(int l, int reg, int h, int *row, int *col) {
    (void)h;
    *row = l / 4 + (reg >= 2 ? 8 : 0);
    *col = (l % 4) * 2 + (reg & 1);
}
/* m16n8k8 .tf32, A: a0 {g, t}, a1 {g+8, t}, a2 {g, t+4}, a3 {g+8, t+4} */
static void tf32_a(int l, int reg, int h, int *row, int *col) {
    (void)h;
    static const int dr[4] = {0, 8, 0, 8}, dc[4] = {0, 0, 4, 4};
    *row = l / 4 + dr[reg];
    *col = l % 4 + dc[reg];
}
/* B: b0 {k t, n g}, b1 {k t+4, n g} */
static void tf32_b(int l, int reg, int h, int *row, int *col) {
    (void)h;
    *row = l % 4 + 4 * reg;
    *col = l / 4;
}
/* m16n8k8 .f16, A: a0 {g, 2t}, a1 {g+8, 2t} */
static void k8_a(int l, int reg, int h, int *row, int *col) {
    *row = l / 4 + 8 * reg;
    *col = (l % 4) * 2 + h;
}
/* B: b0 {k 2t, n g} */
static void k8_b(int l, int reg, int h, int *row, int *col) {
    (void)reg;
    *row = (l % 4) * 2 + h;
    *col = l / 4;
}
/* m16n8k8 .bf16, the ISA's figures for .f16 / .bf16 read once more for the
 * second type: A two .b32 registers, a0 = {a0, a1} at row g, a1 = {a2, a3}
 * at row g + 8, both at cols 2t, 2t + 1; B one register, b0 = {b0, b1} at
 * rows (k) 2t, 2t + 1 of column g. */
static void k8bf_a(int l, int reg, int h, int *row, int *col) {
    const int g = l >> 2, t = l & 3;
    *row = reg == 0 ? g : g + 8;
    *col = t * 2 + h;
}
static void k8bf_b(int l, int reg, int h, int *row, int *col) {
    cr_assert_eq(reg, 0, "m16n8k8 .bf16 B has one register");
    *row = (l & 3) * 2 + h;
    *col = l >> 2;
}

/* ldsm_row: the elements one 16-byte ldmatrix row holds (8 halves, 4 tf32
 * words); trans: whether ldmatrix may transpose the row's operands (.trans
 * moves 16-bit elements, so not tf32's) */
typedef struct xrow {
    const char *name, *ptx;
    int m, n, k, min_arch;
    int a_regs, b_regs, per_reg;
    xfrag a, b, c;
    int ldsm_row, trans;
} xrow;
static const xrow xrows[] = {
    {"m16n8k16.f16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, 8, 16, 80, 4, 2, 2, k16_a, k16_b, m16n8_c,
     8, 1},
    {"m16n8k16.bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16, 8, 16, 80, 4, 2, 2, k16_a, k16_b,
     m16n8_c, 8, 1},
    {"m16n8k8.tf32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 16, 8, 8, 80, 4, 2, 1, tf32_a, tf32_b, m16n8_c,
     4, 0},
    {"m16n8k8.f16", "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", 16, 8, 8, 75, 2, 1, 2, k8_a, k8_b, m16n8_c, 8, 1},
    {"m16n8k8.bf16", "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", 16, 8, 8, 80, 2, 1, 2, k8bf_a, k8bf_b,
     m16n8_c, 8, 1},
};

static const xrow *xfind(const char *name) {
    for (size_t i = 0; i < sizeof xrows / sizeof xrows[0]; i++)
        if (!strcmp(xrows[i].name, name)) return &xrows[i];
    return NULL;
}

/* Every element of every lane of fragment f equals the transcription's. */
static void expect_frag(const char *row, const char *what, const gs_mma_frag *f, int per_reg, xfrag x) {
    for (int l = 0; l < 32; l++)
        for (int i = 0; i < f->elems; i++) {
            int r1, c1, r2, c2;
            gs_mma_elem(f, l, i, &r1, &c1);
            x(l, i / per_reg, i % per_reg, &r2, &c2);
            cr_assert(r1 == r2 && c1 == c2, "%s %s: lane %d register %d half %d: table (%d, %d), ISA (%d, %d)", row, what,
                      l, i / per_reg, i % per_reg, r1, c1, r2, c2);
        }
}

/* The 32 lanes' elements cover the rows x cols operand exactly once. */
static void expect_cover(const char *row, const char *what, const gs_mma_frag *f, int rows, int cols) {
    int seen[16 * 16] = {0};
    cr_assert_eq(f->elems * 32, rows * cols, "%s %s: %d elements per lane for %d x %d", row, what, f->elems, rows, cols);
    for (int l = 0; l < 32; l++)
        for (int i = 0; i < f->elems; i++) {
            int r, c;
            gs_mma_elem(f, l, i, &r, &c);
            cr_assert(r >= 0 && r < rows && c >= 0 && c < cols, "%s %s: lane %d element %d at (%d, %d)", row, what, l, i,
                      r, c);
            cr_assert_eq(seen[r * cols + c]++, 0, "%s %s: (%d, %d) held twice", row, what, r, c);
        }
}

Test(mma, table_matches_the_isa_transcription) {
    cr_assert_eq(gs_mma_count(), (int)(sizeof xrows / sizeof xrows[0]));
    cr_assert_null(gs_mma_get(0));
    cr_assert_null(gs_mma_get(gs_mma_count() + 1));
    for (int i = 1; i <= gs_mma_count(); i++) {
        const gs_mma_row *r = gs_mma_get(i);
        const xrow *x = xfind(r->name);
        cr_assert_not_null(x, "row %d (%s) has no transcription", i, r->name);
        cr_assert_str_eq(r->ptx, x->ptx);
        cr_assert(r->m == x->m && r->n == x->n && r->k == x->k, "%s: shape", r->name);
        cr_assert_eq(r->min_arch, x->min_arch, "%s: arch", r->name);
        cr_assert(r->a.regs == x->a_regs && r->b.regs == x->b_regs && r->c.regs == 4, "%s: registers", r->name);
        cr_assert_eq(r->per_reg, x->per_reg, "%s", r->name);
        cr_assert(r->a.elems == r->a.regs * r->per_reg && r->b.elems == r->b.regs * r->per_reg, "%s", r->name);
        expect_frag(r->name, "A", &r->a, r->per_reg, x->a);
        expect_frag(r->name, "B", &r->b, r->per_reg, x->b);
        expect_frag(r->name, "C", &r->c, 1, x->c);
        expect_cover(r->name, "A", &r->a, r->m, r->k);
        expect_cover(r->name, "B", &r->b, r->k, r->n);
        expect_cover(r->name, "C", &r->c, r->m, r->n);
        cr_assert(r->ldsm, "%s: every row loads with ldmatrix", r->name);
        cr_assert_eq(gs_mma_ldsm_row_elems(r), x->ldsm_row, "%s: elements a 16-byte row", r->name);
        cr_assert_eq(gs_mma_ldsm_trans(r), x->trans, "%s: .trans", r->name);
        cr_assert_eq(gs_mma_elem_bytes(r) * x->ldsm_row, 16, "%s: element bytes", r->name);
    }
}

/* ldmatrix gives lane l, from each matrix of 8 rows of 16 bytes, the 32-bit
 * word l%4 of row l/4 of the rows as addressed (without .trans): the
 * per_reg elements per_reg(l%4) .. per_reg(l%4) + per_reg - 1 of that row (a
 * pair of halves, or one tf32 element); a row's ldmatrix block j must put
 * them where the row's layout puts register j. Lane by lane, for every row. */
Test(mma, ldmatrix_blocks_deliver_the_layout) {
    int rows = 0;
    for (int i = 1; i <= gs_mma_count(); i++) {
        const gs_mma_row *r = gs_mma_get(i);
        if (!r->ldsm) continue;
        rows++;
        const int pr = r->per_reg;
        cr_assert_eq(pr * 4, gs_mma_ldsm_row_elems(r), "%s: a row is 4 words", r->name);
        for (int l = 0; l < 32; l++)
            for (int j = 0; j < r->a.regs + r->b.regs; j++) {
                const bool isa = j < r->a.regs;
                const int reg = isa ? j : j - r->a.regs;
                const gs_mma_frag *f = isa ? &r->a : &r->b;
                const int8_t *org = isa ? r->ldsm_a[reg] : r->ldsm_b[reg];
                for (int h = 0; h < pr; h++) {
                    int row, col;
                    gs_mma_elem(f, l, reg * pr + h, &row, &col);
                    /* A: addressed rows are m rows, the word's elements run along k (col);
                     * B: addressed rows are n rows (k contiguous), the word's elements run along k (row) */
                    int er = isa ? org[0] + l / 4 : org[0] + pr * (l % 4) + h;
                    int ec = isa ? org[1] + pr * (l % 4) + h : org[1] + l / 4;
                    cr_assert(row == er && col == ec, "%s %s register %d lane %d element %d: layout (%d, %d), ldmatrix (%d, %d)",
                              r->name, isa ? "A" : "B", reg, l, h, row, col, er, ec);
                }
            }
    }
    cr_assert_eq(rows, gs_mma_count(), "rows with ldmatrix blocks");
}

/* ---- the knob ----------------------------------------------------------------- */
static gs_op parse(gs_ctx *ctx, const char *spec) {
    gs_op op;
    cr_assert_eq(gs_op_parse_into(ctx, spec, &op), GS_OK, "%s: %s", spec, gs_ctx_errmsg(ctx));
    return op;
}

static gs_status cfg(gs_ctx *ctx, const gs_op *op, const char *c, gs_etir *e) {
    return gs_etir_parse_config(ctx, op, c, e);
}

#define MMA_CFG "bm=64,bn=32,bk=32,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1"

/* spec's operator at config, asserted to pass hw's check, and its plan
 * (with the windowed input's box im2col, gs_im2col_mode), asserted to take
 * the state's row. */
static gs_plan case_plan_box(gs_ctx *ctx, const gs_hw *hw, const char *spec, const char *config, int im2col, gs_op *op,
                             gs_etir *e) {
    *op = parse(ctx, spec);
    cr_assert_eq(cfg(ctx, op, config, e), GS_OK, "%s | %s: %s", spec, config, gs_ctx_errmsg(ctx));
    cr_assert(gs_hw_check(hw, op, e), "%s | %s fails %s's check", spec, config, hw->name);
    gs_plan_opts po = {0};
    po.im2col = (uint8_t)im2col;
    gs_plan p;
    gs_plan_make(hw, op, e, &po, &p);
    cr_assert(p.mma == e->mma);
    return p;
}

static gs_plan case_plan(gs_ctx *ctx, const gs_hw *hw, const char *spec, const char *config, gs_op *op, gs_etir *e) {
    return case_plan_box(ctx, hw, spec, config, GS_IM2COL_AUTO, op, e);
}

Test(mma, knob_config_and_legality) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op h = parse(ctx, "gemm M=100 N=50 K=33 dtype=f16"), f = parse(ctx, "gemm M=100 N=50 K=33");
    gs_op b = parse(ctx, "gemm M=100 N=50 K=33 dtype=bf16 transA=1 transB=1");
    gs_op t = parse(ctx, "gemm M=100 N=50 K=33 math=tf32");
    gs_op bg = parse(ctx, "bgemm B=3 M=40 N=24 K=17 dtype=f16");
    gs_op cv = parse(ctx, "conv2d N=1 C=16 H=8 W=8 K=16 R=3 S=3 pad=1 dtype=f16");
    gs_etir e;
    cr_assert_eq(cfg(ctx, &h, MMA_CFG ",mma=1", &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(e.mma, 1);
    cr_assert(gs_etir_wellformed(&h, &e));
    char buf[256];
    gs_etir_format_config(&h, &e, buf, sizeof buf);
    cr_assert(strstr(buf, ",mma=1"), "%s", buf);
    gs_etir_format(&h, &e, buf, sizeof buf);
    cr_assert(strstr(buf, "mma1"), "%s", buf);
    gs_etir back;
    gs_etir_format_config(&h, &e, buf, sizeof buf);
    cr_assert_eq(cfg(ctx, &h, buf, &back), GS_OK);
    cr_assert_eq(back.mma, 1);
    /* types: f16 takes rows 1 and 4, bf16 rows 2 and 5, tf32 row 3; f32 none */
    cr_assert(gs_mma_state_ok(&h, &e, 1) && gs_mma_state_ok(&h, &e, 4));
    cr_assert(!gs_mma_state_ok(&h, &e, 2) && !gs_mma_state_ok(&h, &e, 3) && !gs_mma_state_ok(&h, &e, 5));
    gs_status st = cfg(ctx, &f, MMA_CFG ",mma=1", &e);
    cr_assert(st != GS_OK || !gs_etir_wellformed(&f, &e), "f32 gemm with the f16 row");
    cr_assert_eq(cfg(ctx, &b, MMA_CFG ",mma=2", &e), GS_OK);
    cr_assert(gs_etir_wellformed(&b, &e), "bf16 transposed gemm, row 2");
    cr_assert(gs_mma_state_ok(&b, &e, 5) && !gs_mma_state_ok(&b, &e, 1) && !gs_mma_state_ok(&b, &e, 4));
    /* a k tile of 8: bf16's k8 row, not its k16 one */
    cr_assert_eq(cfg(ctx, &b, "bm=64,bn=32,bk=8,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=5", &e), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert(gs_etir_wellformed(&b, &e) && !gs_mma_state_ok(&b, &e, 2), "bf16 gemm at bk=8, row 5");
    cr_assert_neq(cfg(ctx, &b, "bm=64,bn=32,bk=8,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=2", &e), GS_OK, "bk=8 on row 2");
    cr_assert_eq(cfg(ctx, &t, MMA_CFG ",mma=3", &e), GS_OK);
    cr_assert(gs_etir_wellformed(&t, &e), "tf32 gemm, row 3");
    cr_assert_eq(cfg(ctx, &bg, "bb=1,bm=64,bn=32,bk=16,tb=1,tm=2,tn=2,vb=1,vm=1,vn=1,sa=1,sb=1,mma=1", &e), GS_OK,
                 "%s", gs_ctx_errmsg(ctx));
    cr_assert(gs_etir_wellformed(&bg, &e), "bgemm");
    /* tiles: odd thread tiles, too few threads along m or n, a k tile off the row's k */
    const char *bad[] = {"bm=64,bn=32,bk=32,tm=1,tn=2,vm=1,vn=1,sa=1,sb=1,mma=1",
                         "bm=32,bn=32,bk=32,tm=8,tn=2,vm=1,vn=1,sa=1,sb=1,mma=1",
                         "bm=64,bn=8,bk=32,tm=2,tn=4,vm=1,vn=1,sa=1,sb=1,mma=1",
                         "bm=64,bn=32,bk=8,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=1",
                         "bm=64,bn=32,bk=32,tm=2,tn=2,vm=2,vn=1,sa=1,sb=1,mma=1",
                         "bm=64,bn=32,bk=32,tm=2,tn=2,vm=1,vn=1,sa=0,sb=1,mma=1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gs_status s = cfg(ctx, &h, bad[i], &e);
        cr_assert(s != GS_OK || !gs_etir_wellformed(&h, &e), "legal: %s", bad[i]);
    }
    int m, n, k;
    cr_assert(!gs_mma_axes(&cv, &m, &n, &k), "a conv's m is three axes");
    int8_t role[GS_MAX_AXES];
    cr_assert(gs_mma_roles(&cv, role));
    cr_assert(role[0] == GS_MMA_ROLE_M && role[1] == GS_MMA_ROLE_N && role[2] == GS_MMA_ROLE_M &&
              role[3] == GS_MMA_ROLE_M && role[4] == GS_MMA_ROLE_K && role[5] == GS_MMA_ROLE_K && role[6] == GS_MMA_ROLE_K,
              "conv nchw roles (n k p q c r s)");
    gs_op rr = parse(ctx, "rowsum M=8 K=8");
    cr_assert(!gs_mma_roles(&rr, role), "a one-input reduction");
    cr_assert(gs_mma_axes(&h, &m, &n, &k) && m == 0 && n == 1 && k == 2);
    cr_assert(gs_mma_axes(&bg, &m, &n, &k));
    snprintf(buf, sizeof buf, MMA_CFG ",mma=%d", gs_mma_count() + 1);
    cr_assert_neq(cfg(ctx, &h, buf, &e), GS_OK, "%s is out of the table", buf);
    /* pick: the widest k an arch has */
    cr_assert_eq(gs_mma_pick(80, &h), 1);
    cr_assert_eq(gs_mma_pick(75, &h), 4);
    cr_assert_eq(gs_mma_pick(70, &h), 0);
    cr_assert_eq(gs_mma_pick(90, &b), 2);
    cr_assert_eq(gs_mma_pick(75, &b), 0, "no bf16 row on sm_75");
    cr_assert_eq(gs_mma_pick(86, &t), 3);
    cr_assert_eq(gs_mma_pick(90, &f), 0);
    /* ... whose k divides a block's k tile (the walk's tensor-core completion) */
    cr_assert_eq(gs_mma_pick_dividing(80, &h, 32), 1);
    cr_assert_eq(gs_mma_pick_dividing(80, &h, 8), 4, "a k tile of 8 takes m16n8k8");
    cr_assert_eq(gs_mma_pick_dividing(80, &h, 4), 0);
    cr_assert_eq(gs_mma_pick_dividing(90, &b, 24), 5, "bf16's m16n8k8 from sm_80");
    cr_assert_eq(gs_mma_pick_dividing(75, &b, 8), 0);
    cr_assert_eq(gs_mma_pick_dividing(86, &t, 8), 3);
    gs_ctx_destroy(ctx);
}

/* ---- the plan ----------------------------------------------------------------- */
Test(mma, plan_fields_and_arch_check) {
    gs_ctx *ctx = gs_ctx_create();
    const gs_hw *a100 = gs_hw_find_builtin("a100"), *t4 = gs_hw_find_builtin("t4");
    cr_assert(a100 && t4);
    gs_op h = parse(ctx, "gemm M=100 N=50 K=33 dtype=f16");
    gs_op ht = parse(ctx, "gemm M=100 N=50 K=33 dtype=f16 transA=1 transB=1");
    gs_op t = parse(ctx, "gemm M=100 N=50 K=33 math=tf32");
    gs_etir e, off;
    cr_assert_eq(cfg(ctx, &h, MMA_CFG ",stages=2,mma=1", &e), GS_OK);
    cr_assert_eq(cfg(ctx, &h, MMA_CFG ",stages=2", &off), GS_OK);
    gs_plan p, q;
    gs_plan_make(a100, &h, &e, NULL, &p);
    gs_plan_make(a100, &h, &off, NULL, &q);
    cr_assert_eq(p.mma, 1);
    cr_assert(p.warp_m == 16 && p.warp_n == 8, "warp %dx%d", p.warp_m, p.warp_n);
    cr_assert_eq(q.mma, 0);
    cr_assert(q.warp_m == 0 && q.warp_n == 0 && q.in[0].ldsm == 0 && q.in[0].ldsm_trans == 0 && q.in[0].swizzle == 0);
    /* NN: A rows run along k (ldmatrix .x4), B rows along n (.x2.trans) */
    cr_assert(p.in[0].ldsm == 4 && !p.in[0].ldsm_trans, "A ldsm %d%s", p.in[0].ldsm, p.in[0].ldsm_trans ? "t" : "");
    cr_assert(p.in[1].ldsm == 2 && p.in[1].ldsm_trans, "B ldsm %d%s", p.in[1].ldsm, p.in[1].ldsm_trans ? "t" : "");
    cr_assert(p.in[0].read_wf > 0 && p.in[1].read_wf > 0);
    /* two k-steps of 16 a tile, two stages: fragments double-buffered, peeled; n is the output's
     * innermost axis: the C pairs stored as 2-vectors */
    cr_assert(p.out_vec == 2 && p.out_axis == 1 && p.frag_pipe && p.peel, "ov %d fragpipe %d peel %d", p.out_vec,
              p.frag_pipe, p.peel);
    /* registers: 4 accumulators, A 4 and B 2 fragment registers */
    cr_assert(p.regs_bound >= 4 + 4 + 2, "regs %d", p.regs_bound);
    /* TT: A's rows along m, B's along k */
    cr_assert_eq(cfg(ctx, &ht, MMA_CFG ",mma=1", &e), GS_OK);
    gs_plan_make(a100, &ht, &e, NULL, &p);
    cr_assert_eq(p.out_vec, 2);
    cr_assert(p.in[0].ldsm == 4 && p.in[0].ldsm_trans && p.in[1].ldsm == 2 && !p.in[1].ldsm_trans);
    /* the swizzle: an involution keeping each 16-byte vector whole and in its row */
    gs_plan_input sw = p.in[0];
    sw.swizzle = 2;
    sw.pad = 0;
    const int64_t pitch = sw.dims[sw.inner_dim];
    for (int64_t o = 0; o < 4 * pitch; o++) {
        int64_t x = gs_plan_swizzle(&sw, 2, o);
        cr_assert(gs_plan_swizzle(&sw, 2, x) == o && x / pitch == o / pitch && x % 8 == o % 8, "swizzle of %lld: %lld",
                  (long long)o, (long long)x);
        if (o / pitch == 1 && o % pitch < 8) cr_assert_eq(x % pitch, 8 + o % pitch, "row 1's first vector moves one over");
    }
    /* tf32: ldmatrix (no .trans) where an operand's rows run along k, element reads where they run
     * along m or n: NN reads A by ldmatrix.x4 and B by elements, NT both by ldmatrix (B .x2), TN
     * both by elements, TT A by elements and B by .x2; every ldmatrix row of 4 elements on 16 bytes */
    const char *tsp[4] = {"gemm M=100 N=50 K=33 math=tf32", "gemm M=100 N=50 K=33 math=tf32 transB=1",
                          "gemm M=100 N=50 K=33 math=tf32 transA=1", "gemm M=100 N=50 K=33 math=tf32 transA=1 transB=1"};
    const int wa[4] = {4, 4, 0, 0}, wb[4] = {0, 2, 0, 2};
    for (int i = 0; i < 4; i++) {
        t = parse(ctx, tsp[i]);
        cr_assert_eq(cfg(ctx, &t, MMA_CFG ",mma=3", &e), GS_OK);
        gs_plan_make(a100, &t, &e, NULL, &p);
        cr_assert(p.mma == 3 && p.in[0].ldsm == wa[i] && p.in[1].ldsm == wb[i], "%s: A ldsm %d, B ldsm %d", tsp[i],
                  p.in[0].ldsm, p.in[1].ldsm);
        cr_assert(!p.in[0].ldsm_trans && !p.in[1].ldsm_trans, "%s: .trans on tf32", tsp[i]);
        for (int q = 0; q < 2; q++)
            for (int j = 0; j < 2 && p.in[q].ldsm; j++)
                cr_assert(j == p.in[q].inner_dim || p.in[q].sstride[j] % 4 == 0, "%s: input %d stride %lld", tsp[i], q,
                          (long long)p.in[q].sstride[j]);
    }
    /* bf16 on m16n8k8, NN: A by ldmatrix .x2, B by .x1.trans, as row 4 reads f16 */
    gs_op bn = parse(ctx, "gemm M=100 N=50 K=33 dtype=bf16");
    cr_assert_eq(cfg(ctx, &bn, "bm=64,bn=32,bk=8,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=5", &e), GS_OK);
    gs_plan_make(a100, &bn, &e, NULL, &p);
    cr_assert(p.mma == 5 && p.in[0].ldsm == 2 && !p.in[0].ldsm_trans && p.in[1].ldsm == 1 && p.in[1].ldsm_trans,
              "bf16 k8: A ldsm %d%s, B ldsm %d%s", p.in[0].ldsm, p.in[0].ldsm_trans ? "t" : "", p.in[1].ldsm,
              p.in[1].ldsm_trans ? "t" : "");
    /* the arch: row 1 needs sm_80 (t4 is sm_75), row 4 sm_75 */
    cr_assert_eq(cfg(ctx, &h, MMA_CFG ",mma=1", &e), GS_OK);
    cr_assert(gs_hw_check(a100, &h, &e));
    cr_assert(!gs_hw_check(t4, &h, &e), "m16n8k16 on sm_75");
    cr_assert_eq(cfg(ctx, &h, "bm=64,bn=32,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=4", &e), GS_OK);
    cr_assert(gs_hw_check(t4, &h, &e), "m16n8k8 on sm_75");
    /* row 5 has row 4's shape, but bf16 needs sm_80 */
    gs_op b = parse(ctx, "gemm M=100 N=50 K=33 dtype=bf16");
    cr_assert_eq(cfg(ctx, &b, "bm=64,bn=32,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=5", &e), GS_OK);
    cr_assert(gs_hw_check(a100, &b, &e), "m16n8k8.bf16 on sm_80");
    cr_assert(!gs_hw_check(t4, &b, &e), "m16n8k8.bf16 on sm_75");
    gs_result *res = NULL;
    cr_assert_eq(gs_construct_config(ctx, &b, t4, "bm=64,bn=32,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=5", &res),
                 GS_ERR_INVALID_ARG);
    cr_assert(strstr(gs_ctx_errmsg(ctx), "(mma=5, m16n8k8.bf16, needs sm_80; t4 is sm_75)"), "%s", gs_ctx_errmsg(ctx));
    gs_ctx_destroy(ctx);
}

/* ---- element reads at a lane base plus constants ---------------------------------
 * h100's pick for a 3x3 NHWC f16 conv before ldmatrix read conv operands,
 * with half its thread tile along n (read by ldmatrix, the pick's 128
 * accumulators count a k8 row's two k-steps and exceed the register bound);
 * the plan reads both inputs by ldmatrix, cleared here for the element reads.
 * A's box is n 32 x h 2 x w 2 x c 8, so an instruction tile (16 pixels)
 * steps 4 images (128 elements), a fragment's second row (pixel + 8) 2
 * images (64) and its k pair 1; B's tile (8 output channels of 8
 * channels) steps 64. One k-step a tile: no k-step term. A swizzled or
 * ldmatrix operand does not fold; ldmatrix's rows fold alike
 * (gs_plan_mma_ldsm_affine): the same tile steps. */
Test(mma, fragment_reads_fold_to_a_lane_base) {
    gs_ctx *ctx = gs_ctx_create();
    const gs_hw *h100 = gs_hw_find_builtin("h100");
    const char *nhwc = "conv2d N=32 C=128 H=28 W=28 K=128 R=3 S=3 pad=1 layout=nhwc dtype=f16";
    gs_op op;
    gs_etir e;
    gs_plan p = case_plan(ctx, h100, nhwc,
                          "bn=32,bp=2,bq=2,bk=64,bc=8,br=1,bs=1,tn=8,tp=1,tq=1,tk=8,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,stages=4,mma=4",
                          &op, &e);
    int64_t dx, dk;
    cr_assert(p.in[0].ldsm == 2 && p.in[1].ldsm == 1, "ldsm %d, %d", p.in[0].ldsm, p.in[1].ldsm);
    cr_assert(gs_plan_mma_ldsm_affine(&op, &e, &p, 0, &dx, &dk));
    cr_expect(dx == 128 && dk == 0, "A ldmatrix: dx %lld dk %lld", (long long)dx, (long long)dk);
    cr_assert(gs_plan_mma_ldsm_affine(&op, &e, &p, 1, &dx, &dk));
    cr_expect(dx == 64 && dk == 0, "B ldmatrix: dx %lld dk %lld", (long long)dx, (long long)dk);
    /* the same layout read by elements: the plan's pairs as it would set them */
    int8_t role[GS_MAX_AXES];
    cr_assert(gs_mma_roles(&op, role));
    for (int t = 0; t < 2; t++) {
        p.in[t].ldsm = 0;
        p.in[t].frag_pairs = gs_plan_mma_frag_pairs(&op, &e, &p, role, t);
    }
    gs_mma_frag_fold ff;
    cr_assert(!p.in[0].swizzle && gs_plan_mma_frag_affine(&op, &e, &p, 0, &ff));
    cr_expect(p.in[0].frag_pairs && p.in[1].frag_pairs, "NHWC: the plan's pairs %d %d", p.in[0].frag_pairs,
              p.in[1].frag_pairs);
    cr_expect(ff.dx == 128 && ff.dk == 0 && ff.ei[0] == 0 && ff.ei[1] == 1 && ff.ei[2] == 64 && ff.ei[3] == 65 && ff.pairs,
              "A: dx %lld dk %lld ei %lld %lld %lld %lld pairs %d", (long long)ff.dx, (long long)ff.dk, (long long)ff.ei[0],
              (long long)ff.ei[1], (long long)ff.ei[2], (long long)ff.ei[3], ff.pairs);
    cr_assert(gs_plan_mma_frag_affine(&op, &e, &p, 1, &ff));
    cr_expect(ff.dx == 64 && ff.dk == 0 && ff.ei[0] == 0 && ff.ei[1] == 1 && ff.pairs, "B: dx %lld dk %lld ei %lld %lld",
              (long long)ff.dx, (long long)ff.dk, (long long)ff.ei[0], (long long)ff.ei[1]);
    p.in[0].swizzle = 1;
    cr_expect(!gs_plan_mma_frag_affine(&op, &e, &p, 0, &ff), "a swizzled operand folds");
    p.in[1].ldsm = 1;
    cr_expect(!gs_plan_mma_frag_affine(&op, &e, &p, 1, &ff), "an ldmatrix operand folds");
    /* two k-steps a tile (a 16-channel tile of m16n8k8): the k-step term */
    p = case_plan(ctx, h100, nhwc,
                  "bn=32,bp=2,bq=2,bk=64,bc=16,br=1,bs=1,tn=8,tp=1,tq=1,tk=8,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,stages=2,mma=4",
                  &op, &e);
    cr_assert(p.in[0].ldsm == 2 && gs_plan_mma_ldsm_affine(&op, &e, &p, 0, &dx, &dk));
    cr_expect(dk == 8, "A ldmatrix: dk %lld", (long long)dk);
    p.in[0].ldsm = 0;
    cr_assert(!p.in[0].swizzle && gs_plan_mma_frag_affine(&op, &e, &p, 0, &ff));
    cr_expect(ff.dk == 8, "A: dk %lld", (long long)ff.dk);
    /* NCHW: A's k pair (channels c, c + 1) lies a channel's h x w apart: no pairs */
    p = case_plan(ctx, h100, "conv2d N=32 C=128 H=28 W=28 K=128 R=3 S=3 pad=1 dtype=f16",
                  "bn=16,bk=128,bp=2,bq=4,bc=16,br=1,bs=1,tn=8,tk=8,tp=1,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=2,mma=4",
                  &op, &e);
    cr_assert(!p.in[0].swizzle && gs_plan_mma_frag_affine(&op, &e, &p, 0, &ff));
    cr_expect(!ff.pairs && ff.ei[1] > 1 && !p.in[0].frag_pairs, "NCHW A: ei[1] %lld, pairs %d", (long long)ff.ei[1],
              ff.pairs);
    /* NCHW with s moving fastest: the k pair is w, w + 1; an odd pad shifts the box, not the
     * shared offsets (the box starts at the offset), so pairs at every pad */
    for (int pad = 0; pad < 4; pad++) {
        char spec[128];
        snprintf(spec, sizeof spec, "conv2d N=1 C=7 H=21 W=21 K=9 R=3 S=3 stride=2 pad=%d dtype=bf16", pad);
        p = case_plan(ctx, gs_hw_find_builtin("a100"), spec,
                      "bn=1,bk=16,bp=8,bq=8,bc=8,br=2,bs=4,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=2,stages=2",
                      &op, &e);
        cr_assert(gs_plan_mma_frag_affine(&op, &e, &p, 0, &ff));
        cr_expect(p.in[0].frag_pairs && ff.pairs, "pad %d: the plan's pairs %d, the enumeration's %d", pad,
                  p.in[0].frag_pairs, ff.pairs);
    }
    /* tf32: one element a register, no pairs */
    p = case_plan(ctx, gs_hw_find_builtin("a100"), "gemm M=29 N=19 K=37 math=tf32 transA=1 transB=1",
                  "bm=16,bn=16,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=3", &op, &e);
    for (int t = 0; t < 2; t++)
        if (!p.in[t].ldsm && !p.in[t].swizzle) {
            cr_assert(gs_plan_mma_frag_affine(&op, &e, &p, t, &ff));
            cr_expect(!ff.pairs, "tf32 input %d pairs", t);
        }
    gs_ctx_destroy(ctx);
}

/* ---- ldmatrix where a role spans several axes (a conv's) ----------------------------
 * A row of ldmatrix is 8 halves (4 tf32 elements) of consecutive k at a
 * 16-byte aligned address; which m or n index names the row does not
 * matter. So an NHWC conv's input ([n][h][w][c]) and filter ([k][r][s][c])
 * read by ldmatrix where k's fastest moving axis is c (r and s blocks 1,
 * as k splits s fastest) with a block of whole rows, whatever the pixels'
 * split; not where r or s moves (consecutive k then steps the window), c's
 * block is 4, or a group's channel offset moves the row start off 16 bytes.
 * Each plan's choice must agree with gs_plan_mma_ldsm_rows, which
 * enumerates every row the kernel reads: a chosen operand's rows are
 * whole and aligned, and a refused one's (ldsm forced on) are not. */
typedef struct ldsm_conv_case {
    const char *spec, *cfg;
    int im2col;   /* gs_im2col_mode */
    int a, b;     /* the plan's ldsm per operand */
} ldsm_conv_case;

static const ldsm_conv_case ldsm_conv_cases[] = {
    /* h100's old pick, its thread tile halved (m16n8k8: A .x2, B .x1); c 32 on m16n8k16 */
    {"conv2d N=32 C=128 H=28 W=28 K=128 R=3 S=3 pad=1 layout=nhwc dtype=f16",
     "bn=32,bp=2,bq=2,bk=64,bc=8,br=1,bs=1,tn=8,tp=1,tq=1,tk=8,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,stages=4,mma=4", 0, 2, 1},
    {"conv2d N=32 C=128 H=28 W=28 K=128 R=3 S=3 pad=1 layout=nhwc dtype=f16",
     "bn=16,bp=2,bq=2,bk=64,bc=32,br=1,bs=1,tn=8,tp=1,tq=1,tk=8,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,stages=2,mma=1", 0, 4, 2},
    /* a 1x1 conv in its own nest; bf16; tf32 (4 elements a row) */
    {"conv2d N=3 C=24 H=5 W=7 K=16 R=1 S=1 layout=nhwc dtype=bf16",
     "bn=1,bp=8,bq=8,bk=16,bc=16,br=1,bs=1,tn=1,tp=2,tq=1,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=2", 0, 4, 2},
    {"conv2d N=2 C=6 H=5 W=5 K=10 R=3 S=3 pad=1 layout=nhwc math=tf32",
     "bn=1,bk=16,bp=8,bq=8,bc=8,br=1,bs=1,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=3", 0, 4, 2},
    /* stride 2: the im2col view ([n][r][p][s][q][c]) and the tensor box (w steps 2 a pixel) */
    {"conv2d N=2 C=16 H=9 W=67 K=16 R=3 S=3 stride=2 pad=1 layout=nhwc dtype=f16",
     "bn=1,bp=2,bq=32,bk=16,bc=16,br=1,bs=1,tn=1,tp=1,tq=8,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=1,stages=2",
     GS_IM2COL_FORCE, 4, 2},
    {"conv2d N=2 C=16 H=9 W=67 K=16 R=3 S=3 stride=2 pad=1 layout=nhwc dtype=f16",
     "bn=1,bp=2,bq=32,bk=16,bc=16,br=1,bs=1,tn=1,tp=1,tq=8,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=1,stages=2",
     GS_IM2COL_OFF, 4, 2},
    /* groups: two groups a block, channel offsets 16 (whole rows) and 12 (not: A by elements) */
    {"conv2d N=2 C=32 H=6 W=7 K=16 R=3 S=3 pad=1 groups=2 layout=nhwc dtype=f16",
     "bn=1,bp=4,bq=8,bg=2,bk=8,bc=16,br=1,bs=1,tn=1,tp=2,tq=1,tg=1,tk=2,vn=1,vp=1,vq=1,vg=1,vk=1,si=1,sf=1,mma=1,stages=2",
     0, 4, 2},
    {"conv2d N=2 C=24 H=6 W=7 K=16 R=3 S=3 pad=1 groups=2 layout=nhwc dtype=f16",
     "bn=1,bp=4,bq=8,bg=2,bk=8,bc=16,br=1,bs=1,tn=1,tp=2,tq=1,tg=1,tk=2,vn=1,vp=1,vq=1,vg=1,vk=1,si=1,sf=1,mma=1,stages=2",
     0, 0, 2},
    /* r or s moving (consecutive k steps the window), c's block 4 */
    {"conv2d N=2 C=24 H=9 W=7 K=16 R=3 S=3 pad=1 layout=nhwc dtype=f16",
     "bn=1,bp=8,bq=8,bk=16,bc=8,br=2,bs=1,tn=1,tp=2,tq=1,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=1", 0, 0, 0},
    {"conv2d N=2 C=24 H=9 W=7 K=16 R=3 S=3 pad=1 layout=nhwc dtype=f16",
     "bn=1,bp=8,bq=8,bk=16,bc=8,br=1,bs=2,tn=1,tp=2,tq=1,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=1", 0, 0, 0},
    {"conv2d N=2 C=24 H=9 W=7 K=16 R=3 S=3 pad=1 layout=nhwc dtype=f16",
     "bn=1,bp=8,bq=8,bk=16,bc=4,br=2,bs=2,tn=1,tp=2,tq=1,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=1", 0, 0, 0},
};

Test(mma, conv_ldmatrix_operands) {
    gs_ctx *ctx = gs_ctx_create();
    const gs_hw *hw = gs_hw_find_builtin("a100");
    for (size_t i = 0; i < sizeof ldsm_conv_cases / sizeof ldsm_conv_cases[0]; i++) {
        const ldsm_conv_case *c = &ldsm_conv_cases[i];
        gs_op op;
        gs_etir e;
        gs_plan p = case_plan_box(ctx, hw, c->spec, c->cfg, c->im2col, &op, &e);
        const gs_mma_row *r = gs_mma_get(p.mma);
        cr_expect(p.in[0].ldsm == c->a && p.in[1].ldsm == c->b && !p.in[0].ldsm_trans && !p.in[1].ldsm_trans,
                  "%s | %s: ldsm %d%s, %d%s (want %d, %d)", c->spec, c->cfg, p.in[0].ldsm, p.in[0].ldsm_trans ? "t" : "",
                  p.in[1].ldsm, p.in[1].ldsm_trans ? "t" : "", c->a, c->b);
        cr_expect(c->im2col != GS_IM2COL_FORCE || p.in[0].im2col, "%s: the im2col view", c->spec);
        for (int t = 0; t < 2; t++) {
            gs_plan q = p;
            q.in[t].ldsm = (uint8_t)(t == 0 ? r->a.regs : r->b.regs);
            q.in[t].ldsm_trans = 0;
            cr_expect_eq(gs_plan_mma_ldsm_rows(&op, &e, &q, t), p.in[t].ldsm > 0,
                         "%s | %s: input %d's rows are%s whole and aligned, the plan's ldsm %d", c->spec, c->cfg, t,
                         p.in[t].ldsm ? " not" : "", p.in[t].ldsm);
        }
    }
    /* NCHW, both by elements: the input's rows run along the pixels (no .trans over several axes;
     * along k they are not whole), the filter's innermost dim is s, whose block is no whole row.
     * There the rule is short of the enumeration: the filter's box [k][c][r][s] unpadded is dense
     * in k's own order (c, r, s), so its rows are whole after all; but with a padded s they are
     * not, and the rule decides before the padding (mma_pad_cands), by the innermost dim alone */
    const char *nchw_cfg[2] = {"bn=1,bk=16,bp=8,bq=8,bc=16,br=1,bs=1,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=1",
                               "bn=1,bk=16,bp=8,bq=8,bc=8,br=1,bs=2,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=1"};
    for (int i = 0; i < 2; i++) {
        gs_op nchw;
        gs_etir ne;
        gs_plan np = case_plan(ctx, hw, "conv2d N=2 C=24 H=9 W=7 K=16 R=3 S=3 pad=1 dtype=f16", nchw_cfg[i], &nchw, &ne);
        cr_expect(np.in[0].ldsm == 0 && np.in[1].ldsm == 0, "NCHW %s: ldsm %d, %d", nchw_cfg[i], np.in[0].ldsm,
                  np.in[1].ldsm);
        np.in[0].ldsm = 4;
        np.in[1].ldsm = 2;
        cr_expect(!gs_plan_mma_ldsm_rows(&nchw, &ne, &np, 0), "NCHW %s: the input's rows whole", nchw_cfg[i]);
        cr_expect(np.in[1].pad || gs_plan_mma_ldsm_rows(&nchw, &ne, &np, 1), "NCHW %s: the filter's rows",
                  nchw_cfg[i]);
    }
    /* the 16-byte start of each row is the strides': an NHWC input box (c 32, pad 0 or 8) restrided
     * with a pad of 4 halves starts every other pixel's row 8 bytes off */
    gs_op op;
    gs_etir e;
    gs_plan p = case_plan(ctx, hw, ldsm_conv_cases[1].spec, ldsm_conv_cases[1].cfg, &op, &e);
    gs_plan_input *pi = &p.in[0];
    cr_assert(pi->ldsm && pi->inner_dim == 3 && gs_plan_mma_ldsm_rows(&op, &e, &p, 0));
    for (int64_t pad = 0; pad <= 8; pad += 4) {
        pi->pad = (int32_t)pad;
        pi->sstride[3] = 1;
        for (int j = 2; j >= 0; j--) pi->sstride[j] = pi->sstride[j + 1] * (pi->dims[j + 1] + (j == 2 ? pad : 0));
        cr_expect_eq(gs_plan_mma_ldsm_rows(&op, &e, &p, 0), pad % 8 == 0, "pad %lld", (long long)pad);
    }
    gs_ctx_destroy(ctx);
}

/* ---- PoCL: the OpenCL printer's exact per-lane emulation ------------------------
 * Each case is verified against the reference interpreter on awkward shapes
 * (primes, 1, K = 1, extents below one instruction tile): as the plan makes
 * it (ldmatrix where it can), and, where `elem` is set, once more with the
 * fragments read element by element (the plan's ldsm cleared), so both
 * paths run; two k-steps a tile with stages > 1 take the fragment-pipelined
 * loop (and its peeled steady loop, for one reduce axis). A wrong ldmatrix emulation, C mapping or table entry makes the
 * ldmatrix path disagree with the reference (its registers come from
 * ldmatrix's own distribution, the mma's from the table). */
typedef struct mma_case {
    const char *spec, *cfg;
    int elem;   /* also run the element-read path */
    int a, b;   /* where non-zero, the plan's ldsm of A and B (-1: element reads) */
    int im2col; /* gs_im2col_mode of the windowed input's box */
} mma_case;

static const mma_case mma_cases[] = {
    {"gemm M=1 N=1 K=1 dtype=f16", "bm=16,bn=8,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=1", 1, 0, 0, 0},
    {"gemm M=37 N=23 K=29 dtype=f16", "bm=64,bn=32,bk=16,tm=4,tn=2,vm=1,vn=1,sa=1,sb=1,mma=1", 1, 0, 0, 0},
    {"gemm M=131 N=67 K=1 dtype=f16", "bm=32,bn=32,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=1", 0, 0, 0, 0},
    /* stages 3 and 4 need cp.async, so rows of whole 16-byte vectors (k 88 = 5.5 tiles) */
    {"gemm M=97 N=56 K=88 dtype=f16", "bm=32,bn=32,bk=32,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=1,stages=3", 1, 0, 0, 0},
    {"gemm M=97 N=56 K=88 dtype=f16 transB=1", "bm=32,bn=32,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=1,stages=4", 0, 0, 0, 0},
    /* both operands XOR-swizzled (the plan's pick here: A ldsm4.trans swz4, B ldsm2 swz4) */
    {"gemm M=97 N=56 K=88 dtype=f16 transA=1 transB=1", "bm=32,bn=32,bk=32,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=1,stages=2", 1, 0, 0, 0},
    {"gemm M=53 N=41 K=131 dtype=f16 transA=1 transB=1 bias=1 relu=1",
     "bm=64,bn=32,bk=16,tm=4,tn=2,vm=1,vn=1,sa=1,sb=1,mma=1,stages=2,split=3", 0, 0, 0, 0},
    {"gemm M=53 N=41 K=131 dtype=bf16 bias=1 relu=1", "bm=32,bn=64,bk=32,tm=2,tn=4,vm=1,vn=1,sa=1,sb=1,mma=2,stages=2", 1, 0, 0, 0},
    {"gemm M=45 N=27 K=71 dtype=f16 out_dtype=f32 alpha=0.5 beta=2", "bm=32,bn=16,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=1,split=2", 0, 0, 0, 0},
    {"gemm M=29 N=19 K=37 math=tf32", "bm=32,bn=32,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=3,stages=2", 0, 0, 0, 0},
    {"gemm M=29 N=19 K=37 math=tf32 transA=1 transB=1", "bm=16,bn=16,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=3,split=2", 0, 0, 0, 0},
    {"gemm M=29 N=19 K=37 dtype=f16 transB=1", "bm=32,bn=16,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=4,stages=2", 1, 0, 0, 0},
    /* bf16 on m16n8k8 (row 4's layout in row 2's type): a k tile of 8, and of 16 (two k-steps);
     * the f32 output keeps the tolerance at f32's */
    {"gemm M=37 N=29 K=53 dtype=bf16 transA=1 out_dtype=f32", "bm=32,bn=32,bk=8,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=5", 1, 0,
     0, 0},
    {"bgemm B=3 M=37 N=29 K=45 dtype=bf16 transB=1 out_dtype=f32",
     "bb=1,bm=32,bn=32,bk=16,tb=1,tm=2,tn=4,vb=1,vm=1,vn=1,sa=1,sb=1,mma=5,stages=2", 0, 2, 1, 0},
    /* conv2d as implicit GEMM: m = (n, p, q) flattened, n = k, k = (c, r, s) flattened; edges, padding,
     * strides and partial reduce tiles all zero-filled by the copies */
    {"conv2d N=2 C=5 H=9 W=7 K=12 R=3 S=3 pad=1 dtype=f16",
     "bn=1,bk=16,bp=8,bq=8,bc=4,br=4,bs=4,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=1", 0, 0, 0, 0},
    {"conv2d N=2 C=5 H=9 W=7 K=12 R=3 S=3 pad=1 dtype=f16 layout=nhwc bias=1 relu=1",
     "bn=1,bp=8,bq=8,bk=16,bc=4,br=4,bs=4,tn=1,tp=2,tq=1,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=1,stages=2", 0, -1, -1, 0},
    {"conv2d N=1 C=7 H=11 W=10 K=9 R=3 S=3 stride=2 pad=1 dtype=bf16",
     "bn=1,bk=16,bp=8,bq=8,bc=8,br=2,bs=2,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=2,stages=2", 0, 0, 0, 0},
    {"conv2d N=2 C=6 H=5 W=5 K=10 R=3 S=3 pad=1 math=tf32",
     "bn=1,bk=16,bp=8,bq=8,bc=2,br=2,bs=2,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=3", 0, 0, 0, 0},
    {"conv2d N=3 C=13 H=9 W=11 K=20 R=3 S=3 pad=1 dtype=bf16 out_dtype=f32",
     "bn=1,bk=16,bp=8,bq=8,bc=8,br=1,bs=1,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=5,stages=2", 0, 0, 0, 0},
    {"bgemm B=3 M=37 N=29 K=45 dtype=f16 transA=1", "bb=1,bm=32,bn=32,bk=16,tb=1,tm=2,tn=4,vb=1,vm=1,vn=1,sa=1,sb=1,mma=1,stages=2",
     0, 0, 0, 0},
    /* NHWC convs by ldmatrix (conv_ldmatrix_operands): r and s blocks 1, c's whole rows; channels
     * off 8 (a partial k tile, zero-filled), primes, 1, pad, stride and dilation, groups (C/G 10:
     * the next group's channels masked), the im2col view and the tensor box, two k-steps a tile
     * over three stages, tf32 */
    {"conv2d N=3 C=13 H=7 W=5 K=11 R=3 S=3 pad=1 layout=nhwc dtype=f16",
     "bn=1,bp=8,bq=8,bk=16,bc=16,br=1,bs=1,tn=1,tp=2,tq=1,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=1,stages=2", 1, 4, 2, 0},
    {"conv2d N=2 C=5 H=9 W=7 K=12 R=3 S=3 stride=2 pad=1 layout=nhwc dtype=bf16 bias=1 relu=1",
     "bn=1,bp=8,bq=8,bk=16,bc=16,br=1,bs=1,tn=1,tp=2,tq=1,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=2", 1, 4, 2, 0},
    {"conv2d N=1 C=1 H=5 W=6 K=1 R=1 S=1 layout=nhwc dtype=f16",
     "bn=1,bp=8,bq=8,bk=16,bc=8,br=1,bs=1,tn=1,tp=2,tq=1,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=4", 1, 2, 1, 0},
    {"conv2d N=2 C=20 H=6 W=7 K=14 R=3 S=3 pad=1 groups=2 layout=nhwc dtype=f16",
     "bn=1,bp=8,bq=8,bg=1,bk=16,bc=16,br=1,bs=1,tn=1,tp=2,tq=1,tg=1,tk=2,vn=1,vp=1,vq=1,vg=1,vk=1,si=1,sf=1,mma=1,stages=2", 1,
     4, 2, 0},
    {"conv2d N=2 C=32 H=6 W=7 K=16 R=3 S=3 pad=1 groups=2 layout=nhwc dtype=f16",
     "bn=1,bp=4,bq=8,bg=2,bk=8,bc=16,br=1,bs=1,tn=1,tp=2,tq=1,tg=1,tk=2,vn=1,vp=1,vq=1,vg=1,vk=1,si=1,sf=1,mma=1,stages=2", 1,
     4, 2, 0},
    {"conv2d N=3 C=40 H=11 W=13 K=20 R=3 S=3 pad=1 layout=nhwc dtype=f16",
     "bn=1,bp=4,bq=16,bk=32,bc=32,br=1,bs=1,tn=1,tp=2,tq=2,tk=4,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=1,stages=3", 1, 4, 2, 0},
    {"conv2d N=2 C=9 H=19 W=37 K=10 R=3 S=3 dilation=2 pad=2 layout=nhwc dtype=f16",
     "bn=1,bp=4,bq=8,bk=16,bc=16,br=1,bs=1,tn=1,tp=2,tq=1,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=1,stages=2", 1, 4, 2, 0},
    {"conv2d N=2 C=16 H=9 W=67 K=16 R=3 S=3 stride=2 pad=1 layout=nhwc dtype=f16",
     "bn=1,bp=2,bq=32,bk=16,bc=16,br=1,bs=1,tn=1,tp=1,tq=8,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=1,stages=2", 1, 4, 2,
     GS_IM2COL_FORCE},
    {"conv2d N=2 C=11 H=9 W=67 K=16 R=3 S=3 stride=2 pad=1 layout=nhwc dtype=f16",
     "bn=1,bp=2,bq=32,bk=16,bc=16,br=1,bs=1,tn=1,tp=1,tq=8,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=1,stages=2", 1, 4, 2,
     GS_IM2COL_OFF},
    {"conv2d N=2 C=6 H=5 W=5 K=10 R=3 S=3 pad=1 layout=nhwc math=tf32",
     "bn=1,bk=16,bp=8,bq=8,bc=8,br=1,bs=1,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=3", 1, 4, 2, 0},
    {"conv2d N=2 C=9 H=7 W=10 K=12 R=3 S=3 stride=2 pad=1 layout=nhwc dtype=bf16 out_dtype=f32 bias=1 relu=1",
     "bn=1,bp=8,bq=8,bk=16,bc=8,br=1,bs=1,tn=1,tp=2,tq=1,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=5", 1, 2, 1, 0},
};

/* Counts plan p's element-read operands whose fragments sit at a lane base
 * plus constants (the printers' folded reads) and those read at their full
 * offsets. */
static void frag_paths(const gs_op *op, const gs_etir *e, const gs_plan *p, int *fold, int *nofold, int *pairs) {
    for (int t = 0; t < 2; t++) {
        if (p->in[t].ldsm) continue;
        gs_mma_frag_fold ff;
        if (gs_plan_mma_frag_affine(op, e, p, t, &ff)) {
            ++*fold;
            /* the plan's pairs (what the model prices, by rule) hold in every case enumerated */
            cr_expect(!p->in[t].frag_pairs || ff.pairs, "%s input %d: frag_pairs, but not by enumeration", op->spec, t);
            *pairs += p->in[t].frag_pairs;
        } else ++*nofold;
    }
}

static void verify_mma(gs_ctx *ctx, gs_device *cl, const gs_hw *hw, const gs_op *op, const gs_etir *e,
                       const gs_plan *p, const char *what) {
    gs_diff d;
    gs_status s = gs_verify_plan(ctx, cl, op, e, p, 5, &d);
    cr_expect_eq(s, GS_OK, "%s on %s (%s): %s", op->spec, hw->name, what, gs_ctx_errmsg(ctx));
    cr_expect(d.normwise <= d.tol, "%s (%s): normwise %.3g > %.3g", op->spec, what, d.normwise, d.tol);
}

Test(mma, pocl_emulation_awkward_shapes, .timeout = 600) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = gs_test_open_dev(ctx);
    const gs_hw *hw = gs_hw_find_builtin("a100");
    int ldsm = 0, trans = 0, elem = 0, fragpipe = 0, peel = 0, swz = 0, pad = 0, fold = 0, nofold = 0, pairs = 0;
    int several_ldsm = 0, lfold = 0, lnofold = 0; /* ldmatrix operands of several-axis roles; at a lane base or not */
    for (size_t i = 0; i < sizeof mma_cases / sizeof mma_cases[0]; i++) {
        const mma_case *c = &mma_cases[i];
        gs_op op;
        gs_etir e;
        gs_plan p = case_plan_box(ctx, hw, c->spec, c->cfg, c->im2col, &op, &e);
        fragpipe += p.frag_pipe;
        peel += p.peel;
        int m, n, k;
        const bool several = !gs_mma_axes(&op, &m, &n, &k);
        for (int t = 0; t < 2; t++) {
            ldsm += p.in[t].ldsm > 0;
            trans += p.in[t].ldsm_trans;
            swz += p.in[t].swizzle > 0;
            pad += p.in[t].pad > 0;
            const int want = t == 0 ? c->a : c->b;
            cr_expect(!want || p.in[t].ldsm == (want < 0 ? 0 : want), "%s | %s: input %d ldsm %d (want %d)", c->spec,
                      c->cfg, t, p.in[t].ldsm, want);
            /* every ldmatrix row the kernel reads is whole and on 16 bytes */
            cr_expect(!p.in[t].ldsm || gs_plan_mma_ldsm_rows(&op, &e, &p, t), "%s | %s: input %d's ldmatrix rows",
                      c->spec, c->cfg, t);
            int64_t dx, dk;
            if (!p.in[t].ldsm || !several) continue;
            several_ldsm++;
            if (gs_plan_mma_ldsm_affine(&op, &e, &p, t, &dx, &dk)) lfold++;
            else lnofold++;
        }
        frag_paths(&op, &e, &p, &fold, &nofold, &pairs);
        verify_mma(ctx, cl, hw, &op, &e, &p, c->cfg);
        if (!c->elem) continue;
        int8_t role[GS_MAX_AXES];
        cr_assert(gs_mma_roles(&op, role));
        for (int t = 0; t < 2; t++) { /* (the layout's pairs as the plan would set them without ldmatrix) */
            p.in[t].ldsm = p.in[t].ldsm_trans = 0;
            p.in[t].frag_pairs = gs_plan_mma_frag_pairs(&op, &e, &p, role, t);
        }
        frag_paths(&op, &e, &p, &fold, &nofold, &pairs);
        verify_mma(ctx, cl, hw, &op, &e, &p, "element reads");
        elem++;
    }
    /* the 1x1 conv (NHWC) as the matmul it is: pixels m, output channels k, input channels c */
    gs_op conv = parse(ctx, "conv2d N=2 C=24 H=5 W=7 K=40 R=1 S=1 layout=nhwc dtype=f16 bias=1 relu=1"), mm;
    cr_assert_eq(gs_op_conv1x1_as_matmul(ctx, &conv, &mm), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_etir e;
    cr_assert_eq(cfg(ctx, &mm, "bm=32,bk=32,bc=16,tm=2,tk=4,vm=1,vk=1,si=1,sf=1,mma=1,stages=2", &e), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert(gs_hw_check(hw, &mm, &e));
    gs_plan p;
    gs_plan_make(hw, &mm, &e, NULL, &p);
    verify_mma(ctx, cl, hw, &mm, &e, &p, "1x1 conv nhwc as matmul");
    /* NCHW: O[n][K, HW] = F . I[n]: m = (n, x) flattened */
    conv = parse(ctx, "conv2d N=2 C=24 H=5 W=7 K=40 R=1 S=1 dtype=f16 bias=1");
    cr_assert_eq(gs_op_conv1x1_as_matmul(ctx, &conv, &mm), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(cfg(ctx, &mm, "bn=1,bk=16,bx=32,bc=16,tn=1,tk=2,tx=2,vn=1,vk=1,vx=1,si=1,sf=1,mma=1", &e), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert(gs_hw_check(hw, &mm, &e));
    gs_plan_make(hw, &mm, &e, NULL, &p);
    verify_mma(ctx, cl, hw, &mm, &e, &p, "1x1 conv nchw as matmul");
    cr_expect(ldsm >= 10 && trans >= 4 && elem >= 4 && fragpipe >= 4 && peel >= 3 && swz >= 3 && pad >= 3,
              "paths: %d ldmatrix, %d .trans, %d element, %d fragpipe, %d peeled, %d swizzled, %d padded", ldsm, trans,
              elem, fragpipe, peel, swz, pad);
    /* element reads at a lane base plus constants (a register's two halves read at once where they
     * are adjacent: pairs), and (the swizzled ones) at their full offsets */
    cr_expect(fold >= 15 && nofold >= 3 && pairs >= 6 && fold - pairs >= 6,
              "element-read operands: %d folded (%d in pairs), %d not", fold, pairs, nofold);
    /* ldmatrix of several-axis roles: rows at a lane base plus constants (print_mma_warp's lb<t>),
     * and at their full offsets (the strided tensor box: w steps 2 a pixel, the box 63 wide) */
    cr_expect(several_ldsm >= 20 && lfold >= 19 && lnofold >= 1, "conv ldmatrix operands: %d, %d folded, %d not",
              several_ldsm, lfold, lnofold);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* ---- non-finite inputs past a partial reduce tile ---------------------------------
 * A tile partial along r, s (a window) or the channels (a group) reads real
 * input elements past the axis' extent, where the filter's copy reads zeros:
 * 0 * Inf = NaN turned outputs that never touch a NaN or Inf input into NaN
 * (plan.kmask now zeroes those k elements). Small integers, exact in every
 * row's type and summed exactly in f32, with one NaN and one Inf (or -Inf)
 * placed in the input; every output must equal the reference's bit for bit,
 * NaN where it is NaN. */
typedef struct nf_case {
    const char *spec, *cfg;
} nf_case;

static const nf_case nf_cases[] = {
    /* r tile 4 over R=5 and s tile 2 over S=5: the review's reproducer */
    {"conv2d N=2 C=8 H=12 W=13 K=3 R=5 S=5 dtype=bf16",
     "bn=1,bp=8,bq=8,bk=64,bc=2,br=4,bs=2,tn=1,tp=1,tq=8,tk=8,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=2"},
    /* 3x3 in 4x4 tiles, NHWC, the fragment-pipelined loop's partial tiles */
    {"conv2d N=2 C=5 H=9 W=7 K=12 R=3 S=3 pad=1 dtype=f16 layout=nhwc",
     "bn=1,bp=8,bq=8,bk=16,bc=4,br=4,bs=4,tn=1,tp=2,tq=1,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,mma=1,stages=2"},
    {"conv2d N=1 C=7 H=11 W=10 K=9 R=3 S=3 stride=2 pad=1 dtype=bf16",
     "bn=1,bk=16,bp=8,bq=8,bc=8,br=2,bs=2,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=2,stages=2"},
    /* tf32: one element a register */
    {"conv2d N=2 C=6 H=5 W=5 K=10 R=3 S=3 pad=1 math=tf32",
     "bn=1,bk=16,bp=8,bq=8,bc=2,br=2,bs=2,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=3"},
    /* a channel tile of 16 over 9 channels a group: the next group's channels */
    {"conv2d N=1 C=18 H=4 W=4 K=4 R=1 S=1 groups=2 dtype=f16",
     "bn=1,bg=1,bk=8,bp=4,bq=4,bc=16,br=1,bs=1,tn=1,tg=1,tk=2,tp=1,tq=2,vn=1,vg=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=1"},
    /* a gemm's partial k tile reads past both tensors' edges: nothing masked */
    {"gemm M=37 N=23 K=29 dtype=f16", "bm=64,bn=32,bk=16,tm=4,tn=2,vm=1,vn=1,sa=1,sb=1,mma=1"},
};

/* Runs op's plan p on PoCL with inputs ins (f32 values, exact in their
 * types; one per buffer of op: the inputs, the output's old values, the
 * bias where op has one; split-K's workspace zeroed) into y. */
static void nf_run(gs_ctx *ctx, gs_device *cl, const gs_op *op, const gs_etir *e, const gs_plan *p,
                   float *const *ins, float *y) {
    gs_kernel_src ks;
    cr_assert_eq(gs_lower_emit_plan(ctx, op, e, p, GS_DIALECT_OPENCL, 0, &ks), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_dev_prog prog;
    cr_assert_eq(gs_dev_prog_load(ctx, cl, ks.src, ks.name, ks.smem_bytes, &prog), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_buffer *b[4] = {0};
    const int nb = gs_op_num_buffers(op);
    cr_assert(nb <= 4);
    for (int t = 0; t < nb; t++)
        cr_assert_eq(gs_typed_buffer_create(ctx, cl, gs_op_buffer_dtype(op, t), ins[t], gs_op_buffer_elems(op, t), &b[t]),
                     GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_buffer *ws = NULL; /* split-K's workspace, zeroed */
    if (ks.ws_bytes) {
        void *zero = calloc(1, (size_t)ks.ws_bytes);
        cr_assert_eq(gs_buffer_create(ctx, cl, (size_t)ks.ws_bytes, zero, &ws), GS_OK, "%s", gs_ctx_errmsg(ctx));
        free(zero);
    }
    cr_assert_eq(gs_dev_prog_launch(ctx, &prog, op, b, nb, ws, (size_t)ks.grid, (size_t)ks.block, NULL), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    const int64_t on = gs_op_buffer_elems(op, 2);
    const size_t ob = (size_t)gs_op_buffer_bytes(op, 2);
    void *raw = malloc(ob);
    cr_assert_eq(gs_buffer_read(ctx, b[2], raw, ob), GS_OK);
    gs_dtype_unpack(gs_op_buffer_dtype(op, 2), raw, y, on);
    free(raw);
    for (int t = 0; t < nb; t++) gs_buffer_destroy(b[t]);
    if (ws) gs_buffer_destroy(ws);
    gs_dev_prog_free(&prog);
    gs_kernel_src_free(&ks);
}

Test(mma, nonfinite_inputs_past_a_partial_reduce_tile, .timeout = 600) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = gs_test_open_dev(ctx);
    const gs_hw *hw = gs_hw_find_builtin("a100");
    int masked = 0, runs = 0;
    for (size_t ci = 0; ci < sizeof nf_cases / sizeof nf_cases[0]; ci++) {
        const nf_case *c = &nf_cases[ci];
        gs_op op;
        gs_etir e;
        gs_plan p = case_plan(ctx, hw, c->spec, c->cfg, &op, &e);
        /* the plan's mask: the input of a conv (its window, or its group's channels), never the filter or a gemm */
        const bool conv = op.kind == GS_OPK_CONV2D;
        cr_expect_eq(p.in[0].kmask != 0, conv, "%s: input kmask %#x", c->spec, p.in[0].kmask);
        cr_expect_eq(p.in[1].kmask, 0, "%s: filter / B kmask %#x", c->spec, p.in[1].kmask);
        masked += p.in[0].kmask != 0;
        const int64_t n0 = gs_op_buffer_elems(&op, 0), n1 = gs_op_buffer_elems(&op, 1), on = gs_op_buffer_elems(&op, 2);
        float *x0 = malloc((size_t)n0 * sizeof(float)), *x1 = malloc((size_t)n1 * sizeof(float));
        float *out0 = calloc((size_t)on, sizeof(float)), *y = malloc((size_t)on * sizeof(float));
        float *ref = malloc((size_t)on * sizeof(float));
        gs_pcg32 g;
        gs_pcg32_seed(&g, 13, ci);
        for (int64_t i = 0; i < n1; i++) x1[i] = (float)((int)gs_pcg32_bounded(&g, 3) - 1);
        for (int place = 0; place < 3; place++) {
            for (int64_t i = 0; i < n0; i++) x0[i] = (float)((int)gs_pcg32_bounded(&g, 5) - 2);
            /* away from the first elements, so that windows past r or s reach them from other outputs */
            const int64_t a = n0 / 3 + (int64_t)gs_pcg32_bounded(&g, (uint32_t)(n0 / 3)),
                          b = (a + 1 + (int64_t)gs_pcg32_bounded(&g, (uint32_t)(n0 / 2))) % n0;
            x0[a] = NAN;
            x0[b] = place == 1 ? -INFINITY : INFINITY;
            float *ins[3] = {x0, x1, out0};
            nf_run(ctx, cl, &op, &e, &p, ins, y);
            const float *rin[2] = {x0, x1};
            cr_assert_eq(gs_op_reference(ctx, &op, rin, NULL, ref), GS_OK, "%s", gs_ctx_errmsg(ctx));
            int64_t bad = 0, first = -1, nonfinite = 0;
            for (int64_t i = 0; i < on; i++) {
                const bool ok = isnan(ref[i]) ? isnan(y[i]) : y[i] == ref[i];
                nonfinite += !isfinite(ref[i]);
                if (!ok && first < 0) first = i;
                bad += !ok;
            }
            cr_expect_eq(bad, 0, "%s | %s (NaN at %lld, %sInf at %lld): %lld of %lld outputs differ, the first at %lld "
                         "(%g, reference %g)", c->spec, c->cfg, (long long)a, place == 1 ? "-" : "", (long long)b,
                         (long long)bad, (long long)on, (long long)first, first >= 0 ? y[first] : 0.0,
                         first >= 0 ? ref[first] : 0.0);
            /* the placements reach some outputs and leave most finite */
            cr_expect(nonfinite > 0 && nonfinite < on, "%s: %lld of %lld reference outputs non-finite", c->spec,
                      (long long)nonfinite, (long long)on);
            runs++;
        }
        free(x0);
        free(x1);
        free(out0);
        free(y);
        free(ref);
    }
    cr_expect_eq(masked, 5, "cases with a masked input");
    cr_expect_eq(runs, 18);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* verify --nonfinite sees that defect: the review's reproducer (the first
 * nf_case) passes gs_verify_plan_ex with NaN/Inf inputs under its plan, and
 * fails it -- an output NaN where the reference is finite -- under the same
 * plan without the mask (kmask cleared: the kernel before the fix). */
Test(mma, verify_nonfinite_sees_the_unmasked_partial_tile, .timeout = 600) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = gs_test_open_dev(ctx);
    const gs_hw *hw = gs_hw_find_builtin("a100");
    const nf_case *c = &nf_cases[0];
    gs_op op;
    gs_etir e;
    gs_plan p = case_plan(ctx, hw, c->spec, c->cfg, &op, &e), bare;
    cr_assert(p.in[0].kmask != 0);
    bare = p;
    bare.in[0].kmask = 0;
    const gs_verify_opts vo = {6};
    int caught = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        gs_diff d;
        cr_expect_eq(gs_verify_plan_ex(ctx, cl, &op, &e, &p, seed, &vo, &d), GS_OK, "seed %llu: %s",
                     (unsigned long long)seed, gs_ctx_errmsg(ctx));
        cr_expect(d.ref_nonfinite > 0, "seed %llu: no non-finite reference output", (unsigned long long)seed);
        gs_status s = gs_verify_plan_ex(ctx, cl, &op, &e, &bare, seed, &vo, &d);
        if (s == GS_ERR_MISMATCH) {
            caught++;
            cr_expect(d.nonfinite > 0 && d.class_where >= 0);
            cr_expect(strstr(gs_ctx_errmsg(ctx), "in another class") != NULL, "%s", gs_ctx_errmsg(ctx));
        } else
            cr_expect_eq(s, GS_OK, "%s", gs_ctx_errmsg(ctx));
    }
    cr_expect_eq(caught, 3, "the unmasked kernel failed %d of 3 seeds", caught);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* ---- tf32 by ldmatrix: PoCL ---------------------------------------------------------
 * The tf32 row reads an operand whose shared rows run along k (A row-major,
 * B with transB=1, a bgemm's, the 1x1 conv's, an NHWC conv's) with ldmatrix of 32-bit words
 * and rounds each word as an element read rounds it; one whose rows run
 * along m or n (transA=1, B row-major, NCHW's image) keeps element reads.
 * Each case's plan must read each operand as `a` and `b` say (4 / 2: the
 * ldmatrix count, 0: elements), pass the reference on PoCL, and, where an
 * operand reads by ldmatrix, give outputs bit for bit those of the same
 * plan with every fragment read element by element, on inputs of full f32
 * mantissas (the TF32 rounding matters): the emulated ldmatrix hands each
 * lane the words the element reads load. Awkward shapes: primes, 1, K off
 * the tile and off 16 bytes (the copies' scalar path), split-K, 1 to 3
 * stages, padded and XOR-swizzled rows. */
typedef struct tf32_case {
    const char *spec, *cfg;
    int a, b; /* the plan's ldsm per operand */
} tf32_case;

static const tf32_case tf32_cases[] = {
    {"gemm M=1 N=1 K=1 math=tf32", "bm=16,bn=8,bk=8,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=3", 4, 0},
    {"gemm M=37 N=23 K=29 math=tf32 transB=1", "bm=32,bn=32,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=3,stages=2", 4, 2},
    {"gemm M=131 N=67 K=1 math=tf32 transB=1", "bm=32,bn=32,bk=8,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=3", 4, 2},
    {"gemm M=97 N=56 K=88 math=tf32", "bm=32,bn=32,bk=32,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=3,stages=3", 4, 0},
    {"gemm M=97 N=56 K=88 math=tf32 transB=1", "bm=64,bn=32,bk=32,tm=4,tn=2,vm=1,vn=1,sa=1,sb=1,mma=3,stages=2", 4, 2},
    {"gemm M=53 N=41 K=131 math=tf32 transB=1 bias=1 relu=1",
     "bm=64,bn=32,bk=16,tm=4,tn=2,vm=1,vn=1,sa=1,sb=1,mma=3,stages=2,split=3", 4, 2},
    /* XOR-swizzled rows (reg copies of one element: no 16-byte pad reserved) */
    {"gemm M=29 N=19 K=37 math=tf32 transB=1", "bm=16,bn=16,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=3,split=2", 4, 2},
    {"gemm M=29 N=19 K=37 math=tf32", "bm=32,bn=16,bk=32,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=3", 4, 0},
    /* the fallback: rows along m (A) and n (B) */
    {"gemm M=29 N=19 K=37 math=tf32 transA=1", "bm=16,bn=16,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=3,stages=2", 0, 0},
    {"gemm M=29 N=19 K=37 math=tf32 transA=1 transB=1", "bm=16,bn=16,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=3,split=2",
     0, 2},
    {"bgemm B=3 M=37 N=29 K=45 math=tf32 transB=1",
     "bb=1,bm=32,bn=32,bk=16,tb=1,tm=2,tn=4,vb=1,vm=1,vn=1,sa=1,sb=1,mma=3,stages=2", 4, 2},
    {"bgemm B=2 M=19 N=33 K=23 math=tf32 alpha=0.5",
     "bb=1,bm=32,bn=32,bk=8,tb=1,tm=2,tn=2,vb=1,vm=1,vn=1,sa=1,sb=1,mma=3", 4, 0},
    /* an NHWC conv's input and filter, rows of 4 channels (c 8 a tile of 6 channels: the rest
     * zero-filled), the pixels' split over n, p, q */
    {"conv2d N=2 C=6 H=5 W=5 K=10 R=3 S=3 pad=1 layout=nhwc math=tf32",
     "bn=1,bk=16,bp=8,bq=8,bc=8,br=1,bs=1,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=3,stages=2", 4, 2},
    {"conv2d N=3 C=12 H=7 W=6 K=9 R=3 S=3 stride=2 pad=1 layout=nhwc math=tf32",
     "bn=1,bk=16,bp=8,bq=8,bc=8,br=1,bs=1,tn=1,tk=2,tp=2,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,mma=3", 4, 2},
};

/* Random f32 values with full mantissas in [-2, 2) for every buffer of op
 * but the output (zeroed). */
static void tf32_inputs(const gs_op *op, uint64_t seed, float *x[4]) {
    gs_pcg32 g;
    gs_pcg32_seed(&g, seed, 7);
    for (int t = 0; t < gs_op_num_buffers(op); t++) {
        const int64_t n = gs_op_buffer_elems(op, t);
        x[t] = calloc((size_t)n, sizeof(float));
        for (int64_t i = 0; t != 2 && i < n; i++) x[t][i] = (float)(4.0 * gs_pcg32_double(&g) - 2.0);
    }
}

/* p's outputs bit for bit those of p with every fragment read element by element. */
static void tf32_same_bits(gs_ctx *ctx, gs_device *cl, const gs_op *op, const gs_etir *e, const gs_plan *p,
                           uint64_t seed) {
    gs_plan q = *p;
    for (int t = 0; t < 2; t++) q.in[t].ldsm = q.in[t].ldsm_trans = 0;
    float *x[4] = {0};
    tf32_inputs(op, seed, x);
    const int64_t on = gs_op_buffer_elems(op, 2);
    float *y = malloc((size_t)on * sizeof(float)), *z = malloc((size_t)on * sizeof(float));
    nf_run(ctx, cl, op, e, p, x, y);
    nf_run(ctx, cl, op, e, &q, x, z);
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < on; i++)
        if (memcmp(&y[i], &z[i], sizeof(float))) {
            bad++;
            if (first < 0) first = i;
        }
    cr_expect_eq(bad, 0, "%s: %lld of %lld outputs differ from the element reads', the first at %lld (%a, %a)",
                 op->spec, (long long)bad, (long long)on, (long long)first, first >= 0 ? y[first] : 0.0,
                 first >= 0 ? z[first] : 0.0);
    for (int t = 0; t < 4; t++) free(x[t]);
    free(y);
    free(z);
}

Test(mma, pocl_tf32_ldmatrix, .timeout = 600) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = gs_test_open_dev(ctx);
    const gs_hw *hw = gs_hw_find_builtin("a100");
    int ldsm = 0, elem = 0, swz = 0, pad = 0, split = 0, staged = 0, same = 0;
    for (size_t i = 0; i < sizeof tf32_cases / sizeof tf32_cases[0]; i++) {
        const tf32_case *c = &tf32_cases[i];
        gs_op op;
        gs_etir e;
        gs_plan p = case_plan(ctx, hw, c->spec, c->cfg, &op, &e);
        cr_expect(p.in[0].ldsm == c->a && p.in[1].ldsm == c->b && !p.in[0].ldsm_trans && !p.in[1].ldsm_trans,
                  "%s | %s: A ldsm %d%s, B ldsm %d%s (want %d, %d)", c->spec, c->cfg, p.in[0].ldsm,
                  p.in[0].ldsm_trans ? "t" : "", p.in[1].ldsm, p.in[1].ldsm_trans ? "t" : "", c->a, c->b);
        for (int t = 0; t < 2; t++) {
            ldsm += p.in[t].ldsm > 0;
            elem += p.in[t].ldsm == 0;
            swz += p.in[t].ldsm && p.in[t].swizzle;
            pad += p.in[t].ldsm && p.in[t].pad;
        }
        split += p.splitk > 1;
        staged += p.stages > 2;
        verify_mma(ctx, cl, hw, &op, &e, &p, c->cfg);
        if (!p.in[0].ldsm && !p.in[1].ldsm) continue;
        tf32_same_bits(ctx, cl, &op, &e, &p, 100 + i);
        same++;
    }
    /* the 1x1 conv as a matmul: NHWC reads both by ldmatrix (pixels x c, k x c); NCHW's m is two
     * axes (n and the pixels) and the image's rows run along them, so A by elements, while the
     * filter's rows run along k (c), so B by ldmatrix */
    const struct {
        const char *spec, *cfg;
        int a, b;
    } cv[2] = {{"conv2d N=2 C=24 H=5 W=7 K=40 R=1 S=1 layout=nhwc math=tf32 bias=1 relu=1",
                "bm=32,bk=32,bc=16,tm=2,tk=4,vm=1,vk=1,si=1,sf=1,mma=3,stages=2", 4, 2},
               {"conv2d N=2 C=24 H=5 W=7 K=40 R=1 S=1 math=tf32 bias=1",
                "bn=1,bk=16,bx=32,bc=16,tn=1,tk=2,tx=2,vn=1,vk=1,vx=1,si=1,sf=1,mma=3", 0, 2}};
    for (int i = 0; i < 2; i++) {
        gs_op conv = parse(ctx, cv[i].spec), mm;
        cr_assert_eq(gs_op_conv1x1_as_matmul(ctx, &conv, &mm), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_etir e;
        cr_assert_eq(cfg(ctx, &mm, cv[i].cfg, &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert(gs_hw_check(hw, &mm, &e));
        gs_plan p;
        gs_plan_make(hw, &mm, &e, NULL, &p);
        cr_expect(p.in[0].ldsm == cv[i].a && p.in[1].ldsm == cv[i].b, "%s: ldsm %d, %d", cv[i].spec, p.in[0].ldsm,
                  p.in[1].ldsm);
        verify_mma(ctx, cl, hw, &mm, &e, &p, "1x1 conv as matmul");
        if (!p.in[0].ldsm && !p.in[1].ldsm) continue;
        tf32_same_bits(ctx, cl, &mm, &e, &p, 200 + (uint64_t)i);
        same++;
    }
    cr_expect(ldsm >= 14 && elem >= 6 && swz >= 2 && pad >= 4 && split >= 3 && staged >= 1 && same >= 11,
              "paths: %d ldmatrix, %d element, %d swizzled, %d padded ldmatrix operands, %d split, %d staged, "
              "%d bit-compared", ldsm, elem, swz, pad, split, staged, same);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* ---- NVRTC: the inline-PTX printer compiles, without spills ------------------------
 * Each row on its archs (f16, bf16, tf32 and the m16n8k8 bf16 row on
 * sm_80/86/89/90; the m16n8k8 f16 row on sm_75 too), each in its own input
 * type, a 4096-cubed gemm (all four transposes on the row's first arch, NN
 * on the others), at a 128 x 128 block of 64 x 32 warp tiles with three
 * stages. */
Test(mma, nvrtc_compiles_every_row_without_spills, .timeout = 600) {
    gs_ctx *ctx = gs_ctx_create();
    gs_test_need_nvrtc(ctx, "the mma printer's NVRTC compile");
    const int archs[] = {75, 80, 86, 89, 90};
    const char *hws[] = {"t4", "a100", "rtx3090", "rtx4090", "h100"};
    int compiled = 0, cases = 0, ran = 0;
    for (int row = 1; row <= gs_mma_count(); row++)
        for (int ai = 0; ai < 5; ai++) {
            if (!gs_mma_arch_ok(row, archs[ai])) continue;
            const gs_hw *hw = gs_hw_find_builtin(hws[ai]);
            cr_assert_not_null(hw);
            const gs_mma_row *r = gs_mma_get(row);
            const int ntr = archs[ai] == r->min_arch ? 4 : 1; /* transposes on the first arch */
            char ty[32]; /* the row's input type */
            if (r->math == GS_MATH_TF32) snprintf(ty, sizeof ty, "math=tf32");
            else snprintf(ty, sizeof ty, "dtype=%s", gs_dtype_name((gs_dtype)r->dtype_in));
            for (int tr = 0; tr < ntr; tr++) {
                if (!gs_test_case_runs(cases++, 3)) continue;
                ran++;
                char spec[160], c[160];
                snprintf(spec, sizeof spec, "gemm M=4096 N=4096 K=4096 transA=%d transB=%d %s", tr & 1, tr >> 1,
                         ty);
                snprintf(c, sizeof c, "bm=128,bn=128,bk=32,tm=8,tn=8,vm=1,vn=1,sa=1,sb=1,stages=%d,mma=%d",
                         archs[ai] >= 80 ? 3 : 2, row);
                gs_op op = parse(ctx, spec);
                gs_etir e;
                cr_assert_eq(cfg(ctx, &op, c, &e), GS_OK, "%s | %s: %s", spec, c, gs_ctx_errmsg(ctx));
                gs_kernel_src ks;
                cr_assert_eq(gs_lower_emit(ctx, hw, &op, &e, GS_DIALECT_CUDA, archs[ai], &ks), GS_OK, "%s",
                             gs_ctx_errmsg(ctx));
                gs_nvrtc_out nv;
                memset(&nv, 0, sizeof nv);
                gs_status s = gs_nvrtc_compile(ctx, ks.src, ks.name, archs[ai], false, true, &nv);
                cr_expect_eq(s, GS_OK, "%s on sm_%d (row %d): %s", spec, archs[ai], row, gs_ctx_errmsg(ctx));
                if (s == GS_OK) {
                    cr_expect(nv.stats.spill_store_bytes == 0 && nv.stats.spill_load_bytes == 0,
                              "%s on sm_%d: spills %lld/%lld", spec, archs[ai], (long long)nv.stats.spill_store_bytes,
                              (long long)nv.stats.spill_load_bytes);
                    compiled++;
                }
                gs_nvrtc_out_free(&nv);
                gs_kernel_src_free(&ks);
            }
        }
    cr_expect_eq(cases, 4 * (4 + 3) + (4 + 4), "cases");
    cr_expect_eq(compiled, ran, "kernels compiled: %d of %d", compiled, ran);
    gs_ctx_destroy(ctx);
}

/* The distinct k offsets of a lane's elements (the k masks' count, the
 * model's price of them): A and B of the k16 rows hold 2t, 2t+1, 2t+8,
 * 2t+9; tf32's t and t+4; m16n8k8's (f16 and bf16) 2t and 2t+1. */
Test(mma, distinct_k_of_a_lane) {
    static const struct {
        const char *row;
        int a, b;
    } want[] = {{"m16n8k16.f16", 4, 4}, {"m16n8k16.bf16", 4, 4}, {"m16n8k8.tf32", 2, 2}, {"m16n8k8.f16", 2, 2},
                {"m16n8k8.bf16", 2, 2}};
    int seen = 0;
    for (int idx = 1; idx <= gs_mma_count(); idx++)
        for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
            const gs_mma_row *r = gs_mma_get(idx);
            if (strcmp(r->name, want[w].row)) continue;
            cr_expect_eq(gs_mma_distinct_k(&r->a, 0), want[w].a, "%s A", r->name);
            cr_expect_eq(gs_mma_distinct_k(&r->b, 1), want[w].b, "%s B", r->name);
            seen++;
        }
    cr_expect_eq(seen, 5, "rows named");
}
