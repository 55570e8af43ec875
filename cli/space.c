/* space.c — `gensor space`: list the configuration space of an operator.
 *
 *   gensor space SPEC [--hw NAME|FILE] [--format text|json] [--limit N | --sample N [--seed S]] [--max-ms MS]
 *
 * The space is the one the exhaustive strategy ranks (gs_space_enumerate):
 * power-of-two block tiles, thread tiles, vthreads, stages, raster and reduce
 * split, every state passing gs_hw_check. Each is listed, in the enumeration's
 * deterministic order, with its config string and the model's predicted time.
 * --sample N lists N distinct random states instead (gs_space_draw, the random
 * strategy's draw), in enumeration order, for spaces too large to list.
 * External tuners (experiments/compare_tuners.py) search over this list. JSON
 * is written as it goes, so memory stays small for long listings. */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPACE_DEFAULT_LIMIT 100000L
#define SPACE_MAX_LIMIT 20000000L
#define SPACE_MAX_SAMPLE 1000000L

static const char space_help[] =
    "usage: gensor space SPEC [options]\n"
    "\n"
    "List the valid configurations of an operator: the aligned space the exhaustive strategy\n"
    "enumerates (power-of-two block tiles, thread tiles, vthreads, stages, raster, reduce split),\n"
    "each passing the profile's limits, with its config string and predicted time.\n"
    "\n"
    "  --hw NAME|FILE       hardware profile: built-in name (gensor hw list) or JSON file [rtx4090]\n"
    "  --format text|json   output format [text]\n"
    "  --limit N            list at most N configurations, in enumeration order; the output says\n"
    "                       when the space was truncated [100000]\n"
    "  --sample N           list N distinct random configurations (the random strategy's draw) instead,\n"
    "                       sorted in enumeration order; for spaces too large to list\n"
    "  --seed S             PCG32 seed of --sample [1]\n"
    "  --max-ms MS          stop listing after MS milliseconds (0: no limit); the output says when\n"
    "                       the budget cut the listing short [10000]\n";

typedef struct space_acc {
    const gs_hw *hw;
    const gs_op *op;
    gs_wf_memo *wf;
    long limit;
    long n;
    bool truncated; /* more states exist than were listed */
    bool budget;    /* the --max-ms budget cut the listing short */
    bool json;
} space_acc;

static void space_print(space_acc *a, const gs_etir *e) {
    char cfg[256];
    gs_etir_format_config(a->op, e, cfg, sizeof cfg);
    gs_estimate est;
    gs_estimate_etir_memo(a->hw, a->op, e, 0, a->wf, &est);
    /* config strings are [a-z0-9=,]: nothing to escape */
    if (a->json) {
        /* split-K's workspace (its kernel's trailing argument), so a harness can size one for the space */
        int64_t ws = 0;
        if (e->splitk > 1) {
            gs_plan p;
            gs_plan_make(a->hw, a->op, e, NULL, &p);
            ws = gs_plan_workspace_bytes(a->op, e, &p);
        }
        printf("%s\n  {\"config\": \"%s\", \"predicted_s\": %.9g, \"grid\": %lld, \"block\": %lld, "
               "\"workspace_bytes\": %lld}",
               a->n ? "," : "", cfg, est.time_s, (long long)est.blocks, (long long)est.threads, (long long)ws);
    } else
        printf("%8ld  %12.6f  %8lld %6lld  %s\n", a->n, est.time_s * 1e3, (long long)est.blocks,
               (long long)est.threads, cfg);
    a->n++;
}

static bool space_visit(const gs_etir *e, void *user) {
    space_acc *a = user;
    if (a->n >= a->limit) { /* one more state exists: the listing is truncated */
        a->truncated = true;
        return false;
    }
    space_print(a, e);
    return true;
}

/* Enumeration order (gs_space_enumerate's odometers): block tiles with axis 0
 * most significant, then thread tiles, vthreads, then the knobs (gs_knobs' space_nest). */
static const gs_op *sort_op;
static int enum_cmp(const void *pa, const void *pb) {
    const gs_etir *a = pa, *b = pb;
    for (int lvl = 2; lvl >= 0; lvl--)
        for (int d = 0; d < sort_op->naxes; d++) {
            int32_t x = lvl == 0 ? a->V[d] : gs_tile_level(&a->tile[d], lvl), y = lvl == 0 ? b->V[d] : gs_tile_level(&b->tile[d], lvl);
            if (x != y) return x < y ? -1 : 1;
        }
    for (int nest = 0; nest < GS_KNOB_COUNT; nest++) /* then the knobs, in the enumeration's nesting */
        for (int k = 0; k < GS_KNOB_COUNT; k++) {
            int x = gs_knob_get(a, k), y = gs_knob_get(b, k);
            if (gs_knobs[k].space_nest == nest && x != y) return x < y ? -1 : 1;
        }
    return 0;
}

