/* fuzz_etir.c — random ETIR action sequences (ir/etir.c gs_etir_apply) on
 * operators of every class with fuzzed extents, checking after every applied
 * action:
 *   - the state is well-formed (power-of-two tiles, thread tile divides the
 *     block tile, vthreads divide the thread tile, reduce axes have no thread
 *     tile, stages/raster/group/split in range, group within the reduce tile,
 *     split at most the reduce tiles);
 *   - the action changed what it says and nothing else (tile doubles one
 *     tile of the current level, ...), and levels only go down;
 *   - entering level 1 gives at most max_threads threads;
 *   - the block tiles cover every extent: blocks = prod ceil(E/T2) x split, and
 *     threads = prod (T2/T1) x lanes, accumulators = prod T1;
 *   - format/parse of the config form gives the state back, with its hash.
 * At the end the state is finished with cache and, when it passes the
 * memory check of a built-in profile, it fits the profile's limits and the
 * estimate is finite and positive. */
#include "fuzz_common.h"
#include "hwmodel/model/model.h"
#include "ir/ir.h"

#include <math.h>

static int64_t ext(const uint8_t *p) { return 1 + ((int64_t)p[0] | (int64_t)p[1] << 8) % 3000; }

static void build_spec(const uint8_t *p, char *spec, size_t n) {
    int64_t a = ext(p + 1), b = ext(p + 3), c = ext(p + 5), d = 1 + p[7] % 9;
    int64_t h = 1 + p[8] % 40, w = 1 + p[9] % 40, r = 1 + p[10] % 5, s = 1 + p[11] % 5;
    int st = 1 + p[12] % 3, pad = p[13] % 3, flags = p[14];
    switch (p[0] % 10) {
    case 0: snprintf(spec, n, "gemm M=%lld N=%lld K=%lld transA=%d transB=%d", (long long)a, (long long)b,
                     (long long)c, flags & 1, flags >> 1 & 1); break;
    case 1: snprintf(spec, n, "bgemm B=%lld M=%lld N=%lld K=%lld", (long long)d, (long long)a % 300 + 1,
                     (long long)b % 300 + 1, (long long)c % 300 + 1); break;
    case 2: snprintf(spec, n, "gemv M=%lld N=%lld transA=%d", (long long)a, (long long)b, flags & 1); break;
    case 3: snprintf(spec, n, "conv2d N=%lld C=%lld H=%lld W=%lld K=%lld R=%lld S=%lld stride=%d pad=%d layout=%s",
                     (long long)d, (long long)(a % 64 + 1), (long long)(h + r), (long long)(w + s),
                     (long long)(b % 64 + 1), (long long)r, (long long)s, st, pad, flags & 1 ? "nhwc" : "nchw");
        break;
    case 4: snprintf(spec, n, "dwconv2d N=%lld C=%lld H=%lld W=%lld R=%lld S=%lld stride=%d pad=%d",
                     (long long)d, (long long)(a % 128 + 1), (long long)(h + r), (long long)(w + s), (long long)r,
                     (long long)s, st, pad); break;
    case 5: snprintf(spec, n, "%s N=%lld C=%lld H=%lld W=%lld R=%lld S=%lld stride=%d",
                     flags & 1 ? "maxpool2d" : "avgpool2d", (long long)d, (long long)(a % 64 + 1),
                     (long long)(h + r), (long long)(w + s), (long long)r, (long long)s, st); break;
    case 6: snprintf(spec, n, "%s M=%lld K=%lld", flags % 3 == 0 ? "rowsum" : flags % 3 == 1 ? "rowmax" : "rowmean",
                     (long long)a, (long long)b); break;
    case 7: snprintf(spec, n, "%s M=%lld N=%lld bcast=%d", flags & 2 ? "mul" : "add", (long long)a, (long long)b,
                     flags & 1); break;
    case 8: snprintf(spec, n, "relu M=%lld N=%lld", (long long)a, (long long)b); break;
    default: snprintf(spec, n, "gemm M=%lld N=%lld K=%lld", (long long)(a % 16 + 1), (long long)(b % 16 + 1),
                      (long long)c); break;
    }
}

static int is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

