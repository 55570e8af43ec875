/* suite.c — `gensor suite FILE --hw NAME [--format text|csv|json] [--nvrtc]`:
 * construct every operator of a suite or model file and tabulate the results. */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *suite_help =
    "usage: gensor suite FILE [--hw NAME|FILE] [--format text|csv|json] [--nvrtc]\n"
    "                         [--strategy S] [--policy P] [--seed N] [--chains N]\n"
    "\n"
    "FILE is a JSON object {\"name\": ..., \"ops\": [{\"name\": ..., \"spec\": ..., \"count\": N}, ...]}\n"
    "(see experiments/suites/ and experiments/models/). Every operator is constructed for the profile;\n"
    "--nvrtc also compiles the chosen kernel for the profile's arch and reports registers and spills.\n"
    "Progress goes to stderr when it is a terminal.\n";

typedef struct row {
    const char *name, *spec;
    int64_t count;
    gs_status status;
    char err[256];
    char etir[200];
    int64_t grid, block;
    double pred_s, tflops, gbs, construct_ms;
    const char *bound;
    int regs, spills;  /* -1 when not compiled */
} row;

/* One CSV field, always quoted, with embedded quotes doubled (RFC 4180): names
 * and specs come from the suite file and may hold commas, quotes or newlines. */
static void csv_str(const char *x) {
    putchar('"');
    for (; x && *x; x++) {
        if (*x == '"') putchar('"');
        putchar(*x);
    }
    putchar('"');
}

static double bytes_moved(const gs_op *op) {
    double b = 0;
    for (int t = 0; t <= op->ninputs; t++) b += 4.0 * (double)gs_tensor_elems(&op->tensors[t]);
    return b;
}

