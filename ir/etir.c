/* etir.c — ETIR states, the four actions, and footprint/traffic analysis from
 * the affine maps (interval arithmetic; no per-operator formulas). */
#include "ir/ir.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int32_t next_pow2(int64_t x) {
    if (x <= 1) return 1;
    if (x >= (1 << 30)) return 1 << 30;
    return (int32_t)(1u << (32 - __builtin_clz((uint32_t)(x - 1))));
}

int32_t gs_etir_max_tile(const gs_op *op, int d) { return next_pow2(op->axes[d].extent); }

/* ---- the knob table (ir.h) ------------------------------------------------------- */
static bool lanes_legal(const gs_op *op, const gs_etir *e, int lg) {
    int ga = gs_etir_lanes_axis(op);
    return lg == 0 || (ga >= 0 && e->tile[ga].block >= (1 << lg)); /* no more lanes than the reduce tile */
}

static bool splitk_legal(const gs_op *op, const gs_etir *e, int s) {
    if (s <= 1) return true;
    /* no more split blocks than tiles (a run may still be empty: ceil); the
     * tiles do not depend on the split */
    return gs_etir_splitk_axis(op) >= 0 && gs_etir_splitk_tiles(op, e, NULL) >= s;
}

/* the tensor-core row: its types, axes and tiles (ir/mma.h) */
static bool mma_legal(const gs_op *op, const gs_etir *e, int idx) { return gs_mma_state_ok(op, e, idx); }

/* The words the text form shows for the plan options (ir.h). */
static const char *const flag_scalar[] = {NULL, "scalar"}, *const flag_predicated[] = {NULL, "predicated"},
                         *const flag_no_async[] = {NULL, "noasync"}, *const flag_lb1[] = {NULL, "lb1"},
                         *const im2col_names[] = {NULL, "im2col", "box"};

/* One row per knob: name, its byte, off (init), the stored range, whether
 * it needs a reduce axis, how the forms show it, the text form, the config
 * key (and an alias), how the walk moves it, its action, its nesting in
 * the space, its legality. */