/* N distinct valid draws (at most 1000 N draws, within max_ms milliseconds
 * when it is > 0: *budget says when the time ran out); returns the count. */
static long space_sample(const gs_hw *hw, const gs_op *op, long n, uint64_t seed, double max_ms, gs_etir *out,
                         int64_t *draws, bool *budget) {
    double deadline = max_ms > 0 ? gs_now_s() + max_ms * 1e-3 : 0;
    int64_t kcap = 64;
    while (kcap < 4 * n) kcap *= 2;
    uint64_t *keys = calloc((size_t)kcap, sizeof *keys);
    if (!keys) return -1;
    gs_pcg32 rng;
    gs_pcg32_seed(&rng, seed, 0x7370616365ull);
    long got = 0;
    int64_t d = 0;
    for (; got < n && d < 1000 * (int64_t)n; d++) {
        if (deadline > 0 && (d & 1023) == 1023 && gs_now_s() > deadline) {
            *budget = true;
            break;
        }
        gs_etir e;
        if (!gs_space_draw(hw, op, &rng, &e)) continue;
        uint64_t h = gs_etir_hash(&e) | 1u;
        int64_t i = (int64_t)(h & (uint64_t)(kcap - 1));
        while (keys[i] && keys[i] != h) i = (i + 1) & (kcap - 1);
        if (keys[i]) continue;
        keys[i] = h;
        out[got++] = e;
    }
    free(keys);
    *draws = d;
    sort_op = op;
    qsort(out, (size_t)got, sizeof *out, enum_cmp);
    return got;
}

typedef struct space_opts {
    const char *hwname, *format, *spec;
    long limit, sample;
    double max_ms;
    uint64_t seed;
    bool limit_set, seed_set;
} space_opts;

static const struct option space_lo[] = {
    GS_CLI_OPT_HW,   GS_CLI_OPT_FORMAT, {"limit", required_argument, 0, 'l'}, {"sample", required_argument, 0, 'n'},
    GS_CLI_OPT_SEED, GS_CLI_OPT_MAX_MS, GS_CLI_OPT_HELP,   GS_CLI_OPT_END,
};
static const gs_cli_cmd space_cmd = {"space", space_help, space_lo, NULL, NULL, NULL};

/* One option (gs_cli_opt_fn). */
static int space_opt(int c, void *opts) {
    space_opts *o = opts;
    switch (c) {
    case 'w': o->hwname = optarg; break;
    case 'f': return gs_cli_format_opt("space", optarg, false, &o->format) ? 2 : -1;
    case 'l':
        if (!gs_cli_parse_long(optarg, 1, SPACE_MAX_LIMIT, &o->limit))
            return gs_cli_usage_error("space", "--limit expects an integer in [1, 20000000], got '%s'", optarg);
        o->limit_set = true;
        break;
    case 'n':
        if (!gs_cli_parse_long(optarg, 1, SPACE_MAX_SAMPLE, &o->sample))
            return gs_cli_usage_error("space", "--sample expects an integer in [1, 1000000], got '%s'", optarg);
        break;
    case 'X':
        if (!gs_cli_parse_double(optarg, 0, 1e9, &o->max_ms))
            return gs_cli_usage_error("space", "--max-ms expects a number of milliseconds in [0, 1e9], got '%s'", optarg);
        break;
    case 's': {
        char *end;
        errno = 0;
        long long v = strtoll(optarg, &end, 10);
        if (!*optarg || *end || errno || v < 0)
            return gs_cli_usage_error("space", "--seed expects a non-negative integer, got '%s'", optarg);
        o->seed = (uint64_t)v;
        o->seed_set = true;
        break;
    }
    }
    return -1;
}

/* The options and the SPEC operand: -1 to go on, else an exit code. */
static int space_parse_opts(int argc, char **argv, void *opts) {
    space_opts *o = opts;
    *o = (space_opts){
        .hwname = "rtx4090", .format = "text", .limit = SPACE_DEFAULT_LIMIT, .max_ms = GS_CLI_EXHAUSTIVE_MS, .seed = 1};
    int rc = gs_cli_getopt(&space_cmd, argc, argv, space_opt, o);
    if (rc >= 0) return rc;
    if (o->sample && o->limit_set) return gs_cli_usage_error("space", "give --limit or --sample, not both%s", "");
    if (o->seed_set && !o->sample) return gs_cli_usage_error("space", "--seed needs --sample N%s", "");
    if (!strcmp(o->hwname, "auto"))
        return gs_cli_usage_error("space", "--hw auto is not supported here: give a profile name or JSON file%s", "");
    return gs_cli_operand(&space_cmd, argc, argv, &o->spec);
}