int gs_cli_suite(int argc, char **argv) {
    const char *hwname = "rtx4090", *format = "text";
    bool nvrtc = false;
    gs_construct_opts co;
    gs_construct_opts_default(&co);
    co.top_k = 1;
    static const struct option lo[] = {
        {"hw", required_argument, 0, 'w'},     {"format", required_argument, 0, 'f'},
        {"nvrtc", no_argument, 0, 'n'},        {"strategy", required_argument, 0, 'S'},
        {"policy", required_argument, 0, 'p'}, {"seed", required_argument, 0, 's'},
        {"chains", required_argument, 0, 'c'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        char *end;
        long v;
        switch (c) {
        case 'w': hwname = optarg; break;
        case 'f':
            if (strcmp(optarg, "text") && strcmp(optarg, "csv") && strcmp(optarg, "json"))
                return gs_cli_usage_error("suite", "unknown --format '%s' (text, csv, json)", optarg);
            format = optarg;
            break;
        case 'n': nvrtc = true; break;
        case 'S':
            if (!strcmp(optarg, "markov")) co.strategy = GS_STRATEGY_MARKOV;
            else if (!strcmp(optarg, "tree")) co.strategy = GS_STRATEGY_TREE;
            else if (!strcmp(optarg, "exhaustive")) co.strategy = GS_STRATEGY_EXHAUSTIVE;
            else if (!strcmp(optarg, "random")) co.strategy = GS_STRATEGY_RANDOM;
            else return gs_cli_usage_error("suite", "unknown strategy '%s' (markov, tree, exhaustive, random)", optarg);
            break;
        case 'p':
            if (!strcmp(optarg, "paper")) co.policy = GS_POLICY_PAPER;
            else if (!strcmp(optarg, "balanced")) co.policy = GS_POLICY_BALANCED;
            else if (!strcmp(optarg, "model")) co.policy = GS_POLICY_MODEL;
            else return gs_cli_usage_error("suite", "unknown policy '%s' (paper, balanced, model)", optarg);
            break;
        case 's':
        case 'c':
            errno = 0;
            v = strtol(optarg, &end, 10);
            if (*end || !*optarg || errno || v < (c == 's' ? 0 : 1) || v > (c == 's' ? LONG_MAX : 4096))
                return gs_cli_usage_error("suite", "bad integer '%s'", optarg);
            if (c == 's') co.seed = (uint64_t)v;
            else co.chains = (int)v;
            break;
        case 'h': fputs(suite_help, stdout); return 0;
        case ':': return gs_cli_usage_error("suite", "option '%s' needs a value", argv[optind - 1]);
        default: return gs_cli_usage_error("suite", "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) return gs_cli_usage_error("suite", "missing the suite FILE%s", "");
    if (optind + 1 < argc) return gs_cli_usage_error("suite", "unexpected argument '%s'", argv[optind + 1]);
    const char *path = argv[optind];

    gs_ctx *ctx = gs_ctx_create();
    if (!ctx) return 1;
    int rc = 0;
    gs_hw *hw = NULL;
    json_t *root = NULL;
    row *rows = NULL;
    gs_status s = gs_hw_load(ctx, hwname, &hw);
    if (s != GS_OK) {
        rc = gs_cli_fail(ctx, s);
        goto out;
    }
    json_error_t je;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = gs_cli_fail(ctx, gs_err(ctx, GS_ERR_IO, "cannot read %s: Is a directory", path));
        goto out;
    }
    root = json_load_file(path, 0, &je);
    if (!root) {
        /* jansson reports a file it cannot open with line -1 */
        if (je.line < 0) rc = gs_cli_fail(ctx, gs_err(ctx, GS_ERR_IO, "%s", je.text));
        else
            rc = gs_cli_fail(ctx, gs_err(ctx, GS_ERR_JSON, "%s: line %d, column %d: %s", path, je.line, je.column,
                                         je.text));
        goto out;
    }
    json_t *ops = json_object_get(root, "ops");
    if (!json_is_array(ops) || json_array_size(ops) == 0) {
        rc = gs_cli_fail(ctx, gs_err(ctx, GS_ERR_JSON, "%s: expected a non-empty \"ops\" array", path));
        goto out;
    }
    size_t n = json_array_size(ops);
    rows = calloc(n, sizeof *rows);
    if (!rows) {
        rc = gs_cli_fail(ctx, gs_err(ctx, GS_ERR_NOMEM, "out of memory"));
        goto out;
    }
    /* validate the whole file before constructing anything */
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(ops, i);
        json_t *sp = json_object_get(o, "spec"), *nm = json_object_get(o, "name"), *ct = json_object_get(o, "count");
        if (!json_is_object(o) || !json_is_string(sp) || (nm && !json_is_string(nm)) || (ct && !json_is_integer(ct)) ||
            (ct && json_integer_value(ct) < 1)) {
            rc = gs_cli_fail(ctx, gs_err(ctx, GS_ERR_JSON,
                                         "%s: ops[%zu] must be an object with a string \"spec\", optional string "
                                         "\"name\" and integer \"count\" >= 1",
                                         path, i));
            goto out;
        }
        rows[i].spec = json_string_value(sp);
        rows[i].name = nm ? json_string_value(nm) : "";
        rows[i].count = ct ? json_integer_value(ct) : 1;
    }
    int arch = nvrtc && gs_nvrtc_available(ctx) ? gs_nvrtc_nearest_arch(ctx, hw->sm) : 0;
    if (nvrtc && !arch) {
        rc = gs_cli_fail(ctx, GS_ERR_NVRTC_MISSING);
        goto out;
    }
    if (arch && arch != hw->sm)
        fprintf(stderr, "gensor: note: %s is sm_%d, which the installed NVRTC does not support; compiling for sm_%d\n",
                hw->name, hw->sm, arch);
    bool tty = isatty(2);
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        row *w = &rows[i];
        w->regs = w->spills = -1;
        if (tty) fprintf(stderr, "\r[%zu/%zu] %-60.60s", i + 1, n, w->spec);
        gs_op op;
        gs_result *r = NULL;
        w->status = gs_op_parse_into(ctx, w->spec, &op);
        if (w->status == GS_OK) w->status = gs_construct(ctx, &op, hw, &co, &r);
        if (w->status == GS_OK && arch) {
            gs_kernel_src ks;
            gs_nvrtc_out nv;
            w->status = gs_lower_emit(ctx, hw, &op, &r->cand[0], GS_DIALECT_CUDA, arch, &ks);
            if (w->status == GS_OK) {
                w->status = gs_nvrtc_compile(ctx, ks.src, ks.name, arch, false, true, &nv);
                if (w->status == GS_OK) {
                    w->regs = nv.stats.registers;
                    w->spills = (int)(nv.stats.spill_store_bytes + nv.stats.spill_load_bytes);
                }
                gs_nvrtc_out_free(&nv);
                gs_kernel_src_free(&ks);
            }
        }
        if (w->status != GS_OK) {
            snprintf(w->err, sizeof w->err, "%s: %s", gs_status_str(w->status), gs_ctx_errmsg(ctx));
            failures++;
        } else {
            snprintf(w->etir, sizeof w->etir, "%s", r->desc[0]);
            w->grid = r->est[0].blocks;
            w->block = r->est[0].threads;
            w->pred_s = r->est[0].time_s;
            w->bound = r->est[0].bound;
            w->tflops = gs_op_flops(&op) / w->pred_s / 1e12;
            w->gbs = bytes_moved(&op) / w->pred_s / 1e9;
            w->construct_ms = r->construct_s * 1e3;
        }
        gs_result_destroy(r);
    }
    if (tty) fprintf(stderr, "\r%80s\r", "");

    double total = 0, cms_max = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].status == GS_OK) {
            total += rows[i].pred_s * (double)rows[i].count;
            if (rows[i].construct_ms > cms_max) cms_max = rows[i].construct_ms;
        }
    if (!strcmp(format, "json")) {
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++) {
            row *w = &rows[i];
            json_t *j = json_pack("{s:s, s:s, s:I}", "name", w->name, "spec", w->spec, "count", (json_int_t)w->count);
            if (w->status != GS_OK) json_object_set_new(j, "error", json_string(w->err));
            else {
                json_object_set_new(j, "etir", json_string(w->etir));
                json_object_set_new(j, "grid", json_integer(w->grid));
                json_object_set_new(j, "block", json_integer(w->block));
                json_object_set_new(j, "predicted_s", json_real(w->pred_s));
                json_object_set_new(j, "predicted_tflops", json_real(w->tflops));
                json_object_set_new(j, "predicted_gbs", json_real(w->gbs));
                json_object_set_new(j, "bound", json_string(w->bound));
                json_object_set_new(j, "construct_ms", json_real(w->construct_ms));
                if (w->regs >= 0) {
                    json_object_set_new(j, "registers", json_integer(w->regs));
                    json_object_set_new(j, "spill_bytes", json_integer(w->spills));
                }
            }
            json_array_append_new(arr, j);
        }
        json_t *o = json_pack("{s:s, s:s, s:o, s:f}", "suite", path, "hw", hw->name, "ops", arr, "total_predicted_s", total);
        char *txt = json_dumps(o, JSON_INDENT(2));
        if (txt) puts(txt);
        free(txt);
        json_decref(o);
    } else if (!strcmp(format, "csv")) {
        printf("name,spec,count,etir,grid,block,predicted_ms,tflops,gbs,bound,construct_ms,registers,spill_bytes,error\n");
        for (size_t i = 0; i < n; i++) {
            row *w = &rows[i];
            csv_str(w->name);
            putchar(',');
            csv_str(w->spec);
            printf(",%lld,", (long long)w->count);
            csv_str(w->etir);
            printf(",%lld,%lld,%.6f,%.4f,%.2f,%s,%.3f,%d,%d,", (long long)w->grid, (long long)w->block,
                   w->pred_s * 1e3, w->tflops, w->gbs, w->bound ? w->bound : "", w->construct_ms, w->regs, w->spills);
            csv_str(w->err);
            putchar('\n');
        }
    } else {
        printf("suite %s on %s (%zu operators)\n", path, hw->name, n);
        printf("%-16s %5s %-52s %8s %5s %11s %8s %8s %-7s %8s %5s %6s\n", "name", "count", "etir", "grid", "block",
               "predicted", "TFLOP/s", "GB/s", "bound", "ctor_ms", "regs", "spills");
        for (size_t i = 0; i < n; i++) {
            row *w = &rows[i];
            if (w->status != GS_OK) {
                printf("%-16.16s %5lld ERROR %s\n", w->name, (long long)w->count, w->err);
                continue;
            }
            char regs[16] = "-", sp[16] = "-";
            if (w->regs >= 0) {
                snprintf(regs, sizeof regs, "%d", w->regs);
                snprintf(sp, sizeof sp, "%d", w->spills);
            }
            printf("%-16.16s %5lld %-52.52s %8lld %5lld %8.4f ms %8.3f %8.1f %-7s %8.2f %5s %6s\n", w->name,
                   (long long)w->count, w->etir, (long long)w->grid, (long long)w->block, w->pred_s * 1e3, w->tflops,
                   w->gbs, w->bound, w->construct_ms, regs, sp);
        }
        printf("total predicted time (count-weighted): %.4f ms; max construction %.2f ms; %d failed\n", total * 1e3,
               cms_max, failures);
    }
    rc = failures ? 1 : 0;
out:
    free(rows);
    json_decref(root);
    gs_hw_destroy(hw);
    gs_ctx_destroy(ctx);
    return rc;
}