const gs_knob gs_knobs[GS_KNOB_COUNT] = {
    [GS_KNOB_STAGES] = {.name = "stages", .offset = offsetof(gs_etir, stages), .off = 1, .lo = 1, .hi = GS_MAX_STAGES,
                        .shown = GS_KNOB_LINEAR, .text = "st", .attach = -1, .key = "stages",
                        .moves = GS_KNOB_EVERY, .act = GS_ACT_STAGES, .space_nest = 2},
    [GS_KNOB_RASTER] = {.name = "raster", .offset = offsetof(gs_etir, raster), .off = 0, .lo = 0, .hi = GS_MAX_RASTER,
                        .shown = GS_KNOB_LOG2, .text = "r", .attach = -1, .key = "raster",
                        .moves = GS_KNOB_EVERY, .act = GS_ACT_RASTER, .space_nest = 3},
    [GS_KNOB_LANES] = {.name = "lanes", .offset = offsetof(gs_etir, lanes_log2), .off = 0, .lo = 0, .hi = GS_MAX_LANES,
                       .needs_reduce = 1, .shown = GS_KNOB_LOG2, .text = "g", .attach = -1, .key = "group",
                       .alias = "lanes", .moves = GS_KNOB_STEP_DOWN_UP, .act = GS_ACT_LANES, .space_nest = 0,
                       .legal = lanes_legal},
    [GS_KNOB_SPLITK] = {.name = "splitk", .offset = offsetof(gs_etir, splitk), .off = 1, .lo = 1, .hi = GS_MAX_SPLITK,
                        .needs_reduce = 1, .shown = GS_KNOB_LINEAR, .text = "sk", .attach = -1, .key = "split",
                        .alias = "splitk", .moves = GS_KNOB_DOUBLE_HALF, .act = GS_ACT_SPLITK, .space_nest = 1,
                        .legal = splitk_legal},
    /* the user's choice (gs_construct_opts.split_atomic), set on ranked
     * states: never walked nor enumerated; its text is sk's suffix "a" */
    [GS_KNOB_SPLITK_ATOMIC] = {.name = "splitk_atomic", .offset = offsetof(gs_etir, splitk_atomic), .off = 0, .lo = 0,
                               .hi = 1, .shown = GS_KNOB_LINEAR, .text = "a", .attach = GS_KNOB_SPLITK,
                               .key = "atomic", .moves = GS_KNOB_NOT_WALKED, .act = GS_ACT_COUNT_, .space_nest = -1},
    /* the plan options of the v1-style kernels (the user's: never walked nor
     * enumerated); the text form shows each as a word */
    [GS_KNOB_SCALAR] = {.name = "scalar", .offset = offsetof(gs_etir, plan_scalar), .off = 0, .lo = 0, .hi = 1,
                        .shown = GS_KNOB_LINEAR, .attach = -1, .key = "scalar", .names = flag_scalar,
                        .moves = GS_KNOB_NOT_WALKED, .act = GS_ACT_COUNT_, .space_nest = -1},
    [GS_KNOB_PREDICATED] = {.name = "predicated", .offset = offsetof(gs_etir, plan_predicated), .off = 0, .lo = 0,
                            .hi = 1, .shown = GS_KNOB_LINEAR, .attach = -1, .key = "predicated",
                            .names = flag_predicated, .moves = GS_KNOB_NOT_WALKED, .act = GS_ACT_COUNT_,
                            .space_nest = -1},
    [GS_KNOB_NO_ASYNC] = {.name = "no_async", .offset = offsetof(gs_etir, plan_no_async), .off = 0, .lo = 0, .hi = 1,
                          .shown = GS_KNOB_LINEAR, .attach = -1, .key = "noasync", .names = flag_no_async,
                          .moves = GS_KNOB_NOT_WALKED, .act = GS_ACT_COUNT_, .space_nest = -1},
    [GS_KNOB_LB1] = {.name = "lb1", .offset = offsetof(gs_etir, plan_lb1), .off = 0, .lo = 0, .hi = 1,
                     .shown = GS_KNOB_LINEAR, .attach = -1, .key = "lb1", .names = flag_lb1,
                     .moves = GS_KNOB_NOT_WALKED, .act = GS_ACT_COUNT_, .space_nest = -1},
    [GS_KNOB_IM2COL] = {.name = "im2col", .offset = offsetof(gs_etir, plan_im2col), .off = 0, .lo = 0, .hi = 2,
                        .shown = GS_KNOB_LINEAR, .attach = -1, .key = "im2col", .names = im2col_names,
                        .moves = GS_KNOB_NOT_WALKED, .act = GS_ACT_COUNT_, .space_nest = -1},
    /* the tensor-core row (ir/mma.h): walked like stages (every legal row;
     * the walk, the polish and the space skip the illegal ones, since its
     * legality does not grow with the value), innermost in the space */
    [GS_KNOB_MMA] = {.name = "mma", .offset = offsetof(gs_etir, mma), .off = 0, .lo = 0, .hi = GS_MMA_COUNT,
                     .shown = GS_KNOB_LINEAR, .text = "mma", .attach = -1, .key = "mma",
                     .moves = GS_KNOB_EVERY, .act = GS_ACT_MMA, .space_nest = 4, .legal = mma_legal},
};

int gs_knob_get(const gs_etir *e, gs_knob_id k) { return ((const uint8_t *)e)[gs_knobs[k].offset]; }

void gs_knob_set(gs_etir *e, gs_knob_id k, int stored) { ((uint8_t *)e)[gs_knobs[k].offset] = (uint8_t)stored; }

int gs_knob_of_action(gs_action_kind a) {
    for (int k = 0; k < GS_KNOB_COUNT; k++)
        if (gs_knobs[k].moves != GS_KNOB_NOT_WALKED && gs_knobs[k].act == a) return k;
    return -1;
}

bool gs_knob_ok(const gs_op *op, const gs_etir *e, gs_knob_id k, int stored) {
    const gs_knob *r = &gs_knobs[k];
    if (stored < r->lo || stored > r->hi) return false;
    if (stored != r->off && r->needs_reduce && gs_etir_splitk_axis(op) < 0) return false;
    return !r->legal || r->legal(op, e, stored);
}

long gs_knob_shown(gs_knob_id k, int stored) { return gs_knobs[k].shown == GS_KNOB_LOG2 ? 1L << stored : stored; }