static void check_state(const gs_op *op, const gs_etir *e, const char *spec) {
    FUZZ_CHECK(gs_etir_wellformed(op, e), "'%s': a state reached by actions is not well-formed", spec);
    int64_t blocks = 1, threads = 1, acc = 1;
    for (int d = 0; d < op->naxes; d++) {
        int64_t E = op->axes[d].extent, t2 = e->tile[d].block, t1 = e->tile[d].thread, v = e->V[d];
        FUZZ_CHECK(is_pow2(t2) && is_pow2(t1) && is_pow2(v), "'%s' axis %d: tiles %lld/%lld/v%lld", spec, d,
                   (long long)t2, (long long)t1, (long long)v);
        FUZZ_CHECK(t2 % t1 == 0 && t1 % v == 0, "'%s' axis %d: %lld/%lld/v%lld do not divide", spec, d,
                   (long long)t2, (long long)t1, (long long)v);
        FUZZ_CHECK(t2 <= gs_etir_max_tile(op, d) && t2 < 2 * E + 1, "'%s' axis %d: block tile %lld past extent %lld",
                   spec, d, (long long)t2, (long long)E);
        if (op->axes[d].kind != GS_AXIS_SPATIAL) {
            FUZZ_CHECK(t1 == 1 && v == 1, "'%s': reduce axis %d has a thread tile", spec, d);
            continue;
        }
        int64_t nb = (E + t2 - 1) / t2;
        FUZZ_CHECK(nb * t2 >= E && (nb - 1) * t2 < E, "'%s' axis %d: %lld blocks of %lld do not cover %lld", spec,
                   d, (long long)nb, (long long)t2, (long long)E);
        blocks *= nb;
        threads *= t2 / t1;
        acc *= t1;
        FUZZ_CHECK(gs_etir_threads_axis(e, d) == t2 / t1, "'%s' axis %d: threads", spec, d);
    }
    threads <<= e->lanes_log2;
    if (e->splitk > 1) blocks *= e->splitk; /* split-K: split blocks per output tile */
    FUZZ_CHECK(gs_etir_blocks(op, e) == blocks, "'%s': blocks %lld, expected %lld", spec,
               (long long)gs_etir_blocks(op, e), (long long)blocks);
    FUZZ_CHECK(gs_etir_threads(op, e) == threads, "'%s': threads %lld, expected %lld", spec,
               (long long)gs_etir_threads(op, e), (long long)threads);
    FUZZ_CHECK(gs_etir_acc_regs(op, e) == acc, "'%s': accumulators", spec);

    /* config form round trip (the config form describes a finished state) */
    gs_etir fin = *e;
    fin.level = 0;
    char cfg[512];
    gs_etir_format_config(op, &fin, cfg, sizeof cfg);
    gs_ctx *ctx = gs_ctx_create();
    gs_etir back;
    gs_status s = gs_etir_parse_config(ctx, op, cfg, &back);
    FUZZ_CHECK(s == GS_OK, "'%s': config '%s' of a reached state does not parse: %s", spec, cfg, gs_ctx_errmsg(ctx));
    gs_ctx_destroy(ctx);
    for (int d = 0; d < op->naxes; d++)
        FUZZ_CHECK(back.tile[d].block == fin.tile[d].block && back.tile[d].thread == fin.tile[d].thread && back.V[d] == fin.V[d],
                   "'%s': '%s' parses to another state (axis %d)", spec, cfg, d);
    FUZZ_CHECK(back.stages == fin.stages && back.raster == fin.raster && back.lanes_log2 == fin.lanes_log2 &&
                   back.splitk == fin.splitk && back.level == 0,
               "'%s': '%s' parses to another state", spec, cfg);
    FUZZ_CHECK(gs_etir_hash(&back) == gs_etir_hash(&fin), "'%s': hash of '%s' differs after parsing", spec, cfg);
}