/* The listing's head: the JSON object's opening, or the op/hw lines and
 * the column titles. */
static void space_head(const space_acc *a) {
    if (a->json) {
        char *jop = json_dumps(json_string(a->op->spec), JSON_ENCODE_ANY),
             *jhw = json_dumps(json_string(a->hw->name), JSON_ENCODE_ANY);
        printf("{\"op\": %s, \"hw\": %s, \"configs\": [", jop ? jop : "\"\"", jhw ? jhw : "\"\"");
        free(jop);
        free(jhw);
    } else {
        gs_cli_print_op_hw(a->op, a->hw);
        printf("%8s  %12s  %8s %6s  %s\n", "index", "predicted_ms", "grid", "block", "config");
    }
}

/* The listing's tail: the count, and whether it is all of the space. */
static void space_tail(const space_acc *a, const space_opts *o, int64_t draws) {
    if (a->json) {
        printf("\n], \"count\": %ld, \"truncated\": %s", a->n, a->truncated || a->budget ? "true" : "false");
        if (a->budget) printf(", \"budget_ms\": %.17g", o->max_ms);
        if (o->sample)
            printf(", \"sample\": {\"requested\": %ld, \"seed\": %llu, \"draws\": %lld}", o->sample,
                   (unsigned long long)o->seed, (long long)draws);
        printf("}\n");
    } else if (o->sample) {
        printf("space     %ld distinct random configurations of %ld requested (%lld draws, seed %llu), in "
               "enumeration order; a SAMPLE, not the whole space\n",
               a->n, o->sample, (long long)draws, (unsigned long long)o->seed);
    } else {
        printf("space     %ld configurations%s\n", a->n,
               a->truncated ? " listed; TRUNCATED at --limit, the space has more"
               : a->budget  ? " listed; TRUNCATED at the --max-ms time budget, the space may have more"
                            : " (the whole space)");
    }
}

/* The listing: the operator and the profile, then the whole space (or a
 * sample of it) between its head and its tail. */
static int space_run(gs_ctx *ctx, const void *opts) {
    const space_opts *o = opts;
    gs_op *op = NULL;
    gs_hw *hw = NULL;
    int rc = 0;
    gs_status s = gs_cli_load(ctx, o->spec, o->hwname, &op, &hw);
    gs_wf_memo *wf = s == GS_OK ? calloc(1, sizeof *wf) : NULL;
    if (s == GS_OK && !wf) s = gs_err(ctx, GS_ERR_NOMEM, "out of memory");
    if (s != GS_OK) {
        rc = gs_cli_fail(ctx, s);
        goto out;
    }
    space_acc a = {hw, op, wf, o->limit, 0, false, false, !strcmp(o->format, "json")};
    /* --sample: draw first, so that running out of memory prints nothing */
    gs_etir *drawn = NULL;
    long ndrawn = 0;
    int64_t draws = 0;
    if (o->sample) {
        drawn = malloc((size_t)o->sample * sizeof *drawn);
        ndrawn = drawn ? space_sample(hw, op, o->sample, o->seed, o->max_ms, drawn, &draws, &a.budget) : -1;
        if (ndrawn < 0) {
            rc = gs_cli_fail(ctx, gs_err(ctx, GS_ERR_NOMEM, "out of memory for a sample of %ld", o->sample));
            free(drawn);
            goto out;
        }
    }
    space_head(&a);
    if (o->sample) {
        for (long i = 0; i < ndrawn; i++) space_print(&a, &drawn[i]);
        a.truncated = true; /* a sample never claims to be the whole space */
    } else {
        bool stopped = false;
        gs_space_enumerate(hw, op, 0, o->max_ms, space_visit, &a, &stopped);
        a.budget = stopped && !a.truncated;
    }
    free(drawn);
    space_tail(&a, o, draws);
    if (a.n == 0)
        fprintf(stderr, "gensor: note: %s has no valid configuration within %s's limits\n", op->spec, hw->name);
out:
    free(wf);
    gs_hw_destroy(hw);
    gs_op_destroy(op);
    return rc;
}

const gs_cli_sub gs_cli_space = {"space", sizeof(space_opts), space_parse_opts, space_run};