void gs_etir_init(const gs_op *op, gs_etir *e) {
    memset(e, 0, sizeof *e);
    for (int d = 0; d < op->naxes; d++) {
        e->tile[d] = (gs_tile){1, 1, 1};
        e->V[d] = 1;
    }
    /* stage inputs in shared memory when there is reuse across a reduce
     * loop; an operator with no reduce axis reads each element once */
    bool has_reduce = false;
    for (int d = 0; d < op->naxes; d++) has_reduce |= op->axes[d].kind == GS_AXIS_REDUCE;
    for (int t = 0; t < op->ninputs; t++) e->staged[t] = has_reduce;
    for (int k = 0; k < GS_KNOB_COUNT; k++) gs_knob_set(e, k, gs_knobs[k].off);
    e->level = 2;
}

int64_t gs_etir_threads_axis(const gs_etir *e, int d) { return e->tile[d].block / e->tile[d].thread; }

int gs_etir_lanes_axis(const gs_op *op) {
    int r = -1;
    for (int d = 0; d < op->naxes; d++)
        if (op->axes[d].kind == GS_AXIS_REDUCE) r = d;
    return r;
}

int gs_etir_splitk_axis(const gs_op *op) {
    for (int d = 0; d < op->naxes; d++)
        if (op->axes[d].kind == GS_AXIS_REDUCE) return d;
    return -1;
}

int64_t gs_etir_splitk_tiles(const gs_op *op, const gs_etir *e, int64_t *per_block) {
    int sa = gs_etir_splitk_axis(op);
    int64_t all = sa < 0 ? 1 : (op->axes[sa].extent + e->tile[sa].block - 1) / e->tile[sa].block;
    int64_t s = e->splitk > 1 ? e->splitk : 1;
    if (per_block) *per_block = (all + s - 1) / s;
    return all;
}

int64_t gs_etir_threads(const gs_op *op, const gs_etir *e) {
    int64_t n = (int64_t)1 << (e->lanes_log2 <= GS_MAX_LANES ? e->lanes_log2 : 0);
    for (int d = 0; d < op->naxes; d++)
        if (op->axes[d].kind == GS_AXIS_SPATIAL) n *= gs_etir_threads_axis(e, d);
    return n;
}

int64_t gs_etir_blocks(const gs_op *op, const gs_etir *e) {
    return gs_etir_tile_blocks(op, e) * (e->splitk > 1 ? e->splitk : 1);
}

int64_t gs_etir_tile_blocks(const gs_op *op, const gs_etir *e) {
    int64_t n = 1;
    for (int d = 0; d < op->naxes; d++)
        if (op->axes[d].kind == GS_AXIS_SPATIAL) n *= (op->axes[d].extent + e->tile[d].block - 1) / e->tile[d].block;
    return n;
}

int64_t gs_etir_acc_regs(const gs_op *op, const gs_etir *e) {
    int64_t n = 1;
    for (int d = 0; d < op->naxes; d++)
        if (op->axes[d].kind == GS_AXIS_SPATIAL) n *= e->tile[d].thread;
    return n;
}

static bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

bool gs_etir_wellformed(const gs_op *op, const gs_etir *e) {
    if (e->level < 0 || e->level > 2) return false;
    /* With mma, the m, n and k block tiles may exceed their extents' next
     * power of two: a warp's whole instruction tiles (16 x 8, k 8 or 16)
     * must fit however small the extent (the copies zero-fill what lies
     * outside). The roles are asked of the operator once, and only then. */
    int8_t role[GS_MAX_AXES];
    int roles = -1; /* -1: not yet asked; 0: no roles; 1: role[] holds them */
    for (int d = 0; d < op->naxes; d++) {
        int32_t t2 = e->tile[d].block, t1 = e->tile[d].thread, v = e->V[d];
        /* powers of two: t1 <= t2 is t1 dividing t2, v <= t1 v dividing t1 */
        if (t2 < 1 || t1 < 1 || v < 1 || ((t2 & (t2 - 1)) | (t1 & (t1 - 1)) | (v & (v - 1))) || t1 > t2 || v > t1)
            return false;
        if (t2 > next_pow2(op->axes[d].extent)) {
            if (roles < 0) roles = e->mma && gs_mma_roles(op, role);
            if (!roles || role[d] == GS_MMA_ROLE_BATCH) return false;
        }
        if (op->axes[d].kind == GS_AXIS_REDUCE && (t1 != 1 || v != 1)) return false;
    }
    for (int t = 0; t < op->ninputs; t++)
        if (e->staged[t] > 1) return false;
    /* a knob at its off value is legal in every state (each row's off is in
     * its range and needs nothing: construct/shortcuts_price_what_the_plan_prices),
     * and most states have most knobs off */
    for (int k = 0; k < GS_KNOB_COUNT; k++) {
        int v = gs_knob_get(e, k);
        if (v != gs_knobs[k].off && !gs_knob_ok(op, e, k, v)) return false;
    }
    return true;
}