/* The action changed what it names and nothing else. */
static void check_step(const gs_op *op, const gs_etir *e, gs_action a, const gs_etir *o, int max_threads,
                       const char *spec) {
    FUZZ_CHECK(o->level <= e->level, "'%s': level went up", spec);
    for (int d = 0; d < op->naxes; d++) {
        int moved = a.kind == GS_ACT_CACHE || ((a.kind == GS_ACT_TILE || a.kind == GS_ACT_INVTILE ||
                                                a.kind == GS_ACT_VTHREAD) && d == a.axis);
        if (!moved)
            FUZZ_CHECK(o->tile[d].block == e->tile[d].block && o->tile[d].thread == e->tile[d].thread && o->V[d] == e->V[d],
                       "'%s': action %d on axis %d moved axis %d", spec, (int)a.kind, a.axis, d);
        if (a.kind == GS_ACT_CACHE) FUZZ_CHECK(o->tile[d].block == e->tile[d].block, "'%s': cache moved a block tile", spec);
    }
    /* the whole-kernel choices move only by their own action */
    FUZZ_CHECK(o->stages == e->stages || a.kind == GS_ACT_STAGES, "'%s': action %d moved stages", spec, (int)a.kind);
    FUZZ_CHECK(o->raster == e->raster || a.kind == GS_ACT_RASTER, "'%s': action %d moved raster", spec, (int)a.kind);
    FUZZ_CHECK(o->lanes_log2 == e->lanes_log2 || a.kind == GS_ACT_LANES, "'%s': action %d moved group", spec, (int)a.kind);
    FUZZ_CHECK(o->splitk == e->splitk || a.kind == GS_ACT_SPLITK, "'%s': action %d moved split", spec, (int)a.kind);
    FUZZ_CHECK(o->mma == e->mma || a.kind == GS_ACT_MMA, "'%s': action %d moved mma", spec, (int)a.kind);
    int l = e->level, d = a.axis;
    switch (a.kind) {
    case GS_ACT_TILE:
    case GS_ACT_INVTILE: {
        int64_t want = a.kind == GS_ACT_TILE ? (int64_t)gs_tile_level(&e->tile[d], l) * 2 : gs_tile_level(&e->tile[d], l) / 2;
        FUZZ_CHECK(gs_tile_level(&o->tile[d], l) == want, "'%s': tile action on level %d axis %d: %d -> %d", spec, l, d, gs_tile_level(&e->tile[d], l),
                   gs_tile_level(&o->tile[d], l));
        FUZZ_CHECK(o->level == l, "'%s': a tile action changed the level", spec);
        break;
    }
    case GS_ACT_VTHREAD: FUZZ_CHECK(o->V[d] == a.value, "'%s': vthread", spec); break;
    case GS_ACT_STAGES: FUZZ_CHECK(o->stages == a.value, "'%s': stages", spec); break;
    case GS_ACT_RASTER: FUZZ_CHECK(o->raster == a.value, "'%s': raster", spec); break;
    case GS_ACT_LANES: FUZZ_CHECK(o->lanes_log2 == a.value, "'%s': group", spec); break;
    case GS_ACT_MMA: FUZZ_CHECK(o->mma == a.value && gs_mma_state_ok(op, o, a.value), "'%s': mma", spec); break;
    case GS_ACT_SPLITK:
        FUZZ_CHECK(o->splitk == a.value && gs_etir_splitk_tiles(op, o, NULL) >= a.value,
                   "'%s': split %d over %lld reduce tiles", spec, o->splitk, (long long)gs_etir_splitk_tiles(op, o, NULL));
        break;
    case GS_ACT_CACHE:
        FUZZ_CHECK(o->level == l - 1, "'%s': cache from level %d gave level %d", spec, l, o->level);
        if (l == 2)
            FUZZ_CHECK(gs_etir_threads(op, o) <= max_threads, "'%s': entered level 1 with %lld threads > %d", spec,
                       (long long)gs_etir_threads(op, o), max_threads);
        break;
    default: break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 17) return 0;
    char spec[512];
    build_spec(data, spec, sizeof spec);
    gs_ctx *ctx = gs_ctx_create();
    gs_op op;
    if (gs_op_parse_into(ctx, spec, &op) != GS_OK) { /* e.g. a window larger than its input */
        gs_ctx_destroy(ctx);
        return 0;
    }
    gs_ctx_destroy(ctx);
    int max_threads = 1 << (data[15] % 11); /* 1 .. 1024 */
    const gs_hw *hw = gs_hw_builtin(data[16] % gs_hw_builtin_count());
    data += 17;
    size -= 17;

    gs_etir e;
    gs_etir_init(&op, &e);
    check_state(&op, &e, spec);
    for (size_t i = 0; i + 1 < size && i < 2 * 400; i += 2) {
        gs_action a = {(gs_action_kind)(data[i] % (GS_ACT_COUNT_ + 1)), (int)(data[i + 1] % (op.naxes + 1)) - 1,
                       (int)(data[i + 1] >> 4) - 1};
        if (a.kind == GS_ACT_VTHREAD) a.value = 1 << (data[i + 1] >> 5);
        if (a.kind == GS_ACT_SPLITK) a.value = 1 + (data[i + 1] >> 4); /* 1 .. 16 */
        gs_etir o;
        if (!gs_etir_apply(&op, &e, a, max_threads, &o)) continue;
        FUZZ_CHECK(e.level != 0, "'%s': a finished state took an action", spec);
        check_step(&op, &e, a, &o, max_threads, spec);
        check_state(&op, &o, spec);
        e = o;
    }
    gs_action cache = {GS_ACT_CACHE, -1, 0};
    while (e.level > 0) {
        gs_etir o;
        FUZZ_CHECK(gs_etir_apply(&op, &e, cache, max_threads, &o), "'%s': cache refused at level %d", spec, e.level);
        e = o;
    }
    check_state(&op, &e, spec);
    if (gs_hw_check(hw, &op, &e)) {
        FUZZ_CHECK(gs_etir_threads(&op, &e) <= hw->max_threads_per_block, "'%s' on %s: %lld threads pass the check",
                   spec, hw->name, (long long)gs_etir_threads(&op, &e));
        FUZZ_CHECK(gs_etir_blocks(&op, &e) <= INT32_MAX, "'%s' on %s: %lld blocks pass the check", spec, hw->name,
                   (long long)gs_etir_blocks(&op, &e));
        gs_estimate est;
        gs_estimate_etir(hw, &op, &e, 0, &est);
        FUZZ_CHECK(isfinite(est.time_s) && est.time_s > 0, "'%s' on %s: estimate %g s", spec, hw->name, est.time_s);
        FUZZ_CHECK(est.blocks == gs_etir_blocks(&op, &e) && est.threads == gs_etir_threads(&op, &e),
                   "'%s' on %s: the estimate prices another launch", spec, hw->name);
    }
    return 0;
}
