/* suite.c — `gensor suite FILE --hw NAME [--format text|csv|json] [--nvrtc]`:
 * construct every operator of a suite or model file and tabulate the results. */
#include "cli/cli.h"

#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char suite_help[] =
    "usage: gensor suite FILE [--hw NAME|FILE] [--format text|csv|json] [--nvrtc]\n"
    "                         [--strategy S] [--policy P] [--seed N] [--chains N] [--threads N]\n"
    "                         [--max-ms MS]\n"
    "                         [--cache-dir DIR]\n"
    "\n"
    "FILE is a JSON object {\"name\": ..., \"ops\": [{\"name\": ..., \"spec\": ..., \"count\": N}, ...]}\n"
    "(see experiments/suites/ and experiments/models/). Every operator is constructed for the profile;\n"
    "--nvrtc also compiles the chosen kernel for the profile's arch and reports registers and spills.\n"
    "--cache-dir DIR (default $GS_CACHE_DIR) keeps NVRTC's output in a kernel cache and reuses it.\n"
    "--max-ms MS is the time budget of each exhaustive construction (0: none) [10000].\n"
    "Progress goes to stderr when it is a terminal. An operator that fails is an error row in the\n"
    "table and a line on stderr, and the exit status is 1.\n";

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
    bool capped;       /* exhaustive: the state cap or the time budget cut it short */
    int64_t estimated, pruned, violations; /* states priced, polish neighbours skipped; floors above prices */
    bool audit;        /* GS_AUDIT_FLOOR: violations counted */
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

typedef struct suite_opts {
    const char *hwname, *format, *path, *cache_dir;
    bool nvrtc, max_ms_set;
    gs_construct_opts co;
} suite_opts;

static const struct option suite_lo[] = {
    GS_CLI_OPT_HW,     GS_CLI_OPT_FORMAT, GS_CLI_OPT_NVRTC,  GS_CLI_OPT_STRATEGY,  GS_CLI_OPT_POLICY, GS_CLI_OPT_SEED,
    GS_CLI_OPT_CHAINS, GS_CLI_OPT_THREADS, GS_CLI_OPT_MAX_MS, GS_CLI_OPT_CACHE_DIR, GS_CLI_OPT_HELP, GS_CLI_OPT_END,
};
static const gs_cli_cmd suite_cmd = {"suite", suite_help, suite_lo, "unknown option or missing value '%s'",
                                     "missing the suite FILE%s", "unexpected argument '%s'"};

/* One option (gs_cli_opt_fn). */
static int suite_opt(int c, void *opts) {
    suite_opts *o = opts;
    long v;
    switch (c) {
    case 'w': o->hwname = optarg; break;
    case 'f': return gs_cli_format_opt("suite", optarg, true, &o->format) ? 2 : -1;
    case 'n': o->nvrtc = true; break;
    case 'D': o->cache_dir = optarg; break;
    case 'S': return gs_cli_strategy_opt("suite", optarg, &o->co.strategy) ? 2 : -1;
    case 'p': return gs_cli_policy_opt("suite", optarg, &o->co.policy) ? 2 : -1;
    case 's':
    case 'c':
    case 'j':
        if (!gs_cli_parse_long(optarg, c == 's' ? 0 : c == 'j' ? 0 : 1, c == 's' ? LONG_MAX : c == 'j' ? 64 : 4096, &v))
            return gs_cli_usage_error("suite", "bad integer '%s'", optarg);
        if (c == 's') o->co.seed = (uint64_t)v;
        else if (c == 'j') o->co.threads = (int)v;
        else o->co.chains = (int)v;
        break;
    case 'X':
        if (!gs_cli_parse_double(optarg, 0, 1e9, &o->co.max_ms))
            return gs_cli_usage_error("suite", "--max-ms expects a number of milliseconds in [0, 1e9], got '%s'",
                                      optarg);
        o->max_ms_set = true;
        break;
    }
    return -1;
}

/* The options and the FILE operand: -1 to go on, else an exit code. */
static int suite_parse_opts(int argc, char **argv, void *opts) {
    suite_opts *o = opts;
    memset(o, 0, sizeof *o);
    o->hwname = "rtx4090";
    o->format = "text";
    gs_construct_opts_default(&o->co);
    o->co.conv_form = GS_FORM_AUTO; /* a 1x1 conv may be kept as its matmul form: the kernels follow r->op */
    o->co.top_k = 1;
    int rc = gs_cli_getopt(&suite_cmd, argc, argv, suite_opt, o);
    if (rc >= 0) return rc;
    if (!o->max_ms_set && o->co.strategy == GS_STRATEGY_EXHAUSTIVE) o->co.max_ms = GS_CLI_EXHAUSTIVE_MS;
    return gs_cli_operand(&suite_cmd, argc, argv, &o->path);
}

/* Load the suite file and check every entry before constructing anything:
 * one row per operator, pointing into *root. */