/* Entering level 1: smallest thread tiles with threads <= max_threads. The
 * axis with the most threads is split first (ties go to the outer axis, so
 * the innermost, coalescing axis keeps its threads longest). */
static void enter_level1(const gs_op *op, gs_etir *e, int max_threads) {
    for (int d = 0; d < op->naxes; d++) {
        e->tile[d].thread = 1;
        e->V[d] = 1;
    }
    while (gs_etir_threads(op, e) > max_threads) {
        int best = -1;
        int64_t bt = 1;
        for (int d = 0; d < op->naxes; d++) {
            if (op->axes[d].kind != GS_AXIS_SPATIAL) continue;
            int64_t t = gs_etir_threads_axis(e, d);
            if (t > bt) {
                bt = t;
                best = d;
            }
        }
        if (best < 0) break;
        e->tile[best].thread *= 2;
    }
    e->level = 1;
}

bool gs_etir_apply(const gs_op *op, const gs_etir *e, gs_action a, int max_threads, gs_etir *out) {
    *out = *e;
    int d = a.axis;
    int l = e->level;
    if (l == 0) return false; /* finished states have no out-edges */
    if ((a.kind == GS_ACT_TILE || a.kind == GS_ACT_INVTILE || a.kind == GS_ACT_VTHREAD) && (d < 0 || d >= op->naxes))
        return false;
    switch (a.kind) {
    case GS_ACT_TILE:
        if (l == 2) {
            if (e->tile[d].block > gs_etir_max_tile(op, d) / 2) return false; /* no int32 overflow at 2^30 */
            out->tile[d].block *= 2;
        } else {
            if (op->axes[d].kind != GS_AXIS_SPATIAL || e->tile[d].thread > e->tile[d].block / 2) return false;
            out->tile[d].thread *= 2;
        }
        return true;
    case GS_ACT_INVTILE:
        if (l == 2) {
            if (e->tile[d].block / 2 < e->tile[d].thread) return false;
            out->tile[d].block /= 2;
        } else {
            if (op->axes[d].kind != GS_AXIS_SPATIAL || e->tile[d].thread / 2 < e->V[d]) return false;
            out->tile[d].thread /= 2;
        }
        return true;
    case GS_ACT_VTHREAD:
        if (l != 1 || op->axes[d].kind != GS_AXIS_SPATIAL) return false;
        if (!is_pow2(a.value) || a.value > e->tile[d].thread || a.value == e->V[d]) return false;
        out->V[d] = a.value;
        return true;
    case GS_ACT_STAGES:
    case GS_ACT_RASTER:
    case GS_ACT_LANES:
    case GS_ACT_SPLITK:
    case GS_ACT_MMA: { /* a knob's row: at level 1, a legal value other than its own */
        int k = gs_knob_of_action(a.kind);
        if (l != 1 || k < 0 || a.value == gs_knob_get(e, k) || !gs_knob_ok(op, e, k, a.value)) return false;
        gs_knob_set(out, k, a.value);
        return true;
    }
    case GS_ACT_CACHE:
        if (l == 2)
            enter_level1(op, out, max_threads);
        else
            out->level = 0;
        return true;
    default:
        return false;
    }
}

