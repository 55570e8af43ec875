/* space.c — `gensor space`: list the configuration space of an operator.
 *
 *   gensor space SPEC [--hw NAME|FILE] [--format text|json] [--limit N]
 *
 * The space is the one the exhaustive strategy ranks (gs_space_enumerate):
 * power-of-two block tiles, thread tiles, vthreads, stages, raster and reduce
 * split, every state passing gs_hw_check. Each is listed, in the enumeration's
 * deterministic order, with its config string and the model's predicted time.
 * External tuners (experiments/compare_tuners.py) search over this list. */
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

static const char *space_help =
    "usage: gensor space SPEC [options]\n"
    "\n"
    "List the valid configurations of an operator: the aligned space the exhaustive strategy\n"
    "enumerates (power-of-two block tiles, thread tiles, vthreads, stages, raster, reduce split),\n"
    "each passing the profile's limits, with its config string and predicted time.\n"
    "\n"
    "  --hw NAME|FILE       hardware profile: built-in name (gensor hw list) or JSON file [rtx4090]\n"
    "  --format text|json   output format [text]\n"
    "  --limit N            list at most N configurations, in enumeration order; the output says\n"
    "                       when the space was truncated [100000]\n";

typedef struct space_acc {
    const gs_hw *hw;
    const gs_op *op;
    gs_wf_memo *wf;
    long limit;
    long n;
    bool truncated;
    bool json;
    json_t *arr;
} space_acc;

static bool space_visit(const gs_etir *e, void *user) {
    space_acc *a = user;
    if (a->n >= a->limit) { /* one more state exists: the listing is truncated */
        a->truncated = true;
        return false;
    }
    char cfg[256];
    gs_etir_format_config(a->op, e, cfg, sizeof cfg);
    gs_estimate est;
    gs_estimate_etir_memo(a->hw, a->op, e, 0, a->wf, &est);
    if (a->json)
        json_array_append_new(a->arr, json_pack("{s:s, s:f, s:I, s:I}", "config", cfg, "predicted_s", est.time_s, "grid",
                                                (json_int_t)est.blocks, "block", (json_int_t)est.threads));
    else
        printf("%8ld  %12.6f  %8lld %6lld  %s\n", a->n, est.time_s * 1e3, (long long)est.blocks,
               (long long)est.threads, cfg);
    a->n++;
    return true;
}

int gs_cli_space(int argc, char **argv) {
    const char *hwname = "rtx4090", *format = "text";
    long limit = SPACE_DEFAULT_LIMIT;
    static const struct option lo[] = {
        {"hw", required_argument, 0, 'w'},
        {"format", required_argument, 0, 'f'},
        {"limit", required_argument, 0, 'l'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c) {
        case 'w': hwname = optarg; break;
        case 'f':
            if (strcmp(optarg, "text") && strcmp(optarg, "json"))
                return gs_cli_usage_error("space", "unknown --format '%s' (text, json)", optarg);
            format = optarg;
            break;
        case 'l': {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || errno || v < 1 || v > SPACE_MAX_LIMIT)
                return gs_cli_usage_error("space", "--limit expects an integer in [1, 20000000], got '%s'", optarg);
            limit = v;
            break;
        }
        case 'h': fputs(space_help, stdout); return 0;
        case ':': return gs_cli_usage_error("space", "option '%s' needs a value", argv[optind - 1]);
        default: return gs_cli_usage_error("space", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!strcmp(hwname, "auto"))
        return gs_cli_usage_error("space", "--hw auto is not supported here: give a profile name or JSON file%s", "");
    if (optind >= argc) return gs_cli_usage_error("space", "missing the operator SPEC%s", "");
    if (optind + 1 < argc)
        return gs_cli_usage_error("space", "unexpected argument '%s' (quote the SPEC)", argv[optind + 1]);
    gs_ctx *ctx = gs_ctx_create();
    if (!ctx) return 1;
    gs_op *op = NULL;
    gs_hw *hw = NULL;
    int rc = 0;
    gs_status s = gs_op_parse(ctx, argv[optind], &op);
    if (s == GS_OK) s = gs_hw_load(ctx, hwname, &hw);
    gs_wf_memo *wf = s == GS_OK ? calloc(1, sizeof *wf) : NULL;
    if (s == GS_OK && !wf) s = gs_err(ctx, GS_ERR_NOMEM, "out of memory");
    if (s != GS_OK) {
        rc = gs_cli_fail(ctx, s);
        goto out;
    }
    space_acc a = {hw, op, wf, limit, 0, false, !strcmp(format, "json"), NULL};
    if (a.json) {
        a.arr = json_array();
        if (!a.arr) {
            rc = gs_cli_fail(ctx, gs_err(ctx, GS_ERR_NOMEM, "out of memory"));
            goto out;
        }
    } else {
        printf("op        %s\n", op->spec);
        printf("hw        %s (sm_%d, %d SMs, %.1f TFLOP/s fp32, %.0f GB/s)\n", hw->name, hw->sm, hw->num_sms,
               gs_hw_peak_flops(hw) / 1e12, hw->dram_gbs);
        printf("%8s  %12s  %8s %6s  %s\n", "index", "predicted_ms", "grid", "block", "config");
    }
    gs_space_enumerate(hw, op, 0, space_visit, &a, NULL);
    if (a.json) {
        json_t *root = json_pack("{s:s, s:s, s:I, s:b, s:o}", "op", op->spec, "hw", hw->name, "count",
                                 (json_int_t)a.n, "truncated", a.truncated, "configs", a.arr);
        char *txt = root ? json_dumps(root, JSON_INDENT(1)) : NULL;
        if (txt) puts(txt);
        else rc = gs_cli_fail(ctx, gs_err(ctx, GS_ERR_NOMEM, "out of memory writing JSON"));
        free(txt);
        json_decref(root);
    } else {
        printf("space     %ld configurations%s\n", a.n,
               a.truncated ? " listed; TRUNCATED at --limit, the space has more" : " (the whole space)");
    }
    if (a.n == 0 && !rc)
        fprintf(stderr, "gensor: note: %s has no valid configuration within %s's limits\n", op->spec, hw->name);
out:
    free(wf);
    gs_hw_destroy(hw);
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
    return rc;
}