static gs_status suite_load(gs_ctx *ctx, const char *path, json_t **root, row **rows, size_t *n) {
    json_error_t je;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return gs_err(ctx, GS_ERR_IO, "cannot read %s: Is a directory", path);
    *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!*root) {
        /* jansson reports a file it cannot open with line -1 */
        if (je.line < 0) return gs_err(ctx, GS_ERR_IO, "%s", je.text);
        return gs_err(ctx, GS_ERR_JSON, "%s: line %d, column %d: %s", path, je.line, je.column, je.text);
    }
    json_t *ops = json_object_get(*root, "ops");
    if (!json_is_array(ops) || json_array_size(ops) == 0)
        return gs_err(ctx, GS_ERR_JSON, "%s: expected a non-empty \"ops\" array", path);
    *n = json_array_size(ops);
    *rows = calloc(*n, sizeof **rows);
    if (!*rows) return gs_err(ctx, GS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < *n; i++) {
        json_t *o = json_array_get(ops, i);
        json_t *sp = json_object_get(o, "spec"), *nm = json_object_get(o, "name"), *ct = json_object_get(o, "count");
        if (!json_is_object(o) || !json_is_string(sp) || (nm && !json_is_string(nm)) || (ct && !json_is_integer(ct)) ||
            (ct && json_integer_value(ct) < 1))
            return gs_err(ctx, GS_ERR_JSON,
                          "%s: ops[%zu] must be an object with a string \"spec\", optional string \"name\" and integer "
                          "\"count\" >= 1",
                          path, i);
        (*rows)[i].spec = json_string_value(sp);
        (*rows)[i].name = nm ? json_string_value(nm) : "";
        (*rows)[i].count = ct ? json_integer_value(ct) : 1;
    }
    return GS_OK;
}

/* Construct one operator (and compile its pick when ARCH is set) into *w;
 * a failure is recorded in the row, not returned. */
static void suite_row(gs_ctx *ctx, gs_kcache *kc, const gs_hw *hw, const gs_construct_opts *co, int arch, row *w) {
    w->regs = w->spills = -1;
    gs_op op;
    gs_result *r = NULL;
    w->status = gs_op_parse_into(ctx, w->spec, &op);
    if (w->status == GS_OK) w->status = gs_construct(ctx, &op, hw, co, &r);
    if (w->status == GS_OK && arch) {
        gs_kernel_src ks;
        gs_nvrtc_out nv;
        w->status = gs_lower_emit(ctx, hw, &r->op, &r->cand[0], GS_DIALECT_CUDA, arch, &ks);
        if (w->status == GS_OK) {
            w->status = gs_nvrtc_compile_cached(ctx, kc, ks.src, ks.name, arch, false, true, &nv, NULL);
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
    } else {
        snprintf(w->etir, sizeof w->etir, "%s", r->desc[0]);
        w->grid = r->est[0].blocks;
        w->block = r->est[0].threads;
        w->pred_s = r->est[0].time_s;
        w->bound = r->est[0].bound;
        w->tflops = gs_op_flops(&op) / w->pred_s / 1e12;
        w->gbs = bytes_moved(&op) / w->pred_s / 1e9;
        w->construct_ms = r->construct_s * 1e3;
        w->capped = r->capped;
        w->estimated = r->evaluated;
        w->pruned = r->pruned;
        w->audit = r->floor_audit;
        w->violations = r->floor_violations;
    }
    gs_result_destroy(r);
}

static bool suite_print_json(const char *path, const gs_hw *hw, const row *rows, size_t n, double total) {
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const row *w = &rows[i];
        json_t *j = json_pack("{s:s, s:s, s:I}", "name", w->name, "spec", w->spec, "count", (json_int_t)w->count);
        if (w->status != GS_OK) json_object_set_new(j, "error", json_string(w->err));
        else if (json_object_update_new(j, json_pack("{s:s, s:I, s:I, s:f, s:f, s:f, s:s, s:f}", "etir", w->etir, "grid",
                                                     (json_int_t)w->grid, "block", (json_int_t)w->block, "predicted_s",
                                                     w->pred_s, "predicted_tflops", w->tflops, "predicted_gbs", w->gbs,
                                                     "bound", w->bound, "construct_ms", w->construct_ms))) {
            json_decref(j);
            continue;
        }
        if (w->status == GS_OK && w->regs >= 0)
            json_object_update_new(j, json_pack("{s:i, s:i}", "registers", w->regs, "spill_bytes", w->spills));
        if (w->capped) json_object_set_new(j, "capped", json_true());
        if (w->status == GS_OK)
            json_object_update_new(j, json_pack("{s:I, s:I}", "states_estimated", (json_int_t)w->estimated,
                                                "states_pruned", (json_int_t)w->pruned));
        if (w->status == GS_OK && w->audit) json_object_set_new(j, "floor_violations", json_integer(w->violations));
        json_array_append_new(arr, j);
    }
    /* a row jansson could not encode (inf, NaN) must not vanish silently */
    if (json_array_size(arr) != n) {
        json_decref(arr);
        arr = NULL;
    }
    return gs_cli_put_json(arr ? json_pack("{s:s, s:s, s:o, s:f}", "suite", path, "hw", hw->name, "ops", arr,
                                           "total_predicted_s", total)
                               : NULL,
                           JSON_INDENT(2));
}