/* ---- text forms ------------------------------------------------------------- */
void gs_etir_format(const gs_op *op, const gs_etir *e, char *buf, size_t n) {
    size_t off = 0;
    buf[0] = 0;
    for (int d = 0; d < op->naxes && off < n; d++) {
        if (op->axes[d].kind == GS_AXIS_SPATIAL)
            off += (size_t)snprintf(buf + off, n - off, "%s%s:%d/%d/v%d", d ? " " : "", op->axes[d].name,
                                    e->tile[d].block, e->tile[d].thread, e->V[d]);
        else
            off += (size_t)snprintf(buf + off, n - off, "%s%s:%d", d ? " " : "", op->axes[d].name, e->tile[d].block);
    }
    for (int t = 0; t < op->ninputs && off < n; t++)
        off += (size_t)snprintf(buf + off, n - off, "%s%s:%s", t ? " " : " | ", op->tensors[t].name,
                                e->staged[t] ? "smem" : "global");
    /* the knobs that are not off: " | st4 r8 g32 sk2a" (an attached row's
     * suffix right after its row's value) */
    const char *sep = " | ";
    bool printed[GS_KNOB_COUNT] = {0};
    for (int k = 0; k < GS_KNOB_COUNT && off < n; k++) {
        const gs_knob *r = &gs_knobs[k];
        int v = gs_knob_get(e, k);
        if (v == r->off) continue;
        if (r->attach >= 0) {
            if (printed[r->attach]) off += (size_t)snprintf(buf + off, n - off, "%s", r->text);
            continue;
        }
        if (r->names) off += (size_t)snprintf(buf + off, n - off, "%s%s", sep, r->names[v]);
        else off += (size_t)snprintf(buf + off, n - off, "%s%s%ld", sep, r->text, gs_knob_shown(k, v));
        printed[k] = true;
        sep = " ";
    }
}

static void lower(char *dst, const char *src, size_t n) {
    size_t i = 0;
    for (; src[i] && i + 1 < n; i++) dst[i] = (char)tolower((unsigned char)src[i]);
    dst[i] = 0;
}

void gs_etir_format_config(const gs_op *op, const gs_etir *e, char *buf, size_t n) {
    size_t off = 0;
    char nm[GS_NAME_LEN];
    buf[0] = 0;
    for (int d = 0; d < op->naxes && off < n; d++) {
        lower(nm, op->axes[d].name, sizeof nm);
        off += (size_t)snprintf(buf + off, n - off, "%sb%s=%d", off ? "," : "", nm, e->tile[d].block);
    }
    for (int d = 0; d < op->naxes && off < n; d++) {
        if (op->axes[d].kind != GS_AXIS_SPATIAL) continue;
        lower(nm, op->axes[d].name, sizeof nm);
        off += (size_t)snprintf(buf + off, n - off, ",t%s=%d", nm, e->tile[d].thread);
    }
    for (int d = 0; d < op->naxes && off < n; d++) {
        if (op->axes[d].kind != GS_AXIS_SPATIAL) continue;
        lower(nm, op->axes[d].name, sizeof nm);
        off += (size_t)snprintf(buf + off, n - off, ",v%s=%d", nm, e->V[d]);
    }
    for (int t = 0; t < op->ninputs && off < n; t++) {
        lower(nm, op->tensors[t].name, sizeof nm);
        off += (size_t)snprintf(buf + off, n - off, ",s%s=%d", nm, e->staged[t]);
    }
    for (int k = 0; k < GS_KNOB_COUNT && off < n; k++) { /* the knobs that are not off */
        int v = gs_knob_get(e, k);
        if (v != gs_knobs[k].off)
            off += (size_t)snprintf(buf + off, n - off, ",%s=%ld", gs_knobs[k].key, gs_knob_shown(k, v));
    }
}

/* ---- parsing the config form ---------------------------------------------- */
/* Each key at most once, like the spec grammar. */
typedef struct cfg_seen {
    bool tile[4][GS_MAX_AXES > GS_MAX_TENSORS ? GS_MAX_AXES : GS_MAX_TENSORS]; /* b, t, v per axis; s per input */
    bool kernel[GS_KNOB_COUNT]; /* per knob row (its key and alias alike) */
} cfg_seen;

/* log2 of v when v is a power of two 1..2^max, else -1. */
static int cfg_log2(long v, int max) {
    int lg = 0;
    while (lg <= max && (1L << lg) != v) lg++;
    return lg > max ? -1 : lg;
}

/* The knob row whose config key or alias tok is, or -1. */
static int cfg_knob(const char *tok) {
    for (int k = 0; k < GS_KNOB_COUNT; k++)
        if (!strcmp(tok, gs_knobs[k].key) || (gs_knobs[k].alias && !strcmp(tok, gs_knobs[k].alias))) return k;
    return -1;
}

/* A knob's key (stages=, raster=, group=, split=, atomic=, ...): its shown
 * value in the row's range; a value other than off needs a reduce axis
 * where the row says so (the rest of legality is gs_etir_wellformed's). */
static gs_status cfg_knob_key(gs_ctx *ctx, const gs_op *op, const char *tok, int k, long v, cfg_seen *seen,
                              gs_etir *e) {
    const gs_knob *r = &gs_knobs[k];
    if (seen->kernel[k]) return gs_err(ctx, GS_ERR_PARSE, "config: key '%s' given twice", tok);
    seen->kernel[k] = true;
    long stored = r->shown == GS_KNOB_LOG2 ? cfg_log2(v, r->hi) : v;
    if (stored < r->lo || stored > r->hi) {
        if (r->shown == GS_KNOB_LOG2)
            return gs_err(ctx, GS_ERR_PARSE, "config: %s must be a power of two %ld..%ld (got %ld)", tok,
                          gs_knob_shown(k, r->lo), gs_knob_shown(k, r->hi), v);
        if (r->lo == 0 && r->hi == 1) return gs_err(ctx, GS_ERR_PARSE, "config: %s must be 0 or 1 (got %ld)", tok, v);
        return gs_err(ctx, GS_ERR_PARSE, "config: %s must be %d..%d (got %ld)", tok, r->lo, r->hi, v);
    }
    if (r->needs_reduce && stored != r->off && gs_etir_splitk_axis(op) < 0)
        return gs_err(ctx, GS_ERR_PARSE, "config: %s needs a reduce axis (%s has none)", tok, op->spec);
    gs_knob_set(e, k, (int)stored);
    return GS_OK;
}

/* s<tensor>=0|1 (kind 's') or b/t/v<axis>=N: *found says whether name
 * matched an input or an axis. */
static gs_status cfg_tile_key(gs_ctx *ctx, const gs_op *op, const char *tok, long v, cfg_seen *seen, gs_etir *e,
                              bool *found) {
    char kind = tok[0], nm[GS_NAME_LEN];
    const char *name = tok + 1;
    if (kind == 's') {
        for (int t = 0; t < op->ninputs; t++) {
            lower(nm, op->tensors[t].name, sizeof nm);
            if (strcmp(nm, name)) continue;
            if (seen->tile[3][t]) return gs_err(ctx, GS_ERR_PARSE, "config: key '%s' given twice", tok);
            seen->tile[3][t] = true;
            if (v > 1) return gs_err(ctx, GS_ERR_PARSE, "config: %s must be 0 or 1", tok);
            e->staged[t] = (uint8_t)v;
            *found = true;
        }
        return GS_OK;
    }
    if (kind != 'b' && kind != 't' && kind != 'v') return GS_OK;
    for (int d = 0; d < op->naxes; d++) {
        lower(nm, op->axes[d].name, sizeof nm);
        if (strcmp(nm, name)) continue;
        if (kind != 'b' && op->axes[d].kind != GS_AXIS_SPATIAL)
            return gs_err(ctx, GS_ERR_PARSE, "config: '%s' names a reduce axis (only b%s applies)", tok, nm);
        int k = kind == 'b' ? 0 : kind == 't' ? 1 : 2;
        if (seen->tile[k][d]) return gs_err(ctx, GS_ERR_PARSE, "config: key '%s' given twice", tok);
        seen->tile[k][d] = true;
        if (v < 1) return gs_err(ctx, GS_ERR_PARSE, "config: %s must be >= 1", tok);
        if (kind == 'b') e->tile[d].block = (int32_t)v;
        else if (kind == 't') e->tile[d].thread = (int32_t)v;
        else e->V[d] = (int32_t)v;
        *found = true;
    }
    return GS_OK;
}