static void suite_print_csv(const row *rows, size_t n) {
    printf("name,spec,count,etir,grid,block,predicted_ms,tflops,gbs,bound,construct_ms,registers,spill_bytes,error\n");
    for (size_t i = 0; i < n; i++) {
        const row *w = &rows[i];
        csv_str(w->name);
        putchar(',');
        csv_str(w->spec);
        printf(",%lld,", (long long)w->count);
        csv_str(w->etir);
        printf(",%lld,%lld,%.6f,%.4f,%.2f,%s,%.3f,%d,%d,", (long long)w->grid, (long long)w->block, w->pred_s * 1e3,
               w->tflops, w->gbs, w->bound ? w->bound : "", w->construct_ms, w->regs, w->spills);
        csv_str(w->err);
        putchar('\n');
    }
}

static void suite_print_text(const char *path, const gs_hw *hw, const row *rows, size_t n, double total,
                             double cms_max, int failures) {
    printf("suite %s on %s (%zu operators)\n", path, hw->name, n);
    printf("%-16s %5s %-52s %8s %5s %11s %8s %8s %-7s %8s %5s %6s\n", "name", "count", "etir", "grid", "block",
           "predicted", "TFLOP/s", "GB/s", "bound", "ctor_ms", "regs", "spills");
    for (size_t i = 0; i < n; i++) {
        const row *w = &rows[i];
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
    int capped = 0;
    for (size_t i = 0; i < n; i++) capped += rows[i].status == GS_OK && rows[i].capped;
    if (capped)
        printf("note: %d exhaustive constructions hit their cap (states or --max-ms time budget); their optimum may "
               "be missed\n",
               capped);
}

/* The profile and the whole file, checked first; then every operator
 * constructed (with progress on a terminal) and the table printed. */
static int suite_run(gs_ctx *ctx, const void *opts) {
    const suite_opts *o = opts;
    int rc = 0;
    gs_hw *hw = NULL;
    json_t *root = NULL;
    row *rows = NULL;
    size_t n = 0;
    /* the profile, then the whole file, checked before any construction */
    gs_kcache *kc = NULL;
    gs_status s = gs_hw_load(ctx, o->hwname, &hw);
    if (s == GS_OK) s = suite_load(ctx, o->path, &root, &rows, &n);
    if (s == GS_OK) s = gs_cli_cache_open(ctx, o->cache_dir, &kc);
    if (s != GS_OK) {
        rc = gs_cli_fail(ctx, s);
        goto out;
    }
    /* --nvrtc: the nearest arch the installed NVRTC supports */
    int arch = o->nvrtc && gs_nvrtc_available(ctx) ? gs_nvrtc_nearest_arch(ctx, hw->sm) : 0;
    if (o->nvrtc && !arch) {
        rc = gs_cli_fail(ctx, GS_ERR_NVRTC_MISSING);
        goto out;
    }
    if (arch && arch != hw->sm)
        fprintf(stderr, "gensor: note: %s is sm_%d, which the installed NVRTC does not support; compiling for sm_%d\n",
                hw->name, hw->sm, arch);
    /* construct every operator, with progress on a terminal */
    bool tty = isatty(2);
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        if (tty) fprintf(stderr, "\r[%zu/%zu] %-60.60s", i + 1, n, rows[i].spec);
        suite_row(ctx, kc, hw, &o->co, arch, &rows[i]);
        if (rows[i].status != GS_OK) failures++;
    }
    if (tty) fprintf(stderr, "\r%80s\r", "");
    /* the count-weighted total and the slowest construction */
    double total = 0, cms_max = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].status == GS_OK) {
            total += rows[i].pred_s * (double)rows[i].count;
            if (rows[i].construct_ms > cms_max) cms_max = rows[i].construct_ms;
        }
    if (!strcmp(o->format, "csv")) suite_print_csv(rows, n);
    else if (strcmp(o->format, "json")) suite_print_text(o->path, hw, rows, n, total, cms_max, failures);
    rc = failures ? 1 : 0;
    /* the table's error rows, one line each on stderr too: exit 1 is never silent */
    for (size_t i = 0; i < n; i++)
        if (rows[i].status != GS_OK) {
            char line[1024];
            snprintf(line, sizeof line, "operator '%s' (%s): %s", rows[i].name, rows[i].spec, rows[i].err);
            gs_cli_error_line("gensor suite: error: ", line);
        }
    if (!strcmp(o->format, "json") && !suite_print_json(o->path, hw, rows, n, total)) rc = 1;
out:
    gs_cli_cache_close(kc);
    free(rows);
    json_decref(root);
    gs_hw_destroy(hw);
    return rc;
}

const gs_cli_sub gs_cli_suite = {"suite", sizeof(suite_opts), suite_parse_opts, suite_run};