/* One "key=value" token (the '=' is cut here). */
static gs_status cfg_token(gs_ctx *ctx, const gs_op *op, char *tok, cfg_seen *seen, gs_etir *e) {
    char *eq = strchr(tok, '=');
    if (!eq || eq == tok + 1 || eq == tok) return gs_err(ctx, GS_ERR_PARSE, "config: expected key=value, got '%s'", tok);
    *eq = 0;
    char *end;
    errno = 0;
    long v = strtol(eq + 1, &end, 10);
    /* plain decimal only: no sign, no leading spaces */
    if (!isdigit((unsigned char)eq[1]) || *end || errno || v < 0 || v > (1 << 30))
        return gs_err(ctx, GS_ERR_PARSE, "config: bad value for '%s'", tok);
    /* knob keys first (an input named "tages" would lose to them) */
    int k = cfg_knob(tok);
    if (k >= 0) return cfg_knob_key(ctx, op, tok, k, v, seen, e);
    bool found = false;
    gs_status s = cfg_tile_key(ctx, op, tok, v, seen, e, &found);
    if (s == GS_OK && !found) s = gs_err(ctx, GS_ERR_PARSE, "config: unknown key '%s'", tok);
    return s;
}

gs_status gs_etir_parse_config(gs_ctx *ctx, const gs_op *op, const char *cfg, gs_etir *e) {
    gs_etir_init(op, e);
    e->level = 0;
    if (!cfg) return gs_err(ctx, GS_ERR_INVALID_ARG, "NULL config");
    char buf[512];
    size_t len = strlen(cfg);
    if (len >= sizeof buf) return gs_err(ctx, GS_ERR_PARSE, "config too long");
    memcpy(buf, cfg, len + 1);
    char *save = NULL;
    cfg_seen seen;
    memset(&seen, 0, sizeof seen);
    int nkeys = 0;
    for (char *tok = strtok_r(buf, ", \t\n", &save); tok; tok = strtok_r(NULL, ", \t\n", &save)) {
        gs_status s = cfg_token(ctx, op, tok, &seen, e);
        if (s != GS_OK) return s;
        nkeys++;
    }
    if (nkeys == 0) {
        char nm[GS_NAME_LEN] = "";
        if (op->naxes > 0) lower(nm, op->axes[0].name, sizeof nm);
        return gs_err(ctx, GS_ERR_PARSE, "config: empty (give at least one key, such as b%s=...)", nm);
    }
    if (e->mma && !gs_mma_state_ok(op, e, e->mma)) {
        char f[256];
        gs_etir_format(op, e, f, sizeof f);
        const gs_mma_row *r = gs_mma_get(e->mma);
        int8_t role[GS_MAX_AXES];
        if (!gs_mma_type_ok(op, e->mma))
            return gs_err(ctx, GS_ERR_PARSE, "config: mma=%d (%s) takes %s inputs%s; the operator's are %s%s", e->mma,
                          r->name, gs_dtype_name((gs_dtype)r->dtype_in), r->math == GS_MATH_TF32 ? " with math=tf32" : "",
                          gs_dtype_name((gs_dtype)op->dtype_in), op->math == GS_MATH_TF32 ? " with math=tf32" : "");
        if (!gs_mma_roles(op, role))
            return gs_err(ctx, GS_ERR_PARSE, "config: mma needs a two-input multiply-accumulate whose axes are m "
                                             "(input 0 and the output), n (input 1 and the output), k (reduce) or a "
                                             "batch (all three), with some m, n and k; %s is not", op->spec);
        return gs_err(ctx, GS_ERR_PARSE,
                      "config: mma=%d (%s) needs even thread tiles on m and n (products over their axes), threads "
                      "along m a multiple of 8 and along n of 4, no vthreads, batch thread tiles 1, a k tile (product "
                      "over the reduce axes) that is a multiple of %d, both inputs staged and no group (got %s)",
                      e->mma, r->name, r->k, f);
    }
    if (!gs_etir_wellformed(op, e)) {
        char f[256];
        gs_etir_format(op, e, f, sizeof f);
        return gs_err(ctx, GS_ERR_PARSE,
                      "config: tiles must be powers of two with thread tile | block tile and vthreads | thread "
                      "tile, block tile <= next power of two of the extent, group <= the last reduce axis' block tile, "
                      "split <= the first reduce axis' tiles (got %s)",
                      f);
    }
    return GS_OK;
}

/* Word-wise mix (the walk hashes states millions of times; byte-wise FNV
 * was a fifth of construction time). Only used in memory, never stored. */
uint64_t gs_etir_hash(const gs_etir *e) {
    _Static_assert(sizeof(gs_etir) % 8 == 0, "gs_etir must be a whole number of words");
    uint64_t w[sizeof(gs_etir) / 8], h = 0x9e3779b97f4a7c15ull;
    memcpy(w, e, sizeof w);
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        h ^= w[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
    }
    return h;
}

/* ---- footprints ----------------------------------------------------------------
 * Over a box of tile extents per axis, index dim d spans an interval of length
 * sum_a |c_a| * (tile_a - 1) + 1. That is exact for one axis per dim and a
 * bounding box otherwise (a conv's p*stride + r*dilation), capped at the shape. */
int64_t gs_footprint_dim(const gs_tensor *t, int dim, const int64_t *tile) {
    int64_t len = 1;
    for (int a = 0; a < GS_MAX_AXES; a++) {
        int64_t c = t->idx[dim].coeff[a];
        if (c) len += (c < 0 ? -c : c) * (tile[a] - 1);
    }
    return len < t->shape[dim] ? len : t->shape[dim];
}

int64_t gs_footprint(const gs_tensor *t, const int64_t *tile) {
    int64_t f = 1;
    for (int d = 0; d < t->ndim; d++) f *= gs_footprint_dim(t, d, tile);
    return f;
}

void gs_etir_box(const gs_op *op, const gs_etir *e, int level, int64_t *box) {
    for (int a = 0; a < GS_MAX_AXES; a++) box[a] = 1;
    for (int a = 0; a < op->naxes; a++) {
        if (level >= 2) box[a] = e->tile[a].block;
        else if (op->axes[a].kind == GS_AXIS_SPATIAL) box[a] = e->tile[a].thread;
        else box[a] = 1;
        if (box[a] > op->axes[a].extent) box[a] = op->axes[a].extent;
    }
}

double gs_traffic(const gs_op *op, const int64_t *box) {
    /* every tile of the iteration space loads each input's footprint once */
    double ntiles = 1;
    for (int a = 0; a < op->naxes; a++)
        ntiles *= (double)((op->axes[a].extent + box[a] - 1) / box[a]);
    double q = 0;
    for (int t = 0; t < op->ninputs; t++) q += ntiles * (double)gs_footprint(&op->tensors[t], box);
    return q + (double)gs_tensor_elems(gs_op_out(op));
}

double gs_footprint_total(const gs_op *op, const int64_t *box) {
    double f = 0;
    for (int t = 0; t <= op->ninputs; t++) f += (double)gs_footprint(&op->tensors[t], box);
    return f;
}

/* Shared-memory layout of a staged input: its level-2 footprint box, row-major
 * in the tensor's dim order. The innermost extent is padded to an odd number
 * of words when it is even, so that walking the outer dim steps across banks
 * (the classic "+1 column" skew). Returns the padded element count. */
int64_t gs_stage_layout(const gs_op *op, const gs_etir *e, int t, int64_t *dims, int64_t *row_pitch) {
    /* uncapped block tiles: every thread's local offset must have a slot */
    int64_t box[GS_MAX_AXES];
    for (int a = 0; a < GS_MAX_AXES; a++) box[a] = a < op->naxes ? e->tile[a].block : 1;
    const gs_tensor *ts = &op->tensors[t];
    int64_t n = 1;
    /* Sizes saturate at GS_STAGE_SAT per dim and in total: far beyond any
     * shared memory, so a saturated layout always fails the check, while the
     * products below (and the strides the bank model builds from dims[])
     * stay within int64 even for huge strides, dilations and tiles. */
    for (int d = 0; d < ts->ndim; d++) {
        int64_t len = 1;
        for (int a = 0; a < op->naxes; a++) {
            int64_t c = ts->idx[d].coeff[a], term;
            if (!c) continue;
            if (c == INT64_MIN || __builtin_mul_overflow(c < 0 ? -c : c, box[a] - 1, &term) ||
                __builtin_add_overflow(len, term, &len) || len > GS_STAGE_SAT)
                len = GS_STAGE_SAT;
        }
        dims[d] = len;
    }
    int64_t last = dims[ts->ndim - 1];
    int64_t pitch = (ts->ndim > 1 && last > 1 && last % 2 == 0) ? last + 1 : last;
    for (int d = 0; d < ts->ndim - 1; d++) {
        n *= dims[d];
        if (n > GS_STAGE_SAT) n = GS_STAGE_SAT;
    }
    *row_pitch = pitch;
    n *= pitch;
    return n > GS_STAGE_SAT ? GS_STAGE_SAT : n;
}
